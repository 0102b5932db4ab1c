package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"

	"github.com/hashicorp/go-hclog"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/parselbox/parselbox/host"
	"github.com/parselbox/parselbox/host/mcpserver"
)

// authTokenEnv holds the HTTP bearer token, so that it need not be on the
// command line.
const authTokenEnv = "PARSELBOX_AUTH_TOKEN"

// serveFlags are the flags of the MCP server: the sandbox's, and the
// server's own, which mirror the file's server block.
type serveFlags struct {
	*sandboxFlags
	s serverSettings
}

// defaultServer holds the defaults of the server settings.
var defaultServer = serverSettings{
	Transport:       "stdio",
	Host:            "127.0.0.1",
	Port:            9000,
	IdleTimeout:     mcpserver.DefaultIdleTimeout,
	MaxSessions:     mcpserver.DefaultMaxSessions,
	PoolSize:        mcpserver.DefaultPoolSize,
	MaxOutputTokens: mcpserver.DefaultMaxOutputTokens,
}

func newServeFlags(fs *flag.FlagSet) *serveFlags {
	f := &serveFlags{sandboxFlags: newSandboxFlags(fs)}
	d := defaultServer
	fs.StringVar(&f.s.Transport, "transport", d.Transport, "MCP `transport`: stdio or http (streamable HTTP at /mcp)")
	fs.StringVar(&f.s.Host, "host", d.Host, "`address` to listen on with --transport http; beyond loopback it needs --auth-token")
	fs.IntVar(&f.s.Port, "port", d.Port, "`port` to listen on with --transport http (0: any free port)")
	fs.StringVar(&f.s.AuthToken, "auth-token", "", "bearer `token` every HTTP request must carry (default: $"+authTokenEnv+")")
	fs.DurationVar(&f.s.IdleTimeout, "idle-timeout", d.IdleTimeout, "close an HTTP session and its sandbox after this long without a request (0: never)")
	fs.IntVar(&f.s.MaxSessions, "max-sessions", d.MaxSessions, "most HTTP sessions open at once, each with its own sandbox (0: no limit)")
	fs.IntVar(&f.s.PoolSize, "pool-size", d.PoolSize, "sandboxes kept booted ahead for new HTTP sessions (0: none)")
	fs.IntVar(&f.s.MaxOutputTokens, "max-output-tokens", d.MaxOutputTokens, "replace a result estimated above this many tokens by its sbx.preview() (0: no limit)")
	fs.BoolVar(&f.s.Elicit, "elicit", false, "ask the MCP client to approve every tool call the sandbox makes")
	fs.BoolVar(&f.s.NoUI, "no-ui", false, "leave the HTML of display() out of results")
	return f
}

// settings loads the configuration file, whose server block sets the
// server's options, then applies $PARSELBOX_AUTH_TOKEN and the flags given.
func (f *serveFlags) settings() (*host.Config, serverSettings, error) {
	s := defaultServer
	file, err := f.load()
	if err != nil {
		return nil, s, err
	}
	cfg := file.Config
	s.merge(file.Server)
	if tok := os.Getenv(authTokenEnv); tok != "" {
		s.AuthToken = tok
	}
	f.fs.Visit(func(fl *flag.Flag) {
		switch fl.Name {
		case "transport":
			s.Transport = f.s.Transport
		case "host":
			s.Host = f.s.Host
		case "port":
			s.Port = f.s.Port
		case "auth-token":
			s.AuthToken = f.s.AuthToken
		case "idle-timeout":
			s.IdleTimeout = f.s.IdleTimeout
		case "max-sessions":
			s.MaxSessions = f.s.MaxSessions
		case "pool-size":
			s.PoolSize = f.s.PoolSize
		case "max-output-tokens":
			s.MaxOutputTokens = f.s.MaxOutputTokens
		case "elicit":
			s.Elicit = f.s.Elicit
		case "no-ui":
			s.NoUI = f.s.NoUI
		}
	})
	s.Transport = strings.ToLower(s.Transport)
	switch {
	case s.Transport != "stdio" && s.Transport != "http":
		err = fmt.Errorf("--transport: want stdio or http, got %q", s.Transport)
	case s.Port < 0 || s.Port > 65535:
		err = fmt.Errorf("--port: want 0 to 65535, got %d", s.Port)
	case s.Host == "":
		err = errors.New("--host: must not be empty")
	case s.IdleTimeout < 0 || s.MaxSessions < 0 || s.PoolSize < 0 || s.MaxOutputTokens < 0:
		err = errors.New("--idle-timeout, --max-sessions, --pool-size and --max-output-tokens take 0 or more")
	case s.Transport == "http" && s.AuthToken == "" && !mcpserver.IsLoopback(s.Host):
		err = fmt.Errorf("--host %s listens beyond this machine: set --auth-token (or $%s) so that only your clients get in", s.Host, authTokenEnv)
	}
	return cfg, s, err
}

