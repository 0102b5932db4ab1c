package mcpserver

import (
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/parselbox/parselbox/host"
)

// Name is the server name announced to MCP clients. The mcpproxy bridge
// recognizes a Parselbox by it (and skips it), so it never changes.
const Name = "Parselbox"

// ProbeEnv is set in the environment of every stdio MCP server that a
// Parselbox starts. A parselbox server that finds it set was started by
// another Parselbox, from an MCP configuration that also lists that
// Parselbox: it exits at once instead of serving itself to itself.
const ProbeEnv = host.MCPProbeEnv

// Defaults for the zero values of Options.
const (
	DefaultMaxOutputTokens = 10000
	DefaultIdleTimeout     = 30 * time.Minute
	DefaultMaxSessions     = 8
	DefaultPoolSize        = 1
	DefaultApprovalTimeout = 5 * time.Minute
)

// MaxRequestBytes bounds the body of one HTTP request; a larger one gets
// 413 Request Entity Too Large.
const MaxRequestBytes = 4 << 20

// Options configure a Server, and the tool of ServeMCP and NewTool.
//
// Zero values mean the defaults. Where a limit can be turned off, a negative
// value does it.
type Options struct {
	// Config configures every sandbox the server starts. A nil
	// Config.Logger means Logger.
	Config host.Config
	// Logger receives the server's logs; nil discards them. In stdio mode
	// it must not write to stdout, which carries the protocol.
	Logger hclog.Logger
	// Version is the server version announced to clients.
	Version string

	// MaxOutputTokens is the budget of one result, estimated as a quarter
	// of its JSON size. A larger value is replaced by its sbx.preview()
	// with a note. Negative: no budget. Zero: DefaultMaxOutputTokens.
	MaxOutputTokens int
	// NoUI withholds the HTML of display() from results.
	NoUI bool
	// Elicit asks the MCP client to approve every tool call the sandbox
	// makes (MCP elicitation). With a client that cannot elicit, it has no
	// effect (and the log says so).
	Elicit bool
	// ApprovalTimeout bounds the wait for an answer to one approval
	// request; no answer in time is a refusal. Zero: DefaultApprovalTimeout.
	ApprovalTimeout time.Duration

	// AuthToken, if set, is the bearer token that every HTTP request must
	// carry. RunHTTP refuses to listen on an address other than loopback
	// without one.
	AuthToken string
	// IdleTimeout closes an HTTP session, and its sandbox, after this long
	// without a request. Negative: never. Zero: DefaultIdleTimeout.
	IdleTimeout time.Duration
	// MaxSessions bounds the sessions (each with its own sandbox) open at
	// once; a new session beyond it is refused with an error. Negative: no
	// limit. Zero: DefaultMaxSessions.
	MaxSessions int
	// PoolSize is how many sandboxes HTTP serving keeps booted ahead, so
	// that a new session does not wait for a boot. Negative: none. Zero:
	// DefaultPoolSize.
	PoolSize int
}

// resolved returns o with the defaults filled in and the switched-off
// limits at zero.
func (o Options) resolved() Options {
	if o.Logger == nil {
		o.Logger = hclog.NewNullLogger()
	}
	if o.Config.Logger == nil {
		o.Config.Logger = o.Logger
	}
	o.MaxOutputTokens = orDefault(o.MaxOutputTokens, DefaultMaxOutputTokens)
	o.MaxSessions = orDefault(o.MaxSessions, DefaultMaxSessions)
	o.PoolSize = orDefault(o.PoolSize, DefaultPoolSize)
	o.IdleTimeout = orDefault(o.IdleTimeout, DefaultIdleTimeout)
	o.ApprovalTimeout = orDefault(o.ApprovalTimeout, DefaultApprovalTimeout)
	return o
}

// orDefault maps zero to def and negative values to zero (off).
func orDefault[T int | time.Duration](v, def T) T {
	switch {
	case v == 0:
		return def
	case v < 0:
		return 0
	}
	return v
}
