package mcpserver

import (
	"context"
	"slices"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/parselbox/parselbox/host/sandbox"
	"github.com/parselbox/parselbox/host/ui"
)

// MCP Apps: the renderer resource that shows display() views under
// execute_code's results. A result's view travels in its _meta
// (ui.ViewMetaKey), which the client hands to the renderer; the text the
// model reads only says that a view was shown.

// assets are read once per runtime directory.
var assets sync.Map // dir → *ui.Assets

// newRenderer returns the renderer for the options, nil with UI off. csp
// adds what the page may reach (the served app).
func newRenderer(o *Options, csp ui.CSP) (*ui.Renderer, error) {
	if o.Settings.NoUI {
		return nil, nil
	}
	rt, err := sandbox.FindRuntime(o.Config.RuntimeDir)
	if err != nil {
		return nil, err
	}
	a, ok := assets.Load(rt.Dir)
	if !ok {
		loaded, err := ui.Load(rt.Dir)
		if err != nil {
			return nil, err
		}
		a, _ = assets.LoadOrStore(rt.Dir, loaded)
	}
	return a.(*ui.Assets).Renderer(csp), nil
}

// addRenderer registers the renderer resource on the session's server.
func (s *session) addRenderer(r *ui.Renderer) {
	s.server.AddResource(&mcp.Resource{
		URI:      r.URI,
		Name:     ui.RendererName,
		Title:    "Parselbox view",
		MIMEType: ui.MIMEType,
		Meta:     r.Meta(),
	}, func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		meta := r.Meta()
		if sb := s.Sandbox(); sb != nil && len(sb.ServeOrigins()) > 0 {
			// Views call the app this session's sandbox serves.
			csp := r.CSP
			csp.ConnectDomains = slices.Concat(csp.ConnectDomains, sb.ServeOrigins())
			meta = map[string]any{"ui": map[string]any{"csp": csp}}
		}
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{
			URI: r.URI, MIMEType: ui.MIMEType, Text: r.HTML, Meta: meta,
		}}}, nil
	})
}
