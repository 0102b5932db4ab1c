package mcpserver

import (
	"context"
	"log/slog"

	"github.com/hashicorp/go-hclog"
)

// Log keys.
const (
	logSession  = "session"
	logPID      = "pid"
	logTool     = "tool"
	logError    = "error"
	logMS       = "ms"
	logReason   = "reason"
	logRaised   = "raised"
	logOrigin   = "origin"
	logRemote   = "remote"
	logURL      = "url"
	logDir      = "dir"
	logSessions = "sessions"
)

// slogHandler passes the go-sdk's slog records to an hclog logger, one
// level lower than the SDK's: its Info is our Debug.
type slogHandler struct {
	log   hclog.Logger
	attrs []any
	group string
}

func newSlog(log hclog.Logger) *slog.Logger { return slog.New(&slogHandler{log: log}) }

func (h *slogHandler) level(l slog.Level) hclog.Level {
	switch {
	case l >= slog.LevelError:
		return hclog.Warn
	case l >= slog.LevelWarn:
		return hclog.Info
	case l >= slog.LevelInfo:
		return hclog.Debug
	default:
		return hclog.Trace
	}
}

func (h *slogHandler) Enabled(_ context.Context, l slog.Level) bool {
	return h.log.GetLevel() <= h.level(l)
}

func (h *slogHandler) Handle(_ context.Context, r slog.Record) error {
	args := append([]any(nil), h.attrs...)
	r.Attrs(func(a slog.Attr) bool {
		args = append(args, h.key(a.Key), a.Value.Resolve().Any())
		return true
	})
	h.log.Log(h.level(r.Level), r.Message, args...)
	return nil
}

func (h *slogHandler) key(k string) string {
	if h.group == "" {
		return k
	}
	return h.group + "." + k
}

func (h *slogHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	c := *h
	c.attrs = append([]any(nil), h.attrs...)
	for _, a := range attrs {
		c.attrs = append(c.attrs, h.key(a.Key), a.Value.Resolve().Any())
	}
	return &c
}

func (h *slogHandler) WithGroup(name string) slog.Handler {
	c := *h
	c.group = h.key(name)
	return &c
}
