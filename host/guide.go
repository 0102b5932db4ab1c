package host

import (
	"cmp"
	"context"
	"fmt"
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
		b.WriteString("- Network: none; reach outside systems through the namespaces.\n")
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
	files := append([]string{"/workspace (the working directory, kept)", "/files (inputs)"}, s.mountLines()...)
	b.WriteString("- Files: " + strings.Join(files, ", ") + ".\n")
	if ns := s.namespaceLines(); len(ns) > 0 {
		b.WriteString("- Namespaces (their tools run on the host, with its credentials): " + strings.Join(ns, ", ") + ".\n")
	}
	if !signatures && s.cfg.DescribeTools == DescribeSignatures {
		b.WriteString("- The tools' Python signatures are in the description of execute_code.\n")
	} else if sigs := s.ToolSignatures(context.Background()); sigs != "" {
		b.WriteString("\n## Tools available (Python signatures; call them as ns.tool(...))\n```python\n" + sigs + "```\n")
	}
	b.WriteString(guideTools)
	b.WriteString(guideMore)
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

func (s *Sandbox) memoryMB() int { return cmp.Or(s.cfg.Memory, DefaultMemoryMB) }

const guideIntro = `# Parselbox sandbox guide

A stateful Python 3 sandbox (Pyodide): variables, imports and functions persist between executions.
An execution returns the value of its last expression (JSON-friendly data, else its repr); print()
output may not be shown to you. Top-level await works; threads and subprocesses do not. Past the time
limit the code gets a KeyboardInterrupt; variables survive. Files written under /workspace, /files or
a read/write mount are reported.
`

const guideTools = `
## Tools
- ` + "`ns.tool(a=1)`" + ` runs on the host and returns the result (positional arguments follow the parameter
  order); a failure raises PermissionError, TimeoutError, ValueError (bad arguments) or RuntimeError.
- ` + "`t = ns.tool.task(...)`" + ` (` + "`.task`" + ` last) starts a background Task that outlives the execution:
  ` + "`await t`" + `, ` + "`t.status()`" + `, ` + "`t.cancel()`" + `; help(Task). Many at once: ` + "`await asyncio.gather(*[ns.tool.task(x) for x in items])`" + `.
- Discover: ` + "`sbx.info()`" + `, ` + "`sbx.search(\"regex\")`" + ` (tools of all namespaces), ` + "`help(ns)`" + ` (its tools'
  signatures), ` + "`help(ns.tool)`" + ` or ` + "`sbx.inspect(\"ns.tool\")`" + ` (JSON Schemas). ` + "`sbx.preview(data)`" + ` summarizes
  a large result; ` + "`sbx.progress(done, total=None, message=None)`" + ` shows the user how far the code got.
`
