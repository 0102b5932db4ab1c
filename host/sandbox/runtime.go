package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
)

// RuntimeEnv names the environment variable that points at the runtime
// directory when none is configured.
const RuntimeEnv = "PARSELBOX_RUNTIME"

// Runtime is the pinned sandbox runtime installed by `make runtime`: the Deno
// binary and Pyodide, from the npm registry.
type Runtime struct {
	// Dir is the runtime directory (the one holding package.json).
	Dir string
	// Deno is the path of the deno binary.
	Deno string
	// Pyodide is the directory of the pyodide package.
	Pyodide string
	// Modules is the runtime's node_modules directory: just-bash (bash())
	// and its dependencies are imported from there.
	Modules string
	// JustBash are the directories of just-bash and of the packages it
	// imports (their dependencies included): the sandbox reads them when
	// the first bash() call imports it.
	JustBash []string
	// PyodideVersion is the version from Pyodide's package.json.
	PyodideVersion string
	// DenoVersion is the version from Deno's package.json ("" if unread):
	// what Deno compiles is valid for it only (runnerKey).
	DenoVersion string
}

// FindRuntime locates the runtime: dir if given, else $PARSELBOX_RUNTIME,
// else a "runtime" directory next to the executable or one level above it
// (bin/parselbox in a checkout finds ./runtime). The error says what to run
// when nothing is found.
func FindRuntime(dir string) (*Runtime, error) {
	var candidates []string
	switch {
	case dir != "":
		candidates = []string{dir}
	case os.Getenv(RuntimeEnv) != "":
		candidates = []string{os.Getenv(RuntimeEnv)}
	default:
		if exe, err := os.Executable(); err == nil {
			if real, err := filepath.EvalSymlinks(exe); err == nil {
				exe = real
			}
			d := filepath.Dir(exe)
			// bin/runtime, the checkout's runtime/ (bin/../runtime), and
			// where `make install` puts it (PREFIX/lib/parselbox/runtime).
			candidates = []string{filepath.Join(d, "runtime"), filepath.Join(d, "..", "runtime"),
				filepath.Join(d, "..", "lib", "parselbox", "runtime")}
		}
	}
	var errs []error
	for _, c := range candidates {
		rt, err := loadRuntime(c)
		if err == nil {
			return rt, nil
		}
		errs = append(errs, err)
	}
	if len(candidates) == 0 {
		errs = append(errs, errors.New("no runtime directory given"))
	}
	return nil, fmt.Errorf("%w: %w (run `make runtime` in the parselbox checkout, "+
		"then pass --runtime-dir or set %s to its runtime/ directory)", ErrNoRuntime, errors.Join(errs...), RuntimeEnv)
}

func loadRuntime(dir string) (*Runtime, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	rt := &Runtime{
		Dir:     abs,
		Deno:    filepath.Join(abs, "node_modules", "@deno", "linux-x64-glibc", "deno"),
		Pyodide: filepath.Join(abs, "node_modules", "pyodide"),
		Modules: filepath.Join(abs, "node_modules"),
	}
	if fi, err := os.Stat(rt.Deno); err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
		return nil, fmt.Errorf("%s: no executable deno at %s", dir, rt.Deno)
	}
	pkg, err := os.ReadFile(filepath.Join(rt.Pyodide, "package.json"))
	if err != nil {
		return nil, fmt.Errorf("%s: pyodide not installed: %w", dir, err)
	}
	var meta struct {
		Version string `json:"version"`
	}
	if err := json.Unmarshal(pkg, &meta); err != nil || meta.Version == "" {
		return nil, fmt.Errorf("%s: cannot read the pyodide version from its package.json", dir)
	}
	rt.PyodideVersion = meta.Version
	rt.DenoVersion = rt.PackageVersion("@deno/linux-x64-glibc")
	if _, err := os.Stat(filepath.Join(rt.Modules, filepath.FromSlash(justBashModule))); err != nil {
		return nil, fmt.Errorf("%s: just-bash not installed: %w", dir, err)
	}
	if rt.JustBash, err = packageClosure(rt.Modules, append([]string{"just-bash"}, justBashImports...)); err != nil {
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	for _, f := range pyodideFiles {
		if _, err := os.Stat(filepath.Join(rt.Pyodide, f)); err != nil {
			return nil, fmt.Errorf("%s: incomplete pyodide: %w", dir, err)
		}
	}
	return rt, nil
}

// justBashModule is just-bash's single-file ES module (the shell behind
// bash()), relative to node_modules. Its few bare imports (justBashImports)
// resolve in node_modules (--node-modules-dir=manual).
const justBashModule = "just-bash/dist/bundle/browser.js"

var justBashImports = []string{"diff", "minimatch", "sprintf-js", "turndown"}

// packageClosure is the directories of the named packages of node_modules
// and of their dependencies, transitively (a flat node_modules, as npm
// installs it).
func packageClosure(modules string, names []string) ([]string, error) {
	seen := map[string]bool{}
	var dirs []string
	for len(names) > 0 {
		name := names[0]
		names = names[1:]
		if seen[name] {
			continue
		}
		seen[name] = true
		dir := filepath.Join(modules, filepath.FromSlash(name))
		b, err := os.ReadFile(filepath.Join(dir, "package.json"))
		if err != nil {
			return nil, fmt.Errorf("package %s (needed by just-bash) not installed: %w", name, err)
		}
		var pkg struct {
			Dependencies map[string]string `json:"dependencies"`
		}
		if err := json.Unmarshal(b, &pkg); err != nil {
			return nil, fmt.Errorf("package %s: %w", name, err)
		}
		dirs = append(dirs, dir)
		for dep := range pkg.Dependencies {
			names = append(names, dep)
		}
	}
	sort.Strings(dirs)
	return dirs, nil
}

// pyodideFiles are the data files Pyodide reads at run time; the sandbox may
// read these and nothing else of the runtime (modules are imported statically).
var pyodideFiles = []string{"pyodide.asm.wasm", "python_stdlib.zip", "pyodide-lock.json"}

// PackageVersion is the version of an npm package of the runtime
// ("pyodide", "just-bash", "@deno/linux-x64-glibc") from its package.json,
// "" when it is not installed.
func (rt *Runtime) PackageVersion(name string) string {
	b, err := os.ReadFile(filepath.Join(rt.Dir, "node_modules", filepath.FromSlash(name), "package.json"))
	if err != nil {
		return ""
	}
	var pkg struct {
		Version string `json:"version"`
	}
	if json.Unmarshal(b, &pkg) != nil {
		return ""
	}
	return pkg.Version
}
