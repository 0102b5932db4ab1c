// Package ui makes what display() shows into something a person can look
// at: the view (a full HTML document made from the HTML the code passed),
// and the MCP Apps renderer that shows views under a tool result.
//
// The styling assets, Tailwind (its v4 browser build) and daisyUI (v5),
// and the MCP Apps client (@modelcontextprotocol/ext-apps) are npm
// packages pinned in runtime/package.json: Load reads them from the runtime
// directory, so nothing is fetched at run time and views render on a
// machine without a network. A view carries no asset of its own: it has a
// marker where the renderer (or Standalone, or the serve package) puts
// them, so a view of 20 kB stays 20 kB.
//
//	a, err := ui.Load(runtimeDir)
//	view := ui.Render(`<button class="btn btn-primary">Hi</button>`, "")
//	page := a.Standalone(view)    // a page that works on its own
//	r := a.Renderer(ui.CSP{})     // the ui:// resource of the MCP server
//	_ = r.URI                     // ui://parselbox/renderer-<hash>.html
package ui
