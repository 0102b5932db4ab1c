package host

import (
	"cmp"
	"strings"

	"github.com/parselbox/parselbox/host/packages"
)

// The guide's lines on bash(), js() and require(): the call shape in a
// line or two each; the details are their docstrings, help(bash),
// help(js) and help(require) in the sandbox (host/sandbox/runner/python).

const guideMore = `
## Shell and JavaScript (details: help(bash), help(js), help(require))
- ` + "`bash(\"grep -c x data.csv | sort\")`" + ` returns stdout: an emulated shell (pipes, grep/sed/awk/jq/curl...)
  over the same files, in /workspace, fresh per call; a non-zero exit with stderr raises
  ` + "`RuntimeError(\"bash exit N: ...\")`" + `.
- ` + "`js(\"return a + 1\", a=1)`" + ` runs the body of an async JavaScript function (same files and network);
  its result comes back as Python data.
- ` + "`m = require(\"lodash\")`" + ` (npm) or ` + "`require(\"./utils.ts\")`" + ` (a local .js/.ts file): call its functions and
  classes from Python (` + "`m.chunk([1, 2, 3], 2)`" + `); js() sees it as ` + "`lodash`" + `, ` + "`utils`" + `.
`

// npmLine is the guide's line on npm packages.
func (s *Sandbox) npmLine() string {
	names := s.npmNames()
	if len(names) == 0 && !s.cfg.AllowRuntimePackages {
		return "- npm packages: none installed (the host's packages = [\"npm:NAME@VERSION\"] adds some).\n"
	}
	line := "- npm packages for require(): " + cmp.Or(strings.Join(names, ", "), "none declared")
	if s.cfg.AllowRuntimePackages {
		line += "; others are installed by the host on require()"
	}
	return line + ".\n"
}

// npmNames are the configuration's npm packages, as "NAME@VERSION".
func (s *Sandbox) npmNames() []string {
	_, npm, _ := packages.Split(s.cfg.Packages)
	names := make([]string, len(npm))
	for i, p := range npm {
		names[i] = strings.TrimPrefix(p.String(), packages.NPMPrefix)
	}
	return names
}

// npmInfo is what sbx.info() says about JavaScript.
func (s *Sandbox) npmInfo() map[string]any {
	return map[string]any{
		"functions":       []string{"js(code, **kwargs)", "require(name, alias=None)"},
		"npm_packages":    s.npmNames(),
		"runtime_install": s.cfg.AllowRuntimePackages,
	}
}
