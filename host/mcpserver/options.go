package mcpserver

import (
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/parselbox/parselbox/host"
	"github.com/parselbox/parselbox/host/metrics"
	"github.com/parselbox/parselbox/host/ui"
)

// Name is the server name announced to MCP clients. The mcpproxy bridge
// recognizes a Parselbox by it (and skips it), so it never changes.
const Name = "Parselbox"

// ProbeEnv is set in the environment of every stdio MCP server that a
// Parselbox starts. A parselbox server that finds it set was started by
// another Parselbox, from an MCP configuration that also lists that
// Parselbox: it exits at once instead of serving itself to itself.
const ProbeEnv = host.MCPProbeEnv

// MaxRequestBytes bounds the body of one HTTP request; a larger one gets
// 413 Request Entity Too Large.
const MaxRequestBytes = 4 << 20

// MinTokenLength is the shortest bearer token Settings.AuthToken accepts,
// after surrounding spaces are trimmed.
const MinTokenLength = 16

// Settings are the MCP server's own settings: the server block of a
// configuration file, the flags of `parselbox` that mirror it, and the Go
// API, all one struct with one meaning of zero: zero turns a limit off (no
// idle timeout, no session limit, no pool, no token budget, no result cap,
// approvals wait as long as the execution). DefaultSettings holds the
// defaults; a file or the command line starts from them.
//
// A new setting is a field with its koanf tag (and a want tag completing
// "must be ..." when a value of the wrong type deserves more than "must be
// a string"), its rule in Validate, a flag in cmd/parselbox and an entry in
// parselbox.hcl.example.
type Settings struct {
	// Transport is "stdio" or "http" (MCP's streamable HTTP at /mcp). A
	// file or flag may write it in any case. It tells cmd/parselbox how to
	// serve; Server serves whichever it is asked to.
	Transport string `koanf:"transport" want:"\"stdio\" or \"http\""`
	// Host is the address the http transport listens on.
	Host string `koanf:"host"`
	// Port is the port the http transport listens on; 0 picks a free one.
	Port int `koanf:"port" want:"a port number from 0 to 65535"`
	// AuthToken is the bearer token every HTTP request must carry: at least
	// MinTokenLength characters once surrounding spaces are trimmed. Empty:
	// none, which only a loopback address allows.
	AuthToken string `koanf:"auth_token"`
	// IdleTimeout closes an HTTP session, and its sandbox, after this long
	// without a request; 0 never does.
	IdleTimeout time.Duration `koanf:"idle_timeout" want:"a number of seconds or a duration such as \"30m\" (0: never)"`
	// MaxSessions bounds the HTTP sessions (each with its own sandbox) open
	// at once; a new session beyond it is refused with an error. 0: no
	// limit.
	MaxSessions int `koanf:"max_sessions" want:"a whole number, 0 or more"`
	// PoolSize is how many sandboxes HTTP serving keeps booted ahead, so
	// that a new session does not wait for a boot; 0 keeps none.
	PoolSize int `koanf:"pool_size" want:"a whole number, 0 or more"`
	// MaxOutputTokens is the budget of one result, estimated as a quarter
	// of its JSON size: a larger value is replaced by its sbx.preview()
	// with a note. 0: no budget.
	MaxOutputTokens int `koanf:"max_output_tokens" want:"a whole number, 0 or more"`
	// MaxResultMB caps the size of one execution's result (its value, and
	// the HTML of display()) that the server handles at all, in MiB: a
	// larger one is an error that says so, before any copy of it is made.
	// 0: no cap.
	MaxResultMB int `koanf:"max_result_mb" want:"a whole number of MiB, 0 or more"`
	// Elicit asks the MCP client to approve every tool call the sandbox
	// makes (MCP elicitation). With a client that cannot elicit, it has no
	// effect (and the log says so).
	Elicit bool `koanf:"elicit"`
	// ApprovalTimeout bounds the wait for an answer to one approval
	// request; no answer in time is a refusal. 0: no bound of its own (the
	// execution's timeout still applies).
	ApprovalTimeout time.Duration `koanf:"approval_timeout" want:"a number of seconds or a duration such as \"5m\" (0: no limit)"`
	// NoUI withholds the HTML of display() from results.
	NoUI bool `koanf:"no_ui"`
	// StreamOutput sends what the code prints, while it runs, as MCP log
	// notifications (logger "stdout" or "stderr", level info) to a client
	// that set a log level; the result still holds all of it.
	StreamOutput bool `koanf:"stream_output"`
	// DrainTimeout bounds a drain (SIGTERM to `parselbox`, or
	// Server.Drain): the host takes no new session and waits this long at
	// most for the open ones to close before it closes them. 0: no wait.
	DrainTimeout time.Duration `koanf:"drain_timeout" want:"a number of seconds or a duration such as \"2m\" (0: do not wait)"`
	// MetricsAddress, if set, serves /metrics on this "host:port" of its
	// own instead of next to /mcp (/healthz and /readyz stay next to
	// /mcp). None of them needs the token.
	MetricsAddress string `koanf:"metrics_address"`
}

