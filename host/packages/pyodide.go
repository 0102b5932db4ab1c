package packages

import (
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
)

// LockFile is the name of a Pyodide index's lock file.
const LockFile = "pyodide-lock.json"

// DefaultIndexURL is the official Pyodide distribution of a Pyodide version.
func DefaultIndexURL(pyodideVersion string) string {
	return "https://cdn.jsdelivr.net/pyodide/v" + pyodideVersion + "/full/"
}

// LockPackage is one package of a Pyodide lock file.
type LockPackage struct {
	Name        string   `json:"name"`
	Version     string   `json:"version"`
	FileName    string   `json:"file_name"`
	SHA256      string   `json:"sha256"`
	PackageType string   `json:"package_type"`
	InstallDir  string   `json:"install_dir"`
	Imports     []string `json:"imports"`
	Depends     []string `json:"depends"`
}

// MarshalJSON writes Imports and Depends as lists, [] when empty (never
// null): Pyodide iterates both when it loads a lock file (`for (let l of
// s.imports)`), as micropip does, and null is not iterable.
func (p LockPackage) MarshalJSON() ([]byte, error) {
	type plain LockPackage // without this method
	q := plain(p)
	if q.Imports == nil {
		q.Imports = []string{}
	}
	if q.Depends == nil {
		q.Depends = []string{}
	}
	return json.Marshal(q)
}

// SharedLibrary says the package is a shared library (libopenblas, ...),
// which Pyodide installs in its library directory for the extension
// modules that need it.
func (p LockPackage) SharedLibrary() bool {
	return p.PackageType == "shared_library" || p.InstallDir == "dynlib"
}

// Lock is a Pyodide lock file (pyodide-lock.json): the packages of an
// index, with their files, checksums, import names and dependencies.
type Lock struct {
	Info struct {
		Python     string `json:"python"`
		ABIVersion string `json:"abi_version"`
		Platform   string `json:"platform"`
	} `json:"info"`
	Packages map[string]LockPackage `json:"packages"`
}

// ParseLock reads a lock file's bytes.
func ParseLock(b []byte) (*Lock, error) {
	var l Lock
	if err := json.Unmarshal(b, &l); err != nil {
		return nil, fmt.Errorf("%s: %w", LockFile, err)
	}
	if l.Packages == nil {
		return nil, fmt.Errorf("%s: no packages", LockFile)
	}
	return &l, nil
}

// importNames maps import names to package names where they differ and the
// lock may not say so (the reference's table; numpy and test are not
// mapped).
var importNames = map[string]string{
	"cv2":      "opencv-python",
	"bs4":      "beautifulsoup4",
	"yaml":     "pyyaml",
	"PIL":      "pillow",
	"sklearn":  "scikit-learn",
	"dateutil": "python-dateutil",
	"attr":     "attrs",
	"google":   "protobuf",
	"jwt":      "pyjwt",
	"dotenv":   "python-dotenv",
	"Crypto":   "pycryptodome",
	"skimage":  "scikit-image",
	"serial":   "pyserial",
	"magic":    "python-magic",
}

// PackageForImport is the package an import name is installed from, by
// the fixed table (yaml → pyyaml, PIL → pillow, ...), else the name itself.
func PackageForImport(name string) string {
	root, _, _ := strings.Cut(name, ".")
	if p, ok := importNames[root]; ok {
		return p
	}
	return root
}

var nonNameRun = regexp.MustCompile(`[-_.]+`)

// Normalize is a package name as PEP 503 compares names.
func Normalize(name string) string {
	return strings.ToLower(nonNameRun.ReplaceAllString(name, "-"))
}

// find returns the lock's package for a package or import name.
func (l *Lock) find(name string) (LockPackage, bool) {
	for _, n := range []string{Normalize(name), Normalize(PackageForImport(name))} {
		for key, p := range l.Packages {
			if Normalize(key) == n || Normalize(p.Name) == n {
				return p, true
			}
		}
	}
	root, _, _ := strings.Cut(name, ".")
	// Sorted: one answer when two packages claim an import.
	for _, k := range slices.Sorted(maps.Keys(l.Packages)) {
		if slices.Contains(l.Packages[k].Imports, root) {
			return l.Packages[k], true
		}
	}
	return LockPackage{}, false
}

// Closure resolves names (package or import names) to the packages they
// need, dependencies included, each once, dependencies first. Names the
// lock does not have are returned in missing.
func (l *Lock) Closure(names []string) (pkgs []LockPackage, missing []string) {
	seen := map[string]bool{}
	var visit func(p LockPackage)
	visit = func(p LockPackage) {
		key := Normalize(p.Name)
		if seen[key] {
			return
		}
		seen[key] = true
		for _, d := range p.Depends {
			if dp, ok := l.find(d); ok {
				visit(dp)
			} else {
				missing = append(missing, d+" (a dependency of "+p.Name+")")
			}
		}
		pkgs = append(pkgs, p)
	}
	for _, n := range names {
		p, ok := l.find(n)
		if !ok {
			missing = append(missing, n)
			continue
		}
		visit(p)
	}
	return pkgs, missing
}
