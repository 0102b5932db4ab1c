package pkgtest

import (
	"archive/zip"
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"html"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
)

// Package is a package to build as a wheel: pure Python, or with compiled
// files (Tag names their platform), or a shared library package.
type Package struct {
	Name     string            // the distribution name ("pyyaml")
	Version  string            // "1.0" when empty
	Files    map[string]string // paths in site-packages → contents (bytes, for compiled files)
	Requires []string          // Requires-Dist lines' values ("beta", "x; extra == 'y'")
	Imports  []string          // the lock's import names
	// Tag is the wheel's tag ("cp312-abi3-pyemscripten_2026_0_wasm32");
	// empty: py3-none-any.
	Tag string
	// SharedLibrary makes it a shared library package of a Pyodide index
	// (as libopenblas): NAME-VERSION.zip holding Files, no metadata.
	SharedLibrary bool
}

func (p Package) tag() string { return cmp.Or(p.Tag, "py3-none-any") }

func (p Package) version() string { return cmp.Or(p.Version, "1.0") }

// FileName is the wheel's file name.
func (p Package) FileName() string {
	if p.SharedLibrary {
		return fmt.Sprintf("%s-%s.zip", p.Name, p.version())
	}
	return fmt.Sprintf("%s-%s-%s.whl", strings.ReplaceAll(p.Name, "-", "_"), p.version(), p.tag())
}

