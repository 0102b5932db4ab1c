package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/parselbox/parselbox/host/sandbox"
	"github.com/parselbox/parselbox/host/ui"
	"github.com/parselbox/parselbox/internal/browsertest"
	"github.com/parselbox/parselbox/internal/testenv"
)

// hostPage is a small MCP Apps host built with the ext-apps host-side API
// (AppBridge): it loads the renderer in an iframe, under the CSP the
// resource asks for, and hands it tool results.
const hostPage = `<!DOCTYPE html><html><head><meta charset="utf-8"><title>host</title>
<style>body{margin:0;font-family:sans-serif} iframe{border:1px dashed #999;width:100%;height:10px;display:block}</style></head>
<body><p>MCP Apps test host</p><iframe id="app"></iframe>
<script type="module">
import { AppBridge, PostMessageTransport } from "/bridge.js";
const iframe = document.getElementById("app");
window.sizes = [];
const bridge = new AppBridge(null, { name: "test-host", version: "1" }, {});
bridge.onsizechange = ({ height }) => { if (height !== undefined) { iframe.style.height = height + "px"; window.sizes.push(height); } };
bridge.oninitialized = () => { window.initialized = true; };
await bridge.connect(new PostMessageTransport(iframe.contentWindow, iframe.contentWindow));
window.showResult = async (result) => {
  await bridge.sendToolInput({ arguments: { code: "..." } });
  await bridge.sendToolResult(result);
};
iframe.src = "/renderer.html";
</script></body></html>`

// cspHeader is the CSP an MCP Apps host puts on the renderer, built from
// the resource's _meta.ui.csp as the specification says (no remote origin
// when it lists none).
func cspHeader(c ui.CSP) string {
	src := func(extra []string) string { return strings.Join(append([]string{"'self'"}, extra...), " ") }
	return fmt.Sprintf("default-src 'none'; script-src %s 'unsafe-inline'; style-src %s 'unsafe-inline'; "+
		"img-src %s data: blob:; font-src %s data:; connect-src %s; frame-src %s blob: data:",
		src(c.ResourceDomains), src(c.ResourceDomains), src(c.ResourceDomains), src(c.ResourceDomains),
		src(c.ConnectDomains), src(c.FrameDomains))
}

// bundleAppBridge bundles the ext-apps host side (and its dependencies)
// into one file with the runtime's deno.
func bundleAppBridge(t *testing.T, rtDir string) []byte {
	t.Helper()
	rt, err := sandbox.FindRuntime(rtDir)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	entry := filepath.Join(dir, "entry.js")
	src := filepath.Join(rt.Dir, "node_modules/@modelcontextprotocol/ext-apps/dist/src/app-bridge.js")
	os.WriteFile(entry, []byte(fmt.Sprintf("export { AppBridge, PostMessageTransport } from %q;\n", src)), 0o644)
	out := filepath.Join(dir, "bridge.js")
	cmd := exec.Command(rt.Deno, "bundle", "--quiet", "--node-modules-dir=manual", entry, "-o", out)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "DENO_DIR="+filepath.Join(dir, "deno"), "DENO_NO_UPDATE_CHECK=1")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("deno bundle of app-bridge: %v\n%s", err, b)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// openHostPage serves hostPage, the app bridge and the renderer (its HTML
// under the CSP csp) on loopback, opens the host page in b from host
// (hs.URL's "127.0.0.1", or "localhost" for an origin other than the
// renderer's) and waits until the renderer has initialized with it. The
// context it returns ends the test's browsing.
func openHostPage(t *testing.T, b *browsertest.Browser, renderer string, csp ui.CSP, host string) context.Context {
	t.Helper()
	bridgeJS := bundleAppBridge(t, testenv.Runtime(t).Dir)
	mux := http.NewServeMux()
	mux.HandleFunc("/host.html", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write([]byte(hostPage))
	})
	mux.HandleFunc("/bridge.js", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/javascript")
		w.Write(bridgeJS)
	})
	mux.HandleFunc("/renderer.html", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Content-Security-Policy", cspHeader(csp))
		w.Write([]byte(renderer))
	})
	hs := httptest.NewServer(mux)
	t.Cleanup(hs.Close)
	ctx, cancel := context.WithTimeout(b.Ctx, 90*time.Second)
	t.Cleanup(cancel)
	if err := chromedp.Do(ctx, chromedp.Navigate(strings.Replace(hs.URL, "127.0.0.1", host, 1)+"/host.html")); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`window.initialized === true`, chromedp.WithPollingTimeout(30*time.Second))); err != nil {
		t.Fatalf("the renderer never initialized with the host: %v", err)
	}
	return ctx
}