// options are the mcpserver options for these settings: 0 turns a limit
// off on the command line; the mcpserver API says it with -1.
func (s serverSettings) options(cfg *host.Config, log hclog.Logger) mcpserver.Options {
	off := func(v int) int {
		if v == 0 {
			return -1
		}
		return v
	}
	idle := s.IdleTimeout
	if idle == 0 {
		idle = -1
	}
	return mcpserver.Options{
		Config:          *cfg,
		Logger:          log,
		Version:         version,
		MaxOutputTokens: off(s.MaxOutputTokens),
		NoUI:            s.NoUI,
		Elicit:          s.Elicit,
		AuthToken:       s.AuthToken,
		IdleTimeout:     idle,
		MaxSessions:     off(s.MaxSessions),
		PoolSize:        off(s.PoolSize),
	}
}

// runServe is the root command: the MCP server.
func runServe(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if os.Getenv(mcpserver.ProbeEnv) != "" {
		// Started by a Parselbox's mcpproxy bridge from an MCP configuration
		// that lists this Parselbox too: do not serve ourselves to
		// ourselves.
		return exitOK
	}
	fs := flag.NewFlagSet("parselbox", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		usage(stderr)
		fmt.Fprint(stderr, "\nFlags of the MCP server (parselbox [flags]):\n")
		fs.PrintDefaults()
	}
	flags := newServeFlags(fs)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		return exitUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "parselbox: unexpected argument %q\n", fs.Arg(0))
		fs.Usage()
		return exitUsage
	}
	cfg, s, err := flags.settings()
	if err != nil {
		fmt.Fprintln(stderr, "parselbox:", err)
		return exitUsage
	}
	log := newLogger(stderr, flags.verbose)
	if !flags.verbose && os.Getenv("PARSELBOX_LOG_LEVEL") == "" {
		log.SetLevel(hclog.Info) // say where MCP is served
	}
	cfg.Logger = log
	srv, err := mcpserver.New(s.options(cfg, log))
	if err != nil {
		fmt.Fprintln(stderr, "parselbox:", err)
		return exitUsage
	}
	defer srv.Close()

	switch s.Transport {
	case "http":
		ln, lerr := net.Listen("tcp", net.JoinHostPort(s.Host, strconv.Itoa(s.Port)))
		if lerr != nil {
			fmt.Fprintln(stderr, "parselbox:", lerr)
			return exitInternal
		}
		err = srv.RunHTTP(ctx, ln)
	default:
		log.Info("MCP available via stdio")
		err = srv.Run(ctx, &mcp.IOTransport{Reader: io.NopCloser(stdin), Writer: nopCloser{stdout}})
	}
	switch {
	case err == nil, errors.Is(err, context.Canceled):
		return exitOK
	case errors.Is(err, mcpserver.ErrNeedToken), isConfigError(err):
		fmt.Fprintln(stderr, "parselbox:", err)
		return exitUsage
	default:
		fmt.Fprintln(stderr, "parselbox:", err)
		return exitInternal
	}
}

// nopCloser keeps stdout open when the MCP connection closes.
type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }
