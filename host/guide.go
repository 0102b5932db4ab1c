package host

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/parselbox/parselbox/host/packages"
	"github.com/parselbox/parselbox/host/serve"
	"github.com/parselbox/parselbox/host/ui"
)

// Prompt returns the guide text for an agent's system prompt: what the
// sandbox is, its limits, the namespaces configured and how to discover and
// call tools. help() and sbx.help() inside the sandbox return the same text.
func (s *Sandbox) Prompt() string { return s.guide(true) }

// GuideWithoutSignatures is Prompt without the tools' signatures of
// describe_tools = "signatures", for a front end that shows them elsewhere
// (the MCP server: in execute_code's description, so that a model does not
// read them twice).
func (s *Sandbox) GuideWithoutSignatures() string { return s.guide(false) }

func (s *Sandbox) guide(signatures bool) string {
	var b strings.Builder
	b.WriteString(guideIntro)
	b.WriteString("\n## This sandbox\n")
	fmt.Fprintf(&b, "- Limits: %s per execution; %d MB of Python memory.\n", fmtTimeout(s.timeout), s.memoryMB())
	switch {
	case s.cfg.Network:
		b.WriteString("- Network: open (urllib.request, http.client, requests/httpx if installed, pyodide.http.pyfetch; synchronous calls work).\n")
	case len(s.cfg.AllowNet) > 0:
		fmt.Fprintf(&b, "- Network: only %s (urllib.request, http.client, requests/httpx if installed, pyodide.http.pyfetch); any other address raises PermissionError (URLError from urllib, ConnectionError from requests, ConnectError from httpx).\n", strings.Join(s.cfg.AllowNet, ", "))
	default:
		b.WriteString("- Network: none. Reach outside systems through the namespaces below.\n")
	}
	if py, _, _ := packages.Split(s.cfg.Packages); len(py) > 0 || s.cfg.AllowRuntimePackages {
		b.WriteString("- Packages: installed by the host (no pip/micropip needed)")
		if len(py) > 0 {
			fmt.Fprintf(&b, "; ready to import: %s", strings.Join(py, ", "))
		}
		if s.cfg.AllowRuntimePackages {
			b.WriteString("; other imports are installed before the code runs when the package index has them")
		}
		b.WriteString(".\n")
	}
	b.WriteString(s.npmLine())
	b.WriteString("- Files: /workspace (the working directory; what you write there is kept), /files (inputs)")
	for _, t := range slices.Sorted(maps.Keys(s.cfg.Mounts)) {
		m := s.cfg.Mounts[t]
		mode := "read-only"
		if !m.ReadOnly() {
			mode = "read/write"
		}
		fmt.Fprintf(&b, ", /mnt/%s (%s)", strings.Trim(t, "/"), mode)
	}
	b.WriteString(".\n")
	if ns := s.namespaceLines(); len(ns) > 0 {
		b.WriteString("- Namespaces (tools that run on the host, with its credentials):\n")
		for _, l := range ns {
			b.WriteString("  - " + l + "\n")
		}
	}
	if !signatures && s.cfg.DescribeTools == DescribeSignatures {
		b.WriteString("- The tools' Python signatures are in the description of execute_code.\n")
	} else if sigs := s.ToolSignatures(context.Background()); sigs != "" {
		b.WriteString("\n## Tools available (Python signatures; call them as ns.tool(...))\n```python\n" + sigs + "```\n")
	}
	b.WriteString(guideShell)
	b.WriteString(guideTools)
	b.WriteString(guideJS)
	if s.cfg.UI {
		b.WriteString(ui.Guide)
	}
	if s.serve != nil {
		b.WriteString(serve.Guide(s.serve.URL()))
	}
	return b.String()
}

func fmtTimeout(d time.Duration) string {
	if d <= 0 {
		return "no time limit"
	}
	return fmt.Sprintf("%gs", d.Seconds())
}

func (s *Sandbox) memoryMB() int {
	if s.cfg.Memory > 0 {
		return s.cfg.Memory
	}
	return DefaultMemoryMB
}

const guideIntro = `# Parselbox sandbox guide

You have a stateful Python 3 sandbox (Pyodide). Each execution runs your code and returns
the value of its last expression; variables, imports and functions persist between executions.

## Running code
- Return data as the last expression; print() output is captured separately and may not be
  shown to you. Results must be JSON-friendly (dicts, lists, strings, numbers); anything else
  comes back as its repr.
- Top-level await works: ` + "`await asyncio.sleep(1)`" + `, ` + "`await asyncio.gather(...)`" + `. Threads and
  subprocesses are not available.
- An execution that runs past the time limit gets a KeyboardInterrupt; your variables survive.
- Files you create or change under /workspace, /files or a read/write mount are reported.
`

const guideShell = `
## Shell: bash(command)
- ` + "`bash(\"grep -c x data.csv | sort\")`" + ` returns stdout; a non-zero exit with stderr raises
  ` + "`RuntimeError(\"bash exit N: ...\")`" + `. An emulated shell (just-bash): pipes, redirections, loops,
  functions, globs, ls/cat/grep/sed/awk/jq/sort/find/curl...; no processes, no ` + "`<(...)`" + `.
- It sees the same files as Python (/workspace, /files, mounts) and starts in /workspace; each
  call is a fresh shell (cd and variables do not persist, files do). curl follows the network rules.
- A WASI program in a directory's bin/ (e.g. /workspace/bin/tool.wasm) is the command ` + "`tool`" + `.
`

const guideTools = `
## Tools
Namespaces are Python objects whose methods run on the host:
- Call: ` + "`ns.tool(a=1)`" + ` looks synchronous and returns the result; positional arguments follow the
  tool's parameter order. A failure raises a Python exception with the tool's message
  (PermissionError, TimeoutError, ValueError for bad arguments, RuntimeError otherwise).
- Background: ` + "`t = ns.tool.task(...)`" + ` returns a Task at once. ` + "`t.status()`" + `, ` + "`t.tail(n)`" + ` (its log),
  ` + "`t.send(msg)`" + `, ` + "`t.cancel()`" + `, ` + "`await t.wait(timeout)`" + `, ` + "`await t`" + ` for the result.
  Run many at once with ` + "`await asyncio.gather(*[ns.tool.task(x) for x in items])`" + `.
  ` + "`.task`" + ` must be the last accessor: ` + "`ns.sub.tool.task(...)`" + `. Tasks outlive the execution that started them.
- Long runs: ` + "`sbx.progress(done, total=None, message=None)`" + ` shows the user how far the code has got
  while it runs (in js() code too).

## Discovering tools
1. ` + "`sbx.info()`" + ` — the namespaces, files, mounts and limits. Start here.
2. ` + "`sbx.search(\"pattern\")`" + ` — tools matching a regular expression, across all namespaces.
3. ` + "`help(ns)`" + ` — a namespace's tree; ` + "`help(ns.tool)`" + ` or ` + "`sbx.inspect(\"ns.tool\")`" + ` — its description,
   parameters (JSON Schema) and output.
4. ` + "`sbx.preview(data)`" + ` — a short summary of a large result before you return it.
`
