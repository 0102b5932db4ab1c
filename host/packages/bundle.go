package packages

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Bundle installs entries as Install does and writes them to dir as a
// Pyodide index: the wheels and a pyodide-lock.json that lists them with
// their checksums, import names and dependencies. A host without the
// internet uses the directory as its package_index.
func (s *Store) Bundle(ctx context.Context, src Source, entries []string, dir string) ([]Wheel, error) {
	wheels, err := s.Install(ctx, src, entries)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	lock := Lock{Packages: map[string]LockPackage{}}
	lock.Info.Python = "3.14"
	if tg := runtimeTarget(src); tg.Python != "" {
		lock.Info.Python, lock.Info.ABIVersion, lock.Info.Platform = tg.Python, tg.ABIVersion, tg.Platform
	}
	if b, err := os.ReadFile(filepath.Join(dir, LockFile)); err == nil {
		if old, err := ParseLock(b); err == nil {
			lock = *old // add to the bundle already there
		}
	}
	for _, w := range wheels {
		b, err := os.ReadFile(w.File)
		if err != nil {
			return nil, err
		}
		name := filepath.Base(w.File)
		if err := writeAtomic(filepath.Join(dir, name), b); err != nil {
			return nil, err
		}
		version := ""
		if parts := strings.Split(strings.TrimSuffix(strings.TrimSuffix(name, ".whl"), ".zip"), "-"); len(parts) > 1 {
			version = parts[1]
		}
		kind, installDir, imports := "package", "site", w.Imports
		if len(w.Libs) > 0 { // a shared library package
			kind, installDir, imports = "shared_library", "dynlib", nil
		}
		lock.Packages[Normalize(w.Name)] = LockPackage{
			Name: w.Name, Version: version, FileName: name, SHA256: w.SHA256,
			PackageType: kind, InstallDir: installDir, Imports: imports, Depends: w.Depends,
		}
	}
	b, err := json.MarshalIndent(lock, "", "  ")
	if err != nil {
		return nil, err
	}
	if err := writeAtomic(filepath.Join(dir, LockFile), b); err != nil {
		return nil, fmt.Errorf("writing %s: %w", LockFile, err)
	}
	return wheels, nil
}
