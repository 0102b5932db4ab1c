package host

import (
	"cmp"
	"context"
	"encoding/json"

	"github.com/parselbox/parselbox/host/serve"
	"github.com/parselbox/parselbox/host/ui"
)

// ServeConfig serves the workspace as a web app (package host/serve): the
// serve block of a configuration file, --serve on the command line.
type ServeConfig struct {
	// Addr is host:port to listen on; default 127.0.0.1:8000. Port 0 picks
	// a free one. With the MCP server's HTTP transport, each session's
	// sandbox takes this port if free, else the next free one.
	Addr string `koanf:"addr"`
	// Token is required of every request when Addr is beyond loopback (at
	// least 16 characters); on loopback, pages of other origins need it.
	// The MCP server's HTTP transport gives each session's app beyond
	// loopback a random token of its own instead (in the app link of the
	// session's results).
	Token string `koanf:"token"`
	// MaxUploadMB bounds one upload (POST /_upload) and one /api body, in
	// MiB; 0: 32.
	MaxUploadMB int `koanf:"max_upload_mb" want:"a whole number of MiB, 0 or more"`
	// PortTries: when Addr's port is taken, the next ports are tried, this
	// many in all (0 or 1: Addr's only). The MCP server's HTTP transport
	// sets it, so that each session's sandbox serves on a port of its own,
	// from Addr's up.
	PortTries int `koanf:"-"`
}

// check validates the serve block.
func (c *ServeConfig) check(v *validation) {
	if err := serve.Validate(cmp.Or(c.Addr, serve.DefaultAddr), c.Token); err != nil {
		v.bad("serve.addr", "%v", err)
	} else if c.MaxUploadMB < 0 {
		v.bad("serve.max_upload_mb", "must be 0 or more, got %d", c.MaxUploadMB)
	}
}

// startServe serves the workspace when the configuration asks for it.
func (s *Sandbox) startServe(workspace, files string) error {
	c := s.cfg.Serve
	if c == nil {
		return nil
	}
	assets, err := ui.Load(s.runtimeDir)
	if err != nil {
		s.log.Warn("served pages get no Tailwind/daisyUI", "error", err)
	}
	srv, err := serve.Listen(serve.Options{
		Addr: c.Addr, Token: c.Token, Workspace: workspace, Files: files,
		MaxUpload: int64(c.MaxUploadMB) << 20, PortTries: c.PortTries, API: s, Assets: assets, Logger: s.log,
	})
	if err != nil {
		return &ConfigError{&KeyError{Key: "serve.addr", Message: err.Error()}}
	}
	s.serve = srv
	s.closers = append(s.closers, srv.Close)
	return nil
}

// ServeURL is where the workspace is served as a web app, "" when it is not.
func (s *Sandbox) ServeURL() string {
	if s.serve == nil {
		return ""
	}
	return s.serve.URL()
}

// ServeOrigins are the origins of the served app (for a CSP), nil when
// nothing is served.
func (s *Sandbox) ServeOrigins() []string {
	if s.serve == nil {
		return nil
	}
	return s.serve.Origins()
}

// API runs an @api handler (or lists the routes) in the sandbox: the
// sandbox protocol's api method, not an execution. It runs beside the
// execution running (if any), with the execution timeout of its own; it
// is neither counted nor audited as an execution, but the hooks and the
// audit trail see the tool calls it makes (while an execution runs, as
// that execution's: which task made a call is the guest's word, which
// the router does not take). The files the handler writes
// are reported by the execution running or by the next one.
func (s *Sandbox) API(ctx context.Context, req *serve.Request) (int, json.RawMessage, error) {
	reqJSON, err := json.Marshal(req)
	if err != nil {
		return 0, nil, err
	}
	a, err := s.sb.API(ctx, reqJSON, s.timeout)
	if err != nil {
		return 0, nil, err
	}
	if a.Stdout != "" || a.Stderr != "" {
		s.log.Debug("an api handler printed", "route", req.Method+" "+req.Path,
			"stdout", truncate(a.Stdout, 2000), "stderr", truncate(a.Stderr, 2000))
	}
	return a.Status, a.Body, nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
