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
	files := map[string]string{}
	if b, err := os.ReadFile(filepath.Join(dir, module+".py")); err == nil { // a module, not a package
		files[module+".py"] = string(b)
		return Package{Name: name, Version: version, Files: files, Requires: requires, Imports: []string{module}}, nil
	}
	root := filepath.Join(dir, module)
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if d.Name() == "__pycache__" {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(p, ".pyc") {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		files[filepath.ToSlash(rel)] = string(b)
		return nil
	})
	if err != nil {
		return Package{}, err
	}
	return Package{Name: name, Version: version, Files: files, Requires: requires, Imports: []string{module}}, nil
}
