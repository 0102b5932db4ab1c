package packages

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Source is where Python packages come from.
type Source struct {
	// Index is a Pyodide index (a URL or a directory holding
	// pyodide-lock.json and its wheels), or a PEP 503/691 simple index URL
	// (one without pyodide-lock.json). Empty: the runtime's lock file with
	// the official distribution's wheels (DefaultIndexURL).
	Index string
	// RuntimeLock is the pinned Pyodide's own lock file.
	RuntimeLock string
	// PyodideVersion names the official distribution.
	PyodideVersion string
}

// index is a loaded Pyodide index: its lock, and where its files are.
type index struct {
	lock *Lock
	base string // a URL or directory, ending in "/"
}

func (ix *index) fileURL(fileName string) string {
	if strings.Contains(fileName, "://") {
		return fileName
	}
	return ix.base + fileName
}

// InstallError lists what could not be installed, and why.
type InstallError struct {
	Problems []string
}

func (e *InstallError) Error() string {
	return "packages: " + strings.Join(e.Problems, "; ")
}

// Install makes the Python entries (package or import names, wheel files
// or URLs, directories of wheels) ready in the store, dependencies
// included, and returns the wheels to use, dependencies first. What cannot
// be installed is an *InstallError naming each entry and why (a checksum
// mismatch is reported as a *ChecksumError inside it).
func (s *Store) Install(ctx context.Context, src Source, entries []string) ([]Wheel, error) {
	unlock, err := s.lock()
	if err != nil {
		return nil, err
	}
	defer unlock()

	var wheels []Wheel
	var problems []string
	seen := map[string]bool{}
	add := func(ws ...Wheel) {
		for _, w := range ws {
			if !seen[w.SHA256] {
				seen[w.SHA256] = true
				wheels = append(wheels, w)
			}
		}
	}
	tg := runtimeTarget(src)
	var names []string
	for _, e := range entries {
		e = strings.TrimSpace(e)
		switch {
		case strings.HasSuffix(strings.SplitN(e, "#", 2)[0], ".whl"):
			w, err := s.explicitWheel(ctx, e, tg)
			if err != nil {
				problems = append(problems, fmt.Sprintf("%s: %v", e, err))
				continue
			}
			add(w)
		case !strings.Contains(e, "://") && isDir(e):
			ws, err := s.wheelDir(e, tg)
			if err != nil {
				problems = append(problems, fmt.Sprintf("%s: %v", e, err))
			}
			add(ws...)
		default:
			names = append(names, e)
		}
	}
	if len(names) > 0 {
		ws, err := s.resolveNames(ctx, src, tg, names)
		problems = append(problems, problemsOf(err)...)
		add(ws...)
	}
	return installed(wheels, problems)
}

// problemsOf is what err says could not be installed: an *InstallError's
// problems (not "packages: packages: ..."), else its message; none for nil.
func problemsOf(err error) []string {
	if ie, ok := errors.AsType[*InstallError](err); ok {
		return ie.Problems
	}
	if err != nil {
		return []string{err.Error()}
	}
	return nil
}

// installed is wheels, with an *InstallError when there are problems.
func installed(wheels []Wheel, problems []string) ([]Wheel, error) {
	if len(problems) > 0 {
		return wheels, &InstallError{Problems: problems}
	}
	return wheels, nil
}