// DefaultSettings are the settings a file and the command line start
// from, and that a nil *Settings means.
func DefaultSettings() Settings {
	return Settings{
		Transport:       "stdio",
		Host:            "127.0.0.1",
		Port:            9000,
		IdleTimeout:     30 * time.Minute,
		MaxSessions:     8,
		PoolSize:        1,
		MaxOutputTokens: 10000,
		MaxResultMB:     64,
		ApprovalTimeout: 5 * time.Minute,
		DrainTimeout:    2 * time.Minute,
	}
}

// Validate checks the settings; it is their only check (New calls it, and
// package host/config calls it to place each problem in the file). Problems
// come back as *host.KeyError values, joined, with the keys of the file's
// server block: `server.port`.
func (s *Settings) Validate() error {
	var errs []error
	bad := func(key, format string, args ...any) {
		errs = append(errs, &host.KeyError{Key: key, Message: fmt.Sprintf(format, args...)})
	}
	if t := strings.ToLower(s.Transport); t != "stdio" && t != "http" {
		bad("server.transport", `must be "stdio" or "http", got %q`, s.Transport)
	}
	if s.Host == "" {
		bad("server.host", "must not be empty")
	}
	if s.Port < 0 || s.Port > 65535 {
		bad("server.port", "must be a port number from 0 to 65535, got %d", s.Port)
	}
	token := strings.TrimSpace(s.AuthToken)
	switch {
	case s.AuthToken != "" && len(token) < MinTokenLength:
		bad("server.auth_token", "must be at least %d characters (surrounding spaces are not counted), got %d: "+
			"use a long random token, such as the output of `openssl rand -hex 32`", MinTokenLength, len(token))
	case token == "" && strings.EqualFold(s.Transport, "http") && s.Host != "" && !IsLoopback(s.Host):
		bad("server.host", "%s listens beyond this machine: set --auth-token, $%s or the file's auth_token "+
			"so that only your clients get in", s.Host, AuthTokenEnv)
	}
	if s.IdleTimeout < 0 {
		bad("server.idle_timeout", "must be 0 (never) or more, got %v", s.IdleTimeout)
	}
	if s.DrainTimeout < 0 {
		bad("server.drain_timeout", "must be 0 (do not wait) or more, got %v", s.DrainTimeout)
	}
	if a := s.MetricsAddress; a != "" {
		if _, port, err := net.SplitHostPort(a); err != nil || port == "" {
			bad("server.metrics_address", `must be "host:port" (such as "0.0.0.0:9090"), got %q`, a)
		}
	}
	if s.ApprovalTimeout < 0 {
		bad("server.approval_timeout", "must be 0 (no limit) or more, got %v", s.ApprovalTimeout)
	}
	for _, c := range []struct {
		key string
		v   int
	}{{"max_sessions", s.MaxSessions}, {"pool_size", s.PoolSize}, {"max_output_tokens", s.MaxOutputTokens}} {
		if c.v < 0 {
			bad("server."+c.key, "must be a whole number, 0 or more, got %d", c.v)
		}
	}
	if s.MaxResultMB < 0 || s.MaxResultMB > maxResultMB {
		bad("server.max_result_mb", "must be a whole number of MiB, 0 or more, up to %d, got %d", maxResultMB, s.MaxResultMB)
	}
	return errors.Join(errs...)
}

// maxResultMB is the largest cap: a result beyond it could not reach a
// client in one JSON-RPC message anyway.
const maxResultMB = 1 << 20

// AuthTokenEnv holds the HTTP bearer token for cmd/parselbox, so that it
// need not be on the command line.
const AuthTokenEnv = "PARSELBOX_AUTH_TOKEN"

// Options configure a Server, and the tool of ServeMCP and NewTool.
type Options struct {
	// Config configures every sandbox the server starts. A nil
	// Config.Logger means Logger.
	Config host.Config
	// Settings are the server's own; nil means DefaultSettings(). In a
	// Settings value, zero turns a limit off.
	Settings *Settings
	// Logger receives the server's logs; nil discards them. In stdio mode
	// it must not write to stdout, which carries the protocol.
	Logger hclog.Logger
	// Version is the server version announced to clients.
	Version string

	renderer *ui.Renderer // the MCP Apps renderer; nil with UI off
	// Metrics receives the server's counts, served at /metrics by RunHTTP;
	// nil: the server makes its own. It is also Config.Observer unless
	// that is set.
	Metrics *metrics.Metrics
}

// resolved returns a copy of o (of the zero Options when o is nil) with
// its defaults filled in and the token trimmed.
func (opts *Options) resolved() Options {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Logger == nil {
		o.Logger = hclog.NewNullLogger()
	}
	if o.Config.Logger == nil {
		o.Config.Logger = o.Logger
	}
	if o.Metrics == nil {
		o.Metrics = metrics.New()
	}
	if o.Config.Observer == nil {
		o.Config.Observer = o.Metrics
	}
	s := DefaultSettings()
	if o.Settings != nil {
		s = *o.Settings
	}
	s.Transport = strings.ToLower(s.Transport)
	s.AuthToken = strings.TrimSpace(s.AuthToken)
	o.Settings = &s
	return o
}