// The renderer resource, in a host page built with AppBridge, shows a
// tool result's view (styled, without the network), resizes to it, and
// shows an error result as an error.
func TestRendererInBrowser(t *testing.T) {
	t.Parallel()
	b := browsertest.New(t)
	srv := newServer(t, Options{})
	c, _ := newClient(nil)
	cs := connectInMemory(t, srv, c, "")

	renderer := srv.opts.renderer
	read, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: renderer.URI})
	if err != nil {
		t.Fatal(err)
	}
	call := func(code string) json.RawMessage {
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: ToolName, Arguments: map[string]any{"code": code}})
		if err != nil {
			t.Fatal(err)
		}
		j, _ := json.Marshal(res)
		return j
	}
	okResult := call(`display('''<div id="card" class="p-4 text-xl font-bold bg-blue-500 text-white rounded-lg">Hello from a view</div>
<button id="go" class="btn btn-primary">Go</button><div style="height:300px" class="bg-base-200 mt-2 p-2">tall part</div>''')
{"rows": 3}`)
	errResult := call("1/0")
	ctx := openHostPage(t, b, read.Contents[0].Text, renderer.CSP, "127.0.0.1")
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`showResult(`+string(okResult)+`).then(() => true)`, chromedp.EvalAwaitPromise)); err != nil {
		t.Fatal(err)
	}
	const viewDoc = `document.getElementById("app").contentDocument.getElementById("pbx-view").contentDocument`
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`(() => { const d = `+viewDoc+`; const e = d && d.getElementById("card");
		return !!e && getComputedStyle(e).paddingTop === "16px"; })()`, chromedp.WithPollingTimeout(30*time.Second))); err != nil {
		t.Fatalf("the view never showed, styled: %v", err)
	}
	type state struct {
		Bg, BtnDisplay, Text string
		Height               float64
		Sizes                []float64
		ErrorHidden          bool
	}
	look := func() state {
		s, err := chromedp.Run(ctx, chromedp.Evaluate[state](`(() => { const app = document.getElementById("app").contentDocument;
			const d = app.getElementById("pbx-view").contentDocument; const card = d && d.getElementById("card"), go = d && d.getElementById("go");
			return {bg: card ? getComputedStyle(card).backgroundColor : "", btnDisplay: go ? getComputedStyle(go).display : "",
				text: app.getElementById("pbx-error").textContent, height: document.getElementById("app").getBoundingClientRect().height,
				sizes: window.sizes, errorHidden: app.getElementById("pbx-error").hidden}; })()`))
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	// The host's iframe grows to the view (a size-changed notification).
	chromedp.Run(ctx, chromedp.Poll[bool](`document.getElementById("app").getBoundingClientRect().height > 300`, chromedp.WithPollingTimeout(10*time.Second)))
	s := look()
	if s.Bg == "rgba(0, 0, 0, 0)" || s.BtnDisplay != "inline-flex" || !s.ErrorHidden {
		t.Errorf("view not styled: %+v", s)
	}
	if s.Height <= 300 || len(s.Sizes) == 0 {
		t.Errorf("the renderer did not resize the host's frame to the view: height %v, sizes %v", s.Height, s.Sizes)
	}
	b.Screenshot("renderer-view")

	// An error result: its text, in red; the view collapses.
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`showResult(`+string(errResult)+`).then(() => true)`, chromedp.EvalAwaitPromise)); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`!document.getElementById("app").contentDocument.getElementById("pbx-error").hidden`,
		chromedp.WithPollingTimeout(10*time.Second))); err != nil {
		t.Fatalf("the error never showed: %v", err)
	}
	color, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`getComputedStyle(document.getElementById("app").contentDocument.getElementById("pbx-error")).color`))
	s = look()
	if !strings.Contains(s.Text, "ZeroDivisionError") || color != "rgb(220, 38, 38)" {
		t.Errorf("error result shown as %q in %s", s.Text, color)
	}
	chromedp.Run(ctx, chromedp.Poll[bool](`document.getElementById("app").getBoundingClientRect().height < 300`, chromedp.WithPollingTimeout(10*time.Second)))
	if s = look(); s.Height >= 300 {
		t.Errorf("the frame did not shrink to the error: %v", s.Height)
	}
	b.Screenshot("renderer-error")
	if off := b.Offsite(); len(off) > 0 {
		t.Errorf("requests left the machine: %v", off)
	}
}
