package serve

import "strings"

// Guide is the section of the guide text about the served app at url.
// The details are the api object's docstring: help(api) in the sandbox.
func Guide(url string) string {
	return strings.ReplaceAll(guide, "URL", url)
}

const guide = `
## Web app: your workspace is served at URL
- Files in /workspace are served (` + "`index.html`" + ` at URL/); /files/NAME serves input files.
- ` + "`@api.get(\"/items\")`" + ` on ` + "`def items(params)`" + ` (or ` + "`@api.post`" + ` on ` + "`def add(body)`" + `) answers URL/api/items
  with the handler's return value as JSON; handlers run here, with this sandbox's state and tools.
  Pages call them with ` + "`await pbx.call(\"items\", body)`" + `. Details: help(api).
`