// webURL says u is an http or https URL: what a package index on the web
// may name (a file:// URL would have the host read its own files).
func webURL(u string) bool {
	scheme, _, ok := strings.Cut(u, "://")
	return ok && (strings.EqualFold(scheme, "http") || strings.EqualFold(scheme, "https"))
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

// explicitWheel is a wheel named by path or URL; a URL's "#sha256=HEX"
// fragment is checked. A compiled wheel must be built for tg.
func (s *Store) explicitWheel(ctx context.Context, e string, tg Target) (Wheel, error) {
	loc, frag, _ := strings.Cut(e, "#")
	want, _ := strings.CutPrefix(frag, "sha256=")
	fileName := filepath.Base(loc)
	if strings.Contains(loc, "://") {
		u, err := url.Parse(loc)
		if err != nil {
			return Wheel{}, err
		}
		fileName = filepath.Base(u.Path)
	}
	if err := tg.Compatible(fileName); err != nil {
		return Wheel{}, err
	}
	file, sum, err := s.fetchWheel(ctx, loc, fileName, want)
	if err != nil {
		return Wheel{}, err
	}
	return s.unpacked(file, sum, nil)
}

func (s *Store) unpacked(file, sum string, imports []string) (Wheel, error) {
	u, err := s.unpack(file, sum)
	if err != nil {
		return Wheel{}, err
	}
	if len(imports) == 0 {
		imports = u.imports
	}
	name, _, _ := strings.Cut(filepath.Base(file), "-")
	return Wheel{Name: name, File: file, SHA256: sum, Site: u.dir, Imports: imports, Binary: len(u.libDirs) > 0}, nil
}

// wheelDir is every wheel in a directory (each compiled one built for tg).
func (s *Store) wheelDir(dir string, tg Target) ([]Wheel, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.whl"))
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, errors.New("no wheel (*.whl) in the directory")
	}
	sort.Strings(files)
	var out []Wheel
	for _, f := range files {
		if err := tg.Compatible(filepath.Base(f)); err != nil {
			return out, err
		}
		b, err := os.ReadFile(f)
		if err != nil {
			return out, err
		}
		w, err := s.unpacked(f, sha256Hex(b), nil)
		if err != nil {
			return out, err
		}
		out = append(out, w)
	}
	return out, nil
}

// resolveNames installs names from the index: a Pyodide index's lock, or
// a simple index with the runtime's lock for the dependencies it has.
func (s *Store) resolveNames(ctx context.Context, src Source, tg Target, names []string) ([]Wheel, error) {
	ix, simple, err := s.loadIndex(ctx, src)
	if err != nil {
		return nil, err
	}
	if simple != "" {
		return s.resolveSimple(ctx, simple, ix, tg, names)
	}
	pkgs, missing := ix.lock.Closure(names)
	var problems []string
	for _, m := range missing {
		problems = append(problems, fmt.Sprintf("%s: not in the package index %s", m, strings.TrimSuffix(ix.base, "/")))
	}
	wheels, more := s.fromLock(ctx, ix, tg, pkgs)
	return installed(wheels, append(problems, more...))
}

// fromLock fetches and unpacks packages of a lock: wheels, pure or built
// for tg, and shared library packages (zip files of libraries), as
// Pyodide's own loader accepts them.
func (s *Store) fromLock(ctx context.Context, ix *index, tg Target, pkgs []LockPackage) ([]Wheel, []string) {
	var wheels []Wheel
	var problems []string
	for _, p := range pkgs {
		w, err := s.lockWheel(ctx, ix, tg, p)
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s: %v", p.Name, err))
			continue
		}
		wheels = append(wheels, w)
	}
	return wheels, problems
}

// lockWheel fetches and unpacks one package of a lock.
func (s *Store) lockWheel(ctx context.Context, ix *index, tg Target, p LockPackage) (Wheel, error) {
	fileName := p.FileName
	if strings.Contains(fileName, "://") {
		if u, err := url.Parse(fileName); err == nil {
			fileName = filepath.Base(u.Path)
		}
	}
	if p.SharedLibrary() {
		if abi := ix.lock.Info.ABIVersion; abi != "" && tg.ABIVersion != "" && abi != tg.ABIVersion {
			return Wheel{}, fmt.Errorf("a shared library built for Pyodide ABI %s (the package index's), not for this Pyodide's %s", abi, tg.ABIVersion)
		}
	} else if err := tg.Compatible(fileName); err != nil {
		return Wheel{}, err
	}
	src := ix.fileURL(p.FileName)
	if webURL(ix.base) && !webURL(src) {
		return Wheel{}, fmt.Errorf("%q: a package index on the web may name files on the web only", p.FileName)
	}
	file, sum, err := s.fetchWheel(ctx, src, fileName, p.SHA256)
	if err != nil {
		return Wheel{}, err
	}
	if !p.SharedLibrary() {
		w, err := s.unpacked(file, sum, p.Imports)
		w.Name, w.Depends = p.Name, p.Depends
		return w, err
	}
	// A shared library package: its libraries' directories go on the
	// dynamic loader's search path.
	u, err := s.unpack(file, sum)
	if err != nil {
		return Wheel{}, err
	}
	if len(u.libDirs) == 0 {
		return Wheel{}, fmt.Errorf("%s: a shared library package without a library (*.so)", filepath.Base(file))
	}
	return Wheel{Name: p.Name, File: file, SHA256: sum, Site: u.dir, Depends: p.Depends, Binary: true, Libs: u.libDirs}, nil
}

