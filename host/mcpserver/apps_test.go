package mcpserver

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/parselbox/parselbox/host"
	"github.com/parselbox/parselbox/host/ui"
)

// MCP Apps: the tool points at the renderer resource, the resource is the
// renderer with a CSP that allows no remote origin, a view reaches the UI
// in the result's _meta and costs the model a line; --no-ui drops it all.
func TestApps(t *testing.T) {
	t.Parallel()
	srv := newServer(t, Options{})
	c, _ := newClient(nil)
	cs := connectInMemory(t, srv, c, "")

	tools, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	meta, _ := json.Marshal(tools.Tools[0].Meta)
	m := regexp.MustCompile(`"resourceUri":"(ui://parselbox/renderer-[0-9a-f]{8}\.html)"`).FindSubmatch(meta)
	if m == nil || !strings.Contains(string(meta), `"visibility":["model"]`) {
		t.Fatalf("tool _meta: %s", meta)
	}
	uri := string(m[1])

	list, err := cs.ListResources(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var found *mcp.Resource
	for _, r := range list.Resources {
		if r.URI == uri {
			found = r
		}
	}
	if found == nil || found.MIMEType != "text/html;profile=mcp-app" || found.Name != "parselbox-renderer" {
		t.Fatalf("renderer resource %s not listed right: %+v", uri, found)
	}
	read, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: uri})
	if err != nil {
		t.Fatal(err)
	}
	page := read.Contents[0]
	csp, _ := json.Marshal(page.Meta)
	if string(csp) != `{"ui":{"csp":{}}}` {
		t.Errorf("renderer csp: %s (want no remote origin)", csp)
	}
	for _, want := range []string{"<iframe id=\"pbx-view\"", "ontoolresult", "daisyui", "tailwindcss"} {
		if !strings.Contains(page.Text, want) {
			t.Errorf("renderer lacks %q", want)
		}
	}
	if regexp.MustCompile(`(?i)(src|href)=["']?https?:`).MatchString(page.Text) || strings.Contains(page.Text, "cdn.jsdelivr") {
		t.Error("the renderer loads something from the network")
	}

	// A view of 20 kB: the model reads a line, the UI gets the document.
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: ToolName, Arguments: map[string]any{
		"code": "display('<div class=\"p-4\">' + 'x' * 20000 + '</div>')\n'ok'"}})
	if err != nil {
		t.Fatal(err)
	}
	r := decode(t, res)
	view, _ := res.Meta[ui.ViewMetaKey].(string)
	if !strings.HasPrefix(view, "<!DOCTYPE html>") || !strings.Contains(view, strings.Repeat("x", 20000)) {
		t.Errorf("_meta view: %.200s", view)
	}
	if len(r.Text) > 200 || !strings.HasPrefix(r.View, "shown to the user (") || r.Result != "ok" {
		t.Errorf("what the model reads (%d bytes): %s", len(r.Text), r.Text)
	}

	// The guide tells about display().
	if !strings.Contains(cs.InitializeResult().Instructions, "display(html)") {
		t.Error("the instructions do not mention display()")
	}
}

func TestNoUI(t *testing.T) {
	t.Parallel()
	srv := newServer(t, Options{Settings: with(func(s *Settings) { s.NoUI = true })})
	c, _ := newClient(nil)
	cs := connectInMemory(t, srv, c, "")
	tools, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if tools.Tools[0].Meta != nil {
		t.Errorf("tool _meta with --no-ui: %v", tools.Tools[0].Meta)
	}
	list, err := cs.ListResources(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Resources) != 0 {
		t.Errorf("resources with --no-ui: %v", list.Resources[0].URI)
	}
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: ToolName, Arguments: map[string]any{"code": "display('<b>x</b>')\n1"}})
	if err != nil {
		t.Fatal(err)
	}
	if r := decode(t, res); res.Meta[ui.ViewMetaKey] != nil || r.View != "" || strings.Contains(r.Text, "view") {
		t.Errorf("a view with --no-ui: %s %v", r.Text, res.Meta)
	}
	if strings.Contains(cs.InitializeResult().Instructions, "display(") {
		t.Error("the instructions mention display() with --no-ui")
	}
}

// With the workspace served, results say where, the guide explains the
// app, and the renderer's CSP lets views call it (and nothing else).
func TestAppsServe(t *testing.T) {
	t.Parallel()
	srv := newServer(t, Options{Config: host.Config{Serve: &host.ServeConfig{Addr: "127.0.0.1:0"}}})
	c, _ := newClient(nil)
	cs := connectInMemory(t, srv, c, "")
	r := run(t, cs, "@api.get('/one')\ndef one(params):\n    return 1\n'ok'")
	if !strings.HasPrefix(r.App, "http://127.0.0.1:") {
		t.Fatalf("the result does not say where the app is: %s", r.Text)
	}
	if !strings.Contains(cs.InitializeResult().Instructions, "your workspace is served at "+r.App) {
		t.Error("the guide does not tell about the app")
	}
	read, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: srv.opts.renderer.URI})
	if err != nil {
		t.Fatal(err)
	}
	csp, _ := json.Marshal(read.Contents[0].Meta)
	if !strings.Contains(string(csp), `"connectDomains":["`+r.App+`"`) || strings.Contains(string(csp), "resourceDomains") {
		t.Errorf("renderer csp with serve: %s", csp)
	}
}
