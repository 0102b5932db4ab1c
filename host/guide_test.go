package host_test

import (
	"strings"
	"testing"

	"github.com/parselbox/parselbox/host"
)

// The guide gives the call shape of bash, js, require, display and the
// served app's api in a line or two each and sends the model to help(x);
// help(x) in the sandbox has the details the guide left out, as a
// signature line, then the description, without the docstring's
// indentation.
func TestHelpDetails(t *testing.T) {
	t.Parallel()
	sb := newSandbox(t, host.Config{UI: true, Serve: &host.ServeConfig{Addr: "127.0.0.1:0"}})

	guide := sb.Prompt()
	for _, want := range []string{
		"`bash(\"grep -c x data.csv | sort\")` returns stdout", "bash exit N",
		"`js(\"return a + 1\", a=1)`", "`m = require(\"lodash\")`", "`require(\"./utils.ts\")`",
		"`display(html)`", "`@api.get(\"/items\")`", "`await pbx.call(\"items\", body)`",
		"help(bash), help(js), help(require)", "help(display)", "help(api)",
		"`t = ns.tool.task(...)`", "`sbx.info()`", "`help(ns)`", "`sbx.inspect(\"ns.tool\")`",
	} {
		if !strings.Contains(guide, want) {
			t.Errorf("the guide lacks %q:\n%s", want, guide)
		}
	}

	helps, ok := value(t, exec(t, sb, `{k: help(v) for k, v in
    {"bash": bash, "js": js, "require": require, "display": display, "api": api, "Task": Task}.items()}`)).(map[string]any)
	if !ok {
		t.Fatal("help(x) did not return text")
	}
	details := map[string][]string{
		"bash": {"bash(command: str) -> str\n\n", "just-bash", "no process substitution (<(...))",
			"/mnt/* with their read-only or read/write modes", "starts in /workspace and has Python's os.environ",
			"cd, variables and functions do not persist; files do", `RuntimeError("bash exit N: <stderr>")`,
			"curl follows the sandbox's network rules", "/workspace/bin/tool.wasm",
			"50 000 commands and loop iterations, call depth 100"},
		"js": {"js(code: str, **kwargs) -> value\n\n", "nothing persists", "bytes → Uint8Array",
			"functions → JS functions", "lambda x, *_:", "typed arrays as bytes", "require()d module under its alias",
			`resolvePath("data.csv")`, "no environment, processes or eval/Function", "the sandbox is restarted",
			`js("return xs.map(x => x * 2)", xs=[1, 2]) == [2, 4]`},
		"require": {"require(name: str, alias: str | None = None) -> module\n\n", `packages = ["npm:lodash@4.17.21"]`,
			"allow_runtime_packages", "re-imported on every call", ".wasm", "name(args, stdin, env, preopens, argv0)",
			"m.chunk([1, 2, 3], 2)", "Vec(1, 2)", `dayjs("2024-01-01").add(1, "day")`, "js-yaml → jsYaml",
			"./my-utils.ts → myUtils"},
		"display": {"display(content: str | os.PathLike) -> None\n\n", `display("page.html")`, "the last display() wins",
			"Tailwind CSS (v4) and daisyUI (v5)", `class="btn btn-primary"`, "data: URIs and inline SVG",
			"cannot fetch from the internet", `await pbx.call("route", body)`, `{method: "GET"}`},
		"api": {"api: the handlers of the web app", "@api.post(\"/items\")      # POST with a JSON body",
			"\ndef items(params):\n    return", "api.put, api.patch and api.delete", "they write are listed in the files of your next execution",
			`{"error": message, "traceback": ...}`, "404", "400", `api.list_routes() → [{"method", "path"}]`, "api.clear()",
			"index.html at URL/", "/files/NAME", "reload by themselves", `fetch("/api/items")`, "POST URL/_upload",
			"URL/_routes"},
		"Task": {"ns.tool.task(...)", "send(msg)", "await task"},
	}
	flat := func(s string) string { return strings.Join(strings.Fields(s), " ") }
	for name, wants := range details {
		doc, _ := helps[name].(string)
		for _, want := range wants {
			// A line break of the docstring counts as a space, unless
			// the wanted text has one itself.
			if !strings.Contains(doc, want) && (strings.Contains(want, "\n") || !strings.Contains(flat(doc), flat(want))) {
				t.Errorf("help(%s) lacks %q:\n%s", name, want, doc)
			}
		}
		if strings.Contains(doc, "\n    - ") {
			t.Errorf("help(%s) keeps the docstring's indentation:\n%s", name, doc)
		}
	}
}
