package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/parselbox/parselbox/host/packages"
	"github.com/parselbox/parselbox/host/sandbox"
	"github.com/parselbox/parselbox/sdk"
)

// installPackages installs the configuration's Python packages on the host
// (package packages) before the sandbox starts, and gives the sandbox the
// unpacked wheels, read-only. The sandbox's network rules do not change:
// the host downloads, the sandbox only reads.
func (s *Sandbox) installPackages(ctx context.Context, opts *sandbox.Options) error {
	cfg := &s.cfg
	python, npm, err := packages.Split(cfg.Packages)
	if err != nil {
		return configErrorf("%w", err)
	}
	if len(python) == 0 && len(npm) == 0 && !cfg.AllowRuntimePackages {
		return nil
	}
	store, err := s.packageStore(opts)
	if err != nil {
		return err
	}
	s.pkgs = store
	if len(npm) > 0 || cfg.AllowRuntimePackages {
		if err := s.installNPM(ctx, store, opts, npm); err != nil {
			return err
		}
	}
	if len(python) == 0 && !cfg.AllowRuntimePackages {
		return nil
	}
	s.pkgSource = packages.Source{
		Index:          cfg.PackageIndex,
		RuntimeLock:    filepath.Join(opts.Runtime.Pyodide, packages.LockFile),
		PyodideVersion: opts.Runtime.PyodideVersion,
	}
	if err := os.MkdirAll(store.SiteDir(), 0o755); err != nil {
		return fmt.Errorf("package directory: %w", err)
	}
	opts.Packages = &sandbox.Packages{Dir: store.SiteDir(), Runtime: cfg.AllowRuntimePackages}
	if cfg.PackageIndex != "" {
		// micropip's index is the configuration's, not PyPI.
		// An index out of reach leaves micropip without one (nothing is
		// looked up on PyPI either); the start goes on, as it does without
		// micropip: packages are installed by the host, which says then
		// what it could not reach.
		simple, lock, err := store.MicropipIndex(ctx, s.pkgSource)
		if err != nil {
			s.log.Warn("micropip gets no package index: the configured one could not be read", "package_index", cfg.PackageIndex, "error", err)
		}
		opts.Packages.Micropip = &sandbox.Micropip{IndexURLs: []string{}, Lock: lock}
		if simple != "" {
			// (micropip appends "/NAME/")
			opts.Packages.Micropip.IndexURLs = []string{strings.TrimSuffix(simple, "/")}
		}
	}
	python = s.withoutStdlib(opts, python)
	if len(python) == 0 {
		return nil
	}
	var (
		wheels []packages.Wheel
		wg     sync.WaitGroup
	)
	wg.Go(func() { wheels, err = store.Install(ctx, s.pkgSource, python) })
	// A long download or unpacking is named on the way (Config.Notify).
	s.waitNoting(&wg, slowAfter, "installing Python packages", func() []string { return python })
	if _, ok := errors.AsType[*packages.InstallError](err); ok {
		return configErrorf("%w", err)
	}
	if err != nil {
		return fmt.Errorf("installing packages: %w", err)
	}
	binary := compiled(wheels)
	for _, w := range wheels {
		opts.Packages.Paths = append(opts.Packages.Paths, w.Site)
		opts.Packages.Libs = append(opts.Packages.Libs, w.Libs...)
		if binary[packages.Normalize(w.Name)] {
			// Pyodide's memory snapshot holds the heap only, not the
			// WebAssembly modules a dynamic library adds: imported on use.
			s.log.Debug("package ready (compiled: imported on first use, not in the snapshot)", "name", w.Name, "sha256", w.SHA256, "imports", w.Imports)
			continue
		}
		opts.Packages.Preload = append(opts.Packages.Preload, w.Imports...)
		s.log.Debug("package ready", "name", w.Name, "sha256", w.SHA256, "imports", w.Imports)
	}
	s.log.Info("packages installed by the host", "count", len(wheels), "dir", store.Dir)
	return nil
}

// compiled are the wheels (by normalized name) whose import loads compiled
// code: those with extension modules or shared libraries, and those that
// depend on one, as far as their dependencies are known.
func compiled(wheels []packages.Wheel) map[string]bool {
	out := map[string]bool{}
	isCompiled := func(name string) bool { return out[packages.Normalize(name)] }
	for changed := true; changed; {
		changed = false
		for _, w := range wheels {
			if !isCompiled(w.Name) && (w.Binary || len(w.Libs) > 0 || slices.ContainsFunc(w.Depends, isCompiled)) {
				out[packages.Normalize(w.Name)], changed = true, true
			}
		}
	}
	return out
}

