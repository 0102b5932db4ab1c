package ui

// Guide is the section of the guide text about display(), for sandboxes
// whose views someone sees (the MCP server with UI on).
const Guide = `
## Inline UI: display(content)
` + "`display(html)`" + ` shows HTML to the user under this result (in MCP clients that render MCP Apps);
` + "`display(\"page.html\")`" + ` shows a file (relative to /workspace). Tailwind CSS (v4) and daisyUI (v5) are
loaded: use their classes (` + "`class=\"btn btn-primary\"`, `class=\"table table-zebra\"`" + `). One view per
execution: the last display() wins. The view is for the user; still return the data you need
as the last expression. Images as data: URIs and inline SVG work; the view cannot fetch from
the internet: fetch data in Python and put it in the HTML. With an app served (see below),
` + "`await pbx.call(\"route\", body)`" + ` in the view's JavaScript reaches your @api handlers (POST by
default; ` + "`{method: \"GET\"}`" + ` for GET; a path without a leading / gets /api/ in front).
`