// Wheel builds the package's wheel.
func (p Package) Wheel(t testing.TB) []byte {
	t.Helper()
	b, err := p.Build()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Build builds the package's wheel.
func (p Package) Build() ([]byte, error) {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	distInfo := fmt.Sprintf("%s-%s.dist-info/", strings.ReplaceAll(p.Name, "-", "_"), p.version())
	meta := fmt.Sprintf("Metadata-Version: 2.1\nName: %s\nVersion: %s\n", p.Name, p.version())
	for _, r := range p.Requires {
		meta += "Requires-Dist: " + r + "\n"
	}
	meta += "\nA test package.\n"
	files := map[string]string{
		distInfo + "METADATA": meta,
		distInfo + "WHEEL":    fmt.Sprintf("Wheel-Version: 1.0\nGenerator: pkgtest\nRoot-Is-Purelib: %t\nTag: %s\n", p.Tag == "", p.tag()),
		distInfo + "RECORD":   "",
	}
	if p.SharedLibrary {
		files = map[string]string{}
	}
	maps.Copy(files, p.Files)
	for _, n := range slices.Sorted(maps.Keys(files)) {
		w, err := zw.Create(n)
		if err != nil {
			return nil, err
		}
		if _, err := w.Write([]byte(files[n])); err != nil {
			return nil, err
		}
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Index is a loopback package index: /pyodide/ is a Pyodide index,
// /simple/ a simple index (HTML with relative links, or JSON with absolute
// URLs as PyPI gives them, when asked), both over the same wheels in
// /files/.
type Index struct {
	*httptest.Server
	mu       sync.Mutex
	requests []string
	wheels   map[string][]byte // file name → bytes
	lock     map[string]any
	projects map[string][]string // normalized name → file names
	// BadSum, when set, makes the lock give a wrong checksum for this
	// package.
	BadSum string
	// HTMLOnly makes the simple index answer in HTML (PEP 503) only.
	HTMLOnly bool
}

// NewIndex builds the packages and serves them.
func NewIndex(t testing.TB, pkgs ...Package) *Index {
	t.Helper()
	ix := &Index{wheels: map[string][]byte{}, projects: map[string][]string{}}
	lockPkgs := map[string]any{}
	for _, p := range pkgs {
		b := p.Wheel(t)
		sum := sha256.Sum256(b)
		fn := p.FileName()
		ix.wheels[fn] = b
		key := normalize(p.Name)
		ix.projects[key] = append(ix.projects[key], fn)
		var deps []string
		for _, r := range p.Requires {
			if !strings.Contains(r, ";") {
				deps = append(deps, strings.Fields(r)[0])
			}
		}
		imports := p.Imports
		if imports == nil && !p.SharedLibrary {
			imports = []string{strings.ReplaceAll(p.Name, "-", "_")}
		}
		kind, dir := "package", "site"
		if p.SharedLibrary {
			kind, dir, imports = "shared_library", "dynlib", []string{}
		}
		lockPkgs[key] = map[string]any{
			"name": p.Name, "version": p.version(), "file_name": fn, "sha256": hex.EncodeToString(sum[:]),
			"package_type": kind, "install_dir": dir, "imports": imports, "depends": deps,
		}
	}
	ix.lock = map[string]any{"info": map[string]any{"python": "3.14.2"}, "packages": lockPkgs}
	ix.Server = httptest.NewServer(http.HandlerFunc(ix.serve))
	t.Cleanup(ix.Close)
	return ix
}

func normalize(n string) string {
	n = strings.ToLower(n)
	return strings.NewReplacer("_", "-", ".", "-").Replace(n)
}

// PyodideURL is the Pyodide index's URL; SimpleURL the simple index's.
func (ix *Index) PyodideURL() string { return ix.URL + "/pyodide/" }
func (ix *Index) SimpleURL() string  { return ix.URL + "/simple/" }

// Requests are the paths served so far.
func (ix *Index) Requests() []string {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	return append([]string(nil), ix.requests...)
}

func (ix *Index) serve(w http.ResponseWriter, r *http.Request) {
	ix.mu.Lock()
	ix.requests = append(ix.requests, r.URL.Path)
	bad, htmlOnly := ix.BadSum, ix.HTMLOnly
	ix.mu.Unlock()
	switch p := r.URL.Path; {
	case p == "/pyodide/pyodide-lock.json":
		lock := ix.lock
		if bad != "" {
			b, _ := json.Marshal(ix.lock)
			var copyLock map[string]any
			_ = json.Unmarshal(b, &copyLock)
			copyLock["packages"].(map[string]any)[normalize(bad)].(map[string]any)["sha256"] = strings.Repeat("0", 64)
			lock = copyLock
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(lock)
	case strings.HasPrefix(p, "/pyodide/"), strings.HasPrefix(p, "/files/"):
		name := p[strings.LastIndexByte(p, '/')+1:]
		b, ok := ix.wheels[name]
		if !ok {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write(b)
	case strings.HasPrefix(p, "/simple/") && strings.HasSuffix(p, "/"):
		project := strings.TrimSuffix(strings.TrimPrefix(p, "/simple/"), "/")
		files, ok := ix.projects[project]
		if !ok {
			http.NotFound(w, r)
			return
		}
		if strings.Contains(r.Header.Get("Accept"), "application/vnd.pypi.simple.v1+json") && !htmlOnly {
			var fs []map[string]any
			for _, f := range files {
				sum := sha256.Sum256(ix.wheels[f])
				fs = append(fs, map[string]any{"filename": f, "url": "http://" + r.Host + "/files/" + f, "hashes": map[string]string{"sha256": hex.EncodeToString(sum[:])}})
			}
			w.Header().Set("Content-Type", "application/vnd.pypi.simple.v1+json")
			_ = json.NewEncoder(w).Encode(map[string]any{"meta": map[string]string{"api-version": "1.0"}, "name": project, "files": fs})
			return
		}
		var sb strings.Builder
		sb.WriteString("<!DOCTYPE html><html><body>\n")
		for _, f := range files {
			sum := sha256.Sum256(ix.wheels[f])
			fmt.Fprintf(&sb, "<a href=\"../../files/%s#sha256=%s\">%s</a><br/>\n", html.EscapeString(f), hex.EncodeToString(sum[:]), html.EscapeString(f))
		}
		sb.WriteString("</body></html>\n")
		_, _ = w.Write([]byte(sb.String()))
	default:
		http.NotFound(w, r)
	}
}

// Fixtures are the test packages: alphapkg depends on betapkg (and, for
// an extra only, on a package nobody has); gammadata has data files (one
// in the wheel's .data/purelib); python-dotenv is imported as dotenv (an
// entry of the import-name map).
func Fixtures() []Package {
	return []Package{
		{Name: "alphapkg", Requires: []string{"betapkg (>=1.0)", `missingpkg ; extra == "docs"`, `oldpkg ; python_version < "3.8"`},
			Files: map[string]string{"alphapkg/__init__.py": "from betapkg import NAME as BETA\nGREETING = 'alpha+' + BETA\n"}},
		{Name: "betapkg", Files: map[string]string{"betapkg.py": "NAME = 'beta'\n"}},
		{Name: "gammadata", Files: map[string]string{
			"gammadata/__init__.py":                    "from importlib.resources import files\n\ndef words():\n    return files(__name__).joinpath('data/words.txt').read_text().split()\n",
			"gammadata/data/words.txt":                 "one two three\n",
			"gammadata-1.0.data/purelib/gammaextra.py": "EXTRA = True\n",
		}},
		{Name: "python-dotenv", Imports: []string{"dotenv"}, Files: map[string]string{"dotenv/__init__.py": "def load():\n    return 'dotenv ok'\n"}},
	}
}