// withoutStdlib leaves out the names of packages that are modules of the
// runtime's standard library (importable as they are: nothing to install).
func (s *Sandbox) withoutStdlib(opts *sandbox.Options, python []string) []string {
	stdlib, err := packages.StdlibModules(filepath.Join(opts.Runtime.Pyodide, "python_stdlib.zip"))
	if err != nil {
		s.log.Warn("reading the standard library's module names", "error", err)
		return python
	}
	var out, skipped []string
	for _, p := range python {
		if root, _, _ := strings.Cut(strings.TrimSpace(p), "."); packages.IsName(p) && stdlib[root] {
			skipped = append(skipped, p)
			continue
		}
		out = append(out, p)
	}
	if len(skipped) > 0 {
		s.log.Info("packages that are in the standard library: nothing to install", "names", skipped)
	}
	return out
}

// packageStore is the package directory: the configuration's, or the
// cache directory's.
func (s *Sandbox) packageStore(opts *sandbox.Options) (*packages.Store, error) {
	dir := s.cfg.PackageDir
	if dir == "" {
		cache := opts.CacheDir
		if cache == "" {
			var err error
			if cache, err = sandbox.DefaultCacheDir(); err != nil {
				return nil, fmt.Errorf("packages: no cache directory: %w", err)
			}
		}
		dir = packages.Dir(cache)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	client, err := packageClient(opts.CAFile)
	if err != nil {
		return nil, err
	}
	return &packages.Store{Dir: abs, Client: client, Log: s.log.Named("packages")}, nil
}

// runtimePackages installs, before an execution, the modules code imports
// that the sandbox cannot find (allow_runtime_packages), each the way
// declared packages are. What cannot be installed is logged; the import
// then fails in Python with ModuleNotFoundError.
func (s *Sandbox) runtimePackages(ctx context.Context, code string) error {
	missing, err := s.sb.MissingImports(ctx, code)
	if err != nil || len(missing) == 0 {
		return err
	}
	var paths, libs []string
	for _, name := range missing {
		if !packages.IsName(name) { // (an import name; never a path or URL)
			s.log.Warn("runtime package not installed: not a name", "import", name)
			continue
		}
		wheels, err := s.pkgs.Install(ctx, s.pkgSource, []string{name})
		if err != nil {
			s.log.Warn("runtime package not installed", "import", name, "error", err)
			continue
		}
		for _, w := range wheels {
			paths = append(paths, w.Site)
			libs = append(libs, w.Libs...)
		}
		s.log.Info("runtime package installed", "import", name, "wheels", len(wheels))
	}
	if len(paths) == 0 {
		return nil
	}
	return s.sb.AddPackages(ctx, paths, libs)
}

// guestPackages installs packages of Pyodide's distribution that code in
// the sandbox asked for (micropip.install of a package in Pyodide's lock),
// the way runtime packages are, if allow_runtime_packages is on; otherwise
// it says how to declare them.
func (s *Sandbox) guestPackages(ctx context.Context, names []string) (any, error) {
	list := strings.Join(names, ", ")
	for _, n := range names {
		// A path or URL would have the host read a host directory or
		// file, or fetch what the sandbox may not: names only.
		if !packages.IsName(n) {
			return nil, &sandbox.RemoteError{Type: sdk.CodeInvalidArgument.Python(), Message: fmt.Sprintf(
				"%q is not a package name: the host installs packages of its package index by name", n)}
		}
	}
	if !s.cfg.AllowRuntimePackages || s.pkgs == nil {
		return nil, &sandbox.RemoteError{Type: "ModuleNotFoundError", Message: fmt.Sprintf(
			"%s: packages of Pyodide's distribution are installed by the host: add them to packages (--packages NAME), "+
				"or set allow_runtime_packages (--allow-runtime-packages) to have the host install them when asked", list)}
	}
	wheels, err := s.pkgs.Install(ctx, s.pkgSource, names)
	if err != nil {
		s.log.Warn("packages asked for by the sandbox not installed", "names", names, "error", err)
		return nil, &sandbox.RemoteError{Type: "ModuleNotFoundError", Message: fmt.Sprintf("the host could not install %s: %v", list, err)}
	}
	var paths, libs []string
	for _, w := range wheels {
		paths = append(paths, w.Site)
		libs = append(libs, w.Libs...)
	}
	if err := s.sb.AddPackages(ctx, paths, libs); err != nil {
		return nil, err
	}
	s.log.Info("packages installed for the sandbox", "names", names, "wheels", len(wheels))
	return map[string]any{"paths": paths}, nil
}

// installNPM installs the configuration's npm packages (for require()) into
// the package directory before the sandbox starts, and gives the sandbox
// their directory, read-only.
func (s *Sandbox) installNPM(ctx context.Context, store *packages.Store, opts *sandbox.Options, npm []packages.NPM) error {
	dir := store.NPMDir(npm)
	err := store.InstallNPM(ctx, opts.Runtime.Deno, dir, npm)
	if _, ok := errors.AsType[*packages.InstallError](err); ok {
		return configErrorf("%w", err)
	}
	if err != nil {
		return fmt.Errorf("installing npm packages: %w", err)
	}
	opts.NPMDir = dir
	s.npm = npmInstaller{deno: opts.Runtime.Deno, dir: dir}
	if len(npm) > 0 {
		s.log.Info("npm packages installed by the host", "count", len(npm), "dir", dir)
	}
	return nil
}

// npmInstaller installs npm packages on request (allow_runtime_packages).
type npmInstaller struct {
	deno, dir string
}

// sandboxHandler serves the sandbox's npm.install requests (require() of a
// package that is not installed) and packages.install requests (micropip
// asking for a package of Pyodide's distribution); every other request goes
// to next.
type sandboxHandler struct {
	s    *Sandbox
	next sandbox.Handler
}

func (h sandboxHandler) ServeSandbox(ctx context.Context, method string, params json.RawMessage) (any, error) {
	switch method {
	case "packages.install":
		var p struct{ Names []string } // {"names": [...]}
		if err := json.Unmarshal(params, &p); err != nil {
			return nil, badRequest(method, err)
		}
		return h.s.guestPackages(ctx, p.Names)
	case "npm.install":
		var p struct{ Package string } // {"package": "..."}
		if err := json.Unmarshal(params, &p); err != nil {
			return nil, badRequest(method, err)
		}
		return h.s.runtimeNPM(ctx, p.Package)
	}
	return h.next.ServeSandbox(ctx, method, params)
}

func badRequest(method string, err error) error {
	return &sandbox.RemoteError{Type: sdk.CodeInvalidArgument.Python(), Message: "bad " + method + " request: " + err.Error()}
}

// runtimeNPM installs the npm package require() asked for, if
// allow_runtime_packages is on; otherwise it says how to declare it.
func (s *Sandbox) runtimeNPM(ctx context.Context, spec string) (any, error) {
	pkg, err := packages.ParseNPM(spec)
	if err == nil && !pkg.FromRegistry() {
		err = fmt.Errorf("%q is not a version of the npm registry (a version, a range or a tag; no path, URL or repository)", pkg.Version)
	}
	if _, declared, _ := packages.Split(s.cfg.Packages); err == nil {
		// The set's node_modules is every sandbox's of this configuration:
		// a declared package keeps the declared version.
		for _, d := range declared {
			if d.Name == pkg.Name && d.Version != pkg.Version {
				err = fmt.Errorf("%s is declared in packages (%s): its version is the configuration's", pkg.Name, d)
			}
		}
	}
	if err != nil {
		return nil, &sandbox.RemoteError{Type: sdk.CodeInvalidArgument.Python(), Message: fmt.Sprintf("require(%q): %v", spec, err)}
	}
	if !s.cfg.AllowRuntimePackages || s.npm.dir == "" {
		return nil, &sandbox.RemoteError{Type: "ModuleNotFoundError", Message: fmt.Sprintf(
			"npm package %q is not installed: the host installs npm packages; add %q to packages (--packages %s), "+
				"or set allow_runtime_packages (--allow-runtime-packages) to install what require() asks for",
			pkg.Name, pkg.String(), pkg.String())}
	}
	if err := s.pkgs.InstallNPM(ctx, s.npm.deno, s.npm.dir, []packages.NPM{pkg}); err != nil {
		s.log.Warn("runtime npm package not installed", "package", pkg.String(), "error", err)
		return nil, &sandbox.RemoteError{Type: "ModuleNotFoundError", Message: fmt.Sprintf(
			"npm package %q could not be installed by the host: %v", pkg.Name, err)}
	}
	s.log.Info("runtime npm package installed", "package", pkg.String())
	return map[string]any{"installed": pkg.String()}, nil
}
