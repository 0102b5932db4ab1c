package mcpserver

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/parselbox/parselbox/host"
	"github.com/parselbox/parselbox/internal/browsertest"
)

// A view shown by the renderer, in a host page of another origin, calls
// the served app's @api route with pbx.call (the CSP and the token let
// it), and the route calls a tool.
func TestRendererViewCallsApp(t *testing.T) {
	t.Parallel()
	b := browsertest.New(t)
	srv := newServer(t, Options{Config: host.Config{
		Serve:   &host.ServeConfig{Addr: "127.0.0.1:0"},
		Context: map[string]any{"calc": calc{}},
	}})
	c, _ := newClient(nil)
	cs := connectInMemory(t, srv, c, "")
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: ToolName, Arguments: map[string]any{"code": `
@api.post("/mul")
def mul(body):
    return {"product": calc.mul(a=body["a"], b=body["b"])}

display('''<button id="go" class="btn btn-secondary" onclick="pbx.call('mul', {a: 6, b: 7}).then(r => out.textContent = r.product, e => out.textContent = 'failed: ' + e.message)">6 × 7</button>
<span id="out" class="ml-2"></span>''')
'ok'`}})
	if err != nil {
		t.Fatal(err)
	}
	result, _ := json.Marshal(res)
	read, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: srv.opts.renderer.URI})
	if err != nil {
		t.Fatal(err)
	}
	var meta struct {
		UI struct {
			CSP struct{ ConnectDomains []string } `json:"csp"`
		} `json:"ui"`
	}
	raw, _ := json.Marshal(read.Contents[0].Meta)
	json.Unmarshal(raw, &meta)
	csp := srv.opts.renderer.CSP
	csp.ConnectDomains = meta.UI.CSP.ConnectDomains
	if len(csp.ConnectDomains) == 0 {
		t.Fatalf("the renderer's CSP does not let views reach the app: %s", raw)
	}
	// The host page is served from localhost, the app from 127.0.0.1: two origins.
	ctx := openHostPage(t, b, read.Contents[0].Text, csp, "localhost")
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`showResult(`+string(result)+`).then(() => true)`, chromedp.EvalAwaitPromise)); err != nil {
		t.Fatal(err)
	}
	const view = `document.getElementById("app").contentDocument.getElementById("pbx-view").contentDocument`
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`(() => { const d = `+view+`; return !!(d && d.getElementById("go") && d.defaultView.pbx); })()`,
		chromedp.WithPollingTimeout(30*time.Second))); err != nil {
		t.Fatalf("the view never showed: %v", err)
	}
	if err := chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](view+`.getElementById("go").click()`)); err != nil {
		t.Fatal(err)
	}
	out, err := chromedp.Run(ctx, chromedp.Poll[string](`(() => { const t = `+view+`.getElementById("out").textContent; return t ? t : false; })()`,
		chromedp.WithPollingTimeout(30*time.Second)))
	if err != nil || out != "42" {
		t.Errorf("the view's pbx.call answered %q (%v)", out, err)
	}
	b.Screenshot("renderer-view-calls-app")
	if off := b.Offsite(); len(off) > 0 {
		t.Errorf("requests left the machine: %v", off)
	}
}
