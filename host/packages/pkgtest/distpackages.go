package pkgtest

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// DistPackages is where Debian installs Python packages (python3-requests
// and the like): real pure-Python code a test can build wheels from.
const DistPackages = "/usr/lib/python3/dist-packages"

// FromDistPackages is the installed package module (a top-level package
// directory or module file of dir, such as DistPackages), as a Package named name, with
// its version from the installed metadata and requires as its
// dependencies (Debian's metadata leaves some out, so the test names them).
func FromDistPackages(dir, module, name string, requires ...string) (Package, error) {
	version := ""
	for _, pattern := range []string{module + "-*.dist-info", module + "-*.egg-info"} {
		if m, _ := filepath.Glob(filepath.Join(dir, pattern)); len(m) > 0 {
			v := strings.TrimPrefix(filepath.Base(m[0]), module+"-")
			version = strings.TrimSuffix(strings.TrimSuffix(v, ".dist-info"), ".egg-info")
			break
		}
	}
	if version == "" {
		return Package{}, fmt.Errorf("%s: no installed metadata for %s", dir, module)
	}
	var files map[string]string
	if b, err := os.ReadFile(filepath.Join(dir, module+".py")); err == nil { // a module, not a package
		files = map[string]string{module + ".py": string(b)}
	} else if files, err = readTree(os.DirFS(dir), module, ""); err != nil {
		return Package{}, err
	}
	return Package{Name: name, Version: version, Files: files, Requires: requires, Imports: []string{module}}, nil
}

// readTree reads the files under root in fsys, leaving out Python's
// caches, by their paths without prefix.
func readTree(fsys fs.FS, root, prefix string) (map[string]string, error) {
	files := map[string]string{}
	err := fs.WalkDir(fsys, root, func(p string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case d.IsDir() && d.Name() == "__pycache__":
			return fs.SkipDir
		case d.IsDir() || strings.HasSuffix(p, ".pyc"):
			return nil
		}
		b, err := fs.ReadFile(fsys, p)
		if err != nil {
			return err
		}
		files[strings.TrimPrefix(p, prefix)] = string(b)
		return nil
	})
	return files, err
}
