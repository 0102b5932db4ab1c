package ui

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"
)

// MIMEType is the MCP Apps type of an HTML resource.
const MIMEType = "text/html;profile=mcp-app"

// RendererName is the name of the renderer resource.
const RendererName = "parselbox-renderer"

// ViewMetaKey is the key of a tool result's _meta that carries the view to
// the renderer: the HTML reaches the UI there and never the model, which
// reads the result's text.
const ViewMetaKey = "parselbox/view"

// CSP is the content security policy of the renderer resource (MCP Apps
// _meta.ui.csp). The zero value allows no remote origin: the renderer holds
// everything it needs.
type CSP struct {
	ConnectDomains  []string `json:"connectDomains,omitempty"`
	ResourceDomains []string `json:"resourceDomains,omitempty"`
	FrameDomains    []string `json:"frameDomains,omitempty"`
}

// Renderer is the MCP Apps resource that shows views under tool results.
type Renderer struct {
	URI  string // ui://parselbox/renderer-<first 8 hex of the SHA-256 of HTML>.html
	HTML string
	CSP  CSP
}

// Meta is the resource's _meta: {"ui": {"csp": ...}}.
func (r *Renderer) Meta() map[string]any {
	return map[string]any{"ui": map[string]any{"csp": r.CSP}}
}

// ToolMeta is the _meta of a tool whose results the renderer shows.
func (r *Renderer) ToolMeta() map[string]any {
	return map[string]any{
		"ui":             map[string]any{"resourceUri": r.URI, "visibility": []string{"model"}},
		"ui/resourceUri": r.URI, // the key of hosts that predate "ui"
	}
}

// Renderer builds the renderer page: the ext-apps App client, the assets,
// and an iframe that shows the view of each tool result (an error result's
// text in red), as tall as its document.
func (a *Assets) Renderer(csp CSP) *Renderer {
	var b strings.Builder
	b.WriteString(rendererHead)
	b.WriteString(`<script type="text/plain" id="pbx-css">`)
	b.WriteString(safeScript(a.DaisyUI))
	b.WriteString(`</script><script type="text/plain" id="pbx-tw">`)
	b.WriteString(safeScript(a.Tailwind))
	b.WriteString(`</script><script type="module">`)
	b.WriteString(safeScript(a.ExtApps))
	b.WriteString("\nconst PbxApp = " + a.appName + ";\n")
	marker, _ := json.Marshal(AssetsMarker)
	key, _ := json.Marshal(ViewMetaKey)
	b.WriteString(strings.NewReplacer("__MARKER__", string(marker), "__KEY__", string(key)).Replace(rendererJS))
	b.WriteString("</script></body></html>")
	html := b.String()
	h := sha256.Sum256([]byte(html))
	return &Renderer{URI: "ui://parselbox/renderer-" + hex.EncodeToString(h[:4]) + ".html", HTML: html, CSP: csp}
}

const rendererHead = `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="color-scheme" content="light dark">
<title>parselbox view</title>
<style>html,body{margin:0;padding:0;background:transparent}
#pbx-view{display:block;border:0;width:100%;height:0}
#pbx-error{margin:0;padding:8px 12px;color:#dc2626;font:13px/1.4 ui-monospace,monospace;white-space:pre-wrap;word-break:break-word}
</style></head><body>
<iframe id="pbx-view" title="view" sandbox="allow-scripts allow-same-origin allow-forms allow-popups"></iframe>
<pre id="pbx-error" hidden></pre>
`

// rendererJS runs after the ext-apps bundle, in the same module.
const rendererJS = `
const pbxFrame = document.getElementById("pbx-view");
const pbxError = document.getElementById("pbx-error");
const pbxAssets = "<style>" + document.getElementById("pbx-css").textContent + "</style><script>" +
  document.getElementById("pbx-tw").textContent + "</" + "script>";
let pbxCurrent = null, pbxObserver = null;
function pbxFit() {
  const d = pbxFrame.contentDocument;
  if (!d || !d.documentElement) return;
  pbxFrame.style.height = Math.ceil(d.documentElement.getBoundingClientRect().height) + "px";
}
pbxFrame.addEventListener("load", () => {
  if (pbxObserver) pbxObserver.disconnect();
  const d = pbxFrame.contentDocument;
  if (!d || !d.documentElement) return;
  pbxObserver = new ResizeObserver(pbxFit);
  pbxObserver.observe(d.documentElement);
  pbxFit();
});
function pbxCollapse() {
  pbxCurrent = null;
  pbxFrame.removeAttribute("srcdoc");
  pbxFrame.style.height = "0px";
}
function pbxView(r) {
  const meta = r && r._meta;
  if (meta && typeof meta[__KEY__] === "string") return meta[__KEY__];
  const sc = r && r.structuredContent;
  if (sc && typeof sc.view === "string" && sc.view.includes("<")) return sc.view;
  for (const c of (r && r.content) || []) {
    if (c.type !== "text") continue;
    try { const v = JSON.parse(c.text).view; if (typeof v === "string" && v.includes("<")) return v; } catch (_) {}
  }
  return null;
}
function pbxShow(r) {
  if (r && r.isError) {
    pbxCollapse();
    pbxError.textContent = ((r.content) || []).filter((c) => c.type === "text").map((c) => {
      try { const e = JSON.parse(c.text).error; if (typeof e === "string") return e; } catch (_) {}
      return c.text;
    }).join("\n");
    pbxError.hidden = false;
    return;
  }
  pbxError.hidden = true;
  const view = pbxView(r);
  if (!view) { pbxCollapse(); return; }
  if (view === pbxCurrent) return;
  pbxCurrent = view;
  pbxFrame.srcdoc = view.replace(__MARKER__, () => pbxAssets);
}
window.pbxShow = pbxShow; // for tests and hosts that call in
const pbxApp = new PbxApp({ name: "parselbox-renderer", version: "1" }, {}, { autoResize: true });
pbxApp.ontoolresult = pbxShow;
pbxApp.connect().catch((e) => { console.warn("parselbox renderer: not connected:", e); pbxCollapse(); });
`
