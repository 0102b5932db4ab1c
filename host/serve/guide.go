package serve

import "strings"

// Guide is the section of the guide text about the served app at url.
func Guide(url string) string {
	return strings.ReplaceAll(guide, "URL", url)
}

const guide = `
## Web app: your workspace is served at URL
- Files in /workspace are served: ` + "`index.html`" + ` at URL/, other files by path; /files/NAME serves
  input files. Pages reload by themselves when their files change.
- API handlers run here, in this sandbox, with its state and namespaces:
` + "```python" + `
@api.get("/items")            # GET URL/api/items?q=x  -> handler(params) with params = {"q": "x"}
def items(params):
    return {"items": find(params.get("q"))}

@api.post("/items")           # POST with a JSON body -> handler(body)
async def add(body):          # sync or async; may call tools and .task()s
    return {"saved": db.insert(row=body)}
` + "```" + `
  A path without /api gets it in front. The return value is the JSON answer; an exception is a
  500 with {"error": message, "traceback": ...}; an unknown route a 404. api.list_routes(),
  api.clear(). Handlers run while your code waits (a tool call, a sleep); files they write are
  listed in the files of your next execution.
- Pages call handlers with ` + "`await pbx.call(\"items\", body)`" + ` (POST; ` + "`{method: \"GET\"}`" + ` for GET)
  or fetch("/api/items").
- ` + "`POST URL/_upload`" + ` (multipart) saves files into /files and answers
  {"uploaded": [{"name", "path", "size"}]}; URL/_routes lists the routes.
`
