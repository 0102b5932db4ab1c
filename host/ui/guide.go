package ui

// Guide is the section of the guide text about display(), for sandboxes
// whose views someone sees (the MCP server with UI on). The details are
// display()'s docstring: help(display) in the sandbox.
const Guide = `
## Inline UI: display(content)
` + "`display(html)`" + ` or ` + "`display(\"page.html\")`" + ` (a file in /workspace) shows HTML to the user under this
result; the last call wins; still return the data you need. Tailwind CSS 4 and daisyUI 5 classes
work; the view cannot fetch from the internet. Details: help(display).
`