// loadIndex loads the Pyodide index of src; when src is a URL without a
// lock file, it is a simple index, returned as simple, with the runtime's
// index for what it depends on. A remote lock file is kept in the store,
// so a second start does not download it again.
func (s *Store) loadIndex(ctx context.Context, src Source) (ix *index, simple string, err error) {
	runtimeIndex := func() (*index, error) {
		l, err := runtimeLock(src)
		if err != nil {
			return nil, err
		}
		return &index{lock: l, base: DefaultIndexURL(src.PyodideVersion)}, nil
	}
	if src.Index == "" {
		ix, err := runtimeIndex()
		return ix, "", err
	}
	base := src.Index
	if !strings.Contains(base, "://") {
		abs, err := filepath.Abs(base)
		if err != nil {
			return nil, "", err
		}
		base = abs
	}
	base = strings.TrimSuffix(strings.TrimSuffix(base, LockFile), "/") + "/"
	cached := filepath.Join(s.Dir, "indexes", sha256Hex([]byte(base))[:16]+".json")
	remote := strings.Contains(base, "://") && !strings.HasPrefix(base, "file://")
	simpleMark := strings.TrimSuffix(cached, ".json") + ".simple"
	var b []byte
	if remote {
		if _, err := os.Stat(simpleMark); err == nil {
			rix, err := runtimeIndex()
			return rix, base, err
		}
		b, _ = os.ReadFile(cached) // nil when absent: fetched below
	}
	if b == nil {
		b, err = s.get(ctx, base+LockFile)
		if errors.Is(err, errNotFound) && remote {
			// No lock file: a simple index (remembered).
			if err := writeAtomic(simpleMark, nil); err != nil {
				return nil, "", err
			}
			rix, err := runtimeIndex()
			return rix, base, err
		}
		if err != nil {
			return nil, "", fmt.Errorf("package index %s: %w", base, err)
		}
		if remote {
			if err := writeAtomic(cached, b); err != nil {
				return nil, "", err
			}
		}
	}
	l, err := ParseLock(b)
	if err != nil {
		return nil, "", fmt.Errorf("package index %s: %w", base, err)
	}
	return &index{lock: l, base: base}, "", nil
}

// MicropipIndex is what micropip in the sandbox uses in place of its
// defaults (PyPI, and Pyodide's own lock) when the configuration names a
// package index: a simple index's URL (micropip downloads from it, under
// the sandbox's network rules), or a Pyodide index's lock packages (JSON:
// name → entry; micropip asks the host for those, as it asks Pyodide for
// the packages of its distribution). Both are empty without an index.
func (s *Store) MicropipIndex(ctx context.Context, src Source) (simpleURL string, lock []byte, err error) {
	if src.Index == "" {
		return "", nil, nil
	}
	ix, simple, err := s.loadIndex(ctx, src)
	if err != nil {
		return "", nil, err
	}
	if simple != "" {
		return simple, nil, nil
	}
	// (File names as they are: the host fetches them.)
	b, err := json.Marshal(ix.lock.Packages)
	return "", b, err
}
