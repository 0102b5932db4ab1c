package host

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sync"

	"github.com/parselbox/parselbox/host/packages"
	"github.com/parselbox/parselbox/host/sandbox"
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
	if len(npm) > 0 {
		return configErrorf("packages: npm packages (%s) are not supported yet", npm[0])
	}
	if len(python) == 0 && !cfg.AllowRuntimePackages {
		return nil
	}
	store, err := s.packageStore(opts)
	if err != nil {
		return err
	}
	s.pkgs = store
	s.pkgSource = packages.Source{
		Index:          cfg.PackageIndex,
		RuntimeLock:    filepath.Join(opts.Runtime.Pyodide, packages.LockFile),
		PyodideVersion: opts.Runtime.PyodideVersion,
	}
	if err := os.MkdirAll(store.SiteDir(), 0o755); err != nil {
		return fmt.Errorf("package directory: %w", err)
	}
	opts.Packages = &sandbox.Packages{Dir: store.SiteDir(), Runtime: cfg.AllowRuntimePackages}
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
	var ie *packages.InstallError
	if errors.As(err, &ie) {
		return configErrorf("%w", err)
	}
	if err != nil {
		return fmt.Errorf("installing packages: %w", err)
	}
	for _, w := range wheels {
		opts.Packages.Paths = append(opts.Packages.Paths, w.Site)
		opts.Packages.Preload = append(opts.Packages.Preload, w.Imports...)
		s.log.Debug("package ready", "name", w.Name, "sha256", w.SHA256, "imports", w.Imports)
	}
	s.log.Info("packages installed by the host", "count", len(wheels), "dir", store.Dir)
	return nil
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
	return &packages.Store{Dir: abs, Client: http.DefaultClient, Log: s.log.Named("packages")}, nil
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
	var paths []string
	for _, name := range missing {
		wheels, err := s.pkgs.Install(ctx, s.pkgSource, []string{name})
		if err != nil {
			s.log.Warn("runtime package not installed", "import", name, "error", err)
			continue
		}
		for _, w := range wheels {
			paths = append(paths, w.Site)
		}
		s.log.Info("runtime package installed", "import", name, "wheels", len(wheels))
	}
	if len(paths) == 0 {
		return nil
	}
	return s.sb.AddPackages(ctx, paths)
}
