package packages

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"html"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// A simple index (PEP 503 HTML or PEP 691 JSON) gives wheels by name (pure
// Python, or built for the runtime's Pyodide); their Requires-Dist are resolved against the Pyodide lock first
// (what Pyodide already builds), then the simple index again. The closure
// found for a name is kept in the store, so a second start asks nothing.

type simpleFile struct {
	Filename string            `json:"filename"`
	URL      string            `json:"url"`
	Hashes   map[string]string `json:"hashes"`
	Yanked   any               `json:"yanked"`
}

var anchorRE = regexp.MustCompile(`(?is)<a\s[^>]*href\s*=\s*["']([^"']+)["'][^>]*>([^<]*)</a>`)

// simpleFiles lists a project's files on a simple index.
func (s *Store) simpleFiles(ctx context.Context, base, name string) ([]simpleFile, error) {
	page := base + Normalize(name) + "/"
	b, err := s.get(ctx, page)
	if err != nil {
		return nil, err
	}
	trimmed := bytes.TrimSpace(b)
	var files []simpleFile
	if len(trimmed) > 0 && trimmed[0] == '{' {
		var doc struct {
			Files []simpleFile `json:"files"`
		}
		if err := json.Unmarshal(trimmed, &doc); err != nil {
			return nil, fmt.Errorf("%s: %w", page, err)
		}
		files = doc.Files
	} else {
		for _, m := range anchorRE.FindAllStringSubmatch(string(b), -1) {
			href := html.UnescapeString(m[1])
			f := simpleFile{Filename: strings.TrimSpace(html.UnescapeString(m[2])), URL: href}
			if loc, frag, ok := strings.Cut(href, "#"); ok {
				f.URL = loc
				if h, ok := strings.CutPrefix(frag, "sha256="); ok {
					f.Hashes = map[string]string{"sha256": h}
				}
			}
			files = append(files, f)
		}
	}
	pageURL, err := url.Parse(page)
	if err != nil {
		return nil, err
	}
	web := files[:0]
	for _, f := range files {
		if u, err := pageURL.Parse(f.URL); err == nil {
			f.URL = u.String()
		}
		if webURL(f.URL) { // (not a file of the host's)
			web = append(web, f)
		}
	}
	return web, nil
}

// newerVersion compares dotted versions numerically where they are numbers.
func newerVersion(a, b string) bool {
	pa, pb := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < len(pa) || i < len(pb); i++ {
		var x, y string
		if i < len(pa) {
			x = pa[i]
		}
		if i < len(pb) {
			y = pb[i]
		}
		nx, ex := strconv.Atoi(x)
		ny, ey := strconv.Atoi(y)
		switch {
		case ex == nil && ey == nil && nx != ny:
			return nx > ny
		case (ex != nil || ey != nil) && x != y:
			return x > y
		}
	}
	return false
}

type cachedWheel struct {
	Name, File, SHA256 string
	Imports, Depends   []string
	Libs               []string `json:",omitempty"`
}

// resolveSimple installs names from a simple index.
func (s *Store) resolveSimple(ctx context.Context, base string, lockIx *index, tg Target, names []string) ([]Wheel, error) {
	var wheels []Wheel
	var problems []string
	for _, n := range names {
		ws, err := s.simpleClosure(ctx, base, lockIx, tg, n)
		if err != nil {
			problems = append(problems, problemsOf(err)...)
			continue
		}
		wheels = append(wheels, ws...)
	}
	return installed(wheels, problems)
}

func (s *Store) simpleClosure(ctx context.Context, base string, lockIx *index, tg Target, name string) ([]Wheel, error) {
	name = PackageForImport(name)
	record := filepath.Join(s.Dir, "indexes", sha256Hex([]byte(base))[:16]+"-"+Normalize(name)+".json")
	if out := s.recorded(record); out != nil {
		return out, nil
	}
	var out []Wheel
	var problems []string
	seen := map[string]bool{}
	var visit func(req, from string)
	visit = func(req, from string) {
		key := Normalize(req)
		if seen[key] {
			return
		}
		seen[key] = true
		if lockIx != nil {
			if pkgs, missing := lockIx.lock.Closure([]string{req}); len(missing) == 0 {
				ws, more := s.fromLock(ctx, lockIx, tg, pkgs)
				out = append(out, ws...)
				problems = append(problems, more...)
				return
			}
		}
		w, deps, err := s.simpleWheel(ctx, base, tg, req)
		if err != nil {
			if from != "" {
				err = fmt.Errorf("%w (a dependency of %s)", err, from)
			}
			problems = append(problems, err.Error())
			return
		}
		for _, d := range deps {
			visit(d, w.Name)
			w.Depends = append(w.Depends, Normalize(d))
		}
		out = append(out, w)
	}
	visit(name, "")
	if len(problems) > 0 {
		return nil, &InstallError{Problems: problems}
	}
	var cached []cachedWheel
	for _, w := range out {
		cached = append(cached, cachedWheel{Name: w.Name, File: w.File, SHA256: w.SHA256, Imports: w.Imports, Depends: w.Depends, Libs: w.Libs})
	}
	if b, err := json.Marshal(cached); err == nil {
		_ = writeAtomic(record, b)
	}
	return out, nil
}

