package host

import (
	"strings"

	"github.com/parselbox/parselbox/host/packages"
)

// The guide's lines on JavaScript: js(), require() and what is installed.

const guideJS = `
## JavaScript
- ` + "`js(code, **kwargs)`" + ` runs code as the body of a fresh async JS function (` + "`return`" + ` a value;
  ` + "`await`" + ` works; nothing persists between calls). kwargs arrive as JS values (dict → object,
  bytes → Uint8Array, functions callable from JS); the result comes back as Python data.
  ` + "`resolvePath(\"data.csv\")`" + ` gives the host path of a file for Deno's file APIs;
  ` + "`sbx.progress(done, total, message)`" + ` reports progress as in Python. JS has the same
  files and network as Python, and no environment or processes.
- ` + "`m = require(\"lodash\")`" + ` loads an npm package installed by the host; ` + "`require(\"./utils.ts\")`" + ` a local
  .js/.ts file (re-read on every call). Functions are called from Python (` + "`m.chunk([1, 2, 3], 2)`" + `),
  classes constructed (` + "`Vec(1, 2)`" + `), objects keep their methods (` + "`dayjs(\"2024-01-01\").add(1, \"day\")`" + `);
  the module is also in js() under its alias (` + "`js-yaml`" + ` → ` + "`jsYaml`" + `, ` + "`./my-utils.ts`" + ` → ` + "`myUtils`" + `).
`

// npmLine is the guide's line on npm packages, or "".
func (s *Sandbox) npmLine() string {
	_, npm, _ := packages.Split(s.cfg.Packages)
	if len(npm) == 0 && !s.cfg.AllowRuntimePackages {
		return "- npm packages: none installed; require() of a package fails (the host installs them: packages = [\"npm:NAME@VERSION\"]).\n"
	}
	var b strings.Builder
	b.WriteString("- npm packages for require(): ")
	if len(npm) > 0 {
		names := make([]string, len(npm))
		for i, p := range npm {
			names[i] = strings.TrimPrefix(p.String(), packages.NPMPrefix)
		}
		b.WriteString(strings.Join(names, ", "))
	} else {
		b.WriteString("none declared")
	}
	if s.cfg.AllowRuntimePackages {
		b.WriteString("; others are installed by the host on require()")
	}
	b.WriteString(".\n")
	return b.String()
}

// npmInfo is what sbx.info() says about JavaScript.
func (s *Sandbox) npmInfo() map[string]any {
	_, npm, _ := packages.Split(s.cfg.Packages)
	names := []string{}
	for _, p := range npm {
		names = append(names, strings.TrimPrefix(p.String(), packages.NPMPrefix))
	}
	return map[string]any{
		"functions":       []string{"js(code, **kwargs)", "require(name, alias=None)"},
		"npm_packages":    names,
		"runtime_install": s.cfg.AllowRuntimePackages,
	}
}