// recorded is the closure that simpleClosure kept in record, or nil when
// there is none or a wheel of it is no longer in the store as it was.
func (s *Store) recorded(record string) []Wheel {
	var cached []cachedWheel
	if b, err := os.ReadFile(record); err != nil || json.Unmarshal(b, &cached) != nil {
		return nil
	}
	var out []Wheel
	for _, c := range cached {
		b, err := os.ReadFile(c.File)
		if err != nil || sha256Hex(b) != c.SHA256 {
			return nil
		}
		w, err := s.unpacked(c.File, c.SHA256, c.Imports)
		if err != nil {
			return nil
		}
		w.Name, w.Depends, w.Libs = c.Name, c.Depends, c.Libs
		out = append(out, w)
	}
	return out
}

// simpleWheel fetches the newest wheel of name that is pure Python or built
// for tg, and returns its dependencies (Requires-Dist that apply in
// Pyodide).
func (s *Store) simpleWheel(ctx context.Context, base string, tg Target, name string) (Wheel, []string, error) {
	files, err := s.simpleFiles(ctx, base, name)
	if err != nil {
		return Wheel{}, nil, fmt.Errorf("%s: not found on the simple index %s: %v", name, base, err)
	}
	var best *simpleFile
	var bestVersion string
	for i, f := range files {
		if y, _ := f.Yanked.(bool); y {
			continue
		}
		if s, ok := f.Yanked.(string); ok && s != "" {
			continue
		}
		v, _, _, _, ok := wheelTags(f.Filename)
		if ok && tg.Compatible(f.Filename) == nil && (best == nil || newerVersion(v, bestVersion)) {
			best, bestVersion = &files[i], v
		}
	}
	if best == nil {
		return Wheel{}, nil, fmt.Errorf("%s: the simple index %s has no wheel of it that Pyodide can install (pure Python, or built for %s)", name, base, tg)
	}
	file, sum, err := s.fetchWheel(ctx, best.URL, best.Filename, best.Hashes["sha256"])
	if err != nil {
		return Wheel{}, nil, fmt.Errorf("%s: %w", name, err)
	}
	w, err := s.unpacked(file, sum, nil)
	if err != nil {
		return Wheel{}, nil, fmt.Errorf("%s: %w", name, err)
	}
	w.Name = Normalize(name)
	deps, err := requiresDist(file)
	if err != nil {
		return Wheel{}, nil, fmt.Errorf("%s: %w", name, err)
	}
	return w, deps, nil
}

var reqNameRE = regexp.MustCompile(`^\s*([A-Za-z0-9][A-Za-z0-9._-]*)`)

// requiresDist reads a wheel's METADATA and returns the names it requires
// in Pyodide (extras and markers that do not hold are left out).
func requiresDist(file string) ([]string, error) {
	zr, err := zip.OpenReader(file)
	if err != nil {
		return nil, err
	}
	defer zr.Close()
	for _, f := range zr.File {
		if !strings.HasSuffix(f.Name, ".dist-info/METADATA") || strings.Count(f.Name, "/") != 1 {
			continue
		}
		b, err := readMember(f)
		if err != nil {
			return nil, err
		}
		var deps []string
		for _, line := range strings.Split(string(b), "\n") {
			if line == "" || line == "\r" {
				break // the headers end
			}
			v, ok := strings.CutPrefix(line, "Requires-Dist:")
			if !ok {
				continue
			}
			req, marker, _ := strings.Cut(v, ";")
			if !markerHolds(marker) {
				continue
			}
			if m := reqNameRE.FindStringSubmatch(req); m != nil {
				deps = append(deps, m[1])
			}
		}
		return deps, nil
	}
	return nil, nil
}

// pyodideMarkers are the environment markers of Pyodide's Python.
var pyodideMarkers = map[string]string{
	"python_version": "3.14", "python_full_version": "3.14.2", "sys_platform": "emscripten",
	"platform_system": "Emscripten", "os_name": "posix", "implementation_name": "cpython",
	"platform_python_implementation": "CPython", "platform_machine": "wasm32",
}

var markerRE = regexp.MustCompile(`^\s*\(?\s*([a-z_]+|"[^"]*"|'[^']*')\s*(==|!=|<=|>=|<|>|~=|not in|in)\s*([a-z_]+|"[^"]*"|'[^']*')\s*\)?\s*$`)

// markerHolds evaluates a PEP 508 marker for Pyodide: "or" of "and" of
// comparisons; an extra never holds (no extras are installed); what it
// cannot read holds.
func markerHolds(marker string) bool {
	marker = strings.TrimSpace(marker)
	if marker == "" {
		return true
	}
	fails := func(c string) bool { return !comparisonHolds(c) }
	for _, alt := range strings.Split(marker, " or ") {
		if !slices.ContainsFunc(strings.Split(alt, " and "), fails) {
			return true
		}
	}
	return false
}

func comparisonHolds(c string) bool {
	m := markerRE.FindStringSubmatch(c)
	if m == nil {
		return true
	}
	if m[1] == "extra" || m[3] == "extra" {
		return false
	}
	value := func(s string) (string, bool) {
		if strings.HasPrefix(s, `"`) || strings.HasPrefix(s, "'") {
			return s[1 : len(s)-1], true
		}
		v, ok := pyodideMarkers[s]
		return v, ok
	}
	l, lok := value(m[1])
	r, rok := value(m[3])
	if !lok || !rok {
		return true
	}
	switch m[2] {
	case "==":
		return l == r
	case "!=":
		return l != r
	case "in":
		return strings.Contains(r, l)
	case "not in":
		return !strings.Contains(r, l)
	case "<":
		return newerVersion(r, l)
	case ">":
		return newerVersion(l, r)
	case "<=":
		return !newerVersion(l, r)
	case ">=", "~=":
		return !newerVersion(r, l)
	}
	return true
}
