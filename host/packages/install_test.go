package packages_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/parselbox/parselbox/host/packages"
	"github.com/parselbox/parselbox/host/packages/pkgtest"
)

func names(ws []packages.Wheel) []string {
	var out []string
	for _, w := range ws {
		out = append(out, w.Name)
	}
	return out
}

func readSite(t *testing.T, s *packages.Store, w packages.Wheel, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(s.SiteDir(), w.Site, rel))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A Pyodide index: the dependency closure comes from the lock, import
// names resolve, files are unpacked, and a second install asks nothing.
func TestInstallFromPyodideIndex(t *testing.T) {
	t.Parallel()
	ix := pkgtest.NewIndex(t, pkgtest.Fixtures()...)
	s := &packages.Store{Dir: t.TempDir()}
	src := packages.Source{Index: ix.PyodideURL()}
	ws, err := s.Install(t.Context(), src, []string{"alphapkg", "gammadata", "dotenv"})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"betapkg", "alphapkg", "gammadata", "python-dotenv"}, names(ws)); diff != "" {
		t.Errorf("wheels (-want +got):\n%s", diff)
	}
	if got := readSite(t, s, ws[2], "gammadata/data/words.txt"); got != "one two three\n" {
		t.Errorf("data file: %q", got)
	}
	if got := readSite(t, s, ws[2], "gammaextra.py"); got != "EXTRA = True\n" {
		t.Errorf(".data/purelib file: %q", got)
	}
	if diff := cmp.Diff([]string{"dotenv"}, ws[3].Imports); diff != "" {
		t.Errorf("imports (-want +got):\n%s", diff)
	}
	first := len(ix.Requests())
	if first != 5 { // the lock and four wheels
		t.Errorf("first install: %d requests: %q", first, ix.Requests())
	}
	again, err := s.Install(t.Context(), src, []string{"alphapkg", "gammadata", "dotenv"})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(ws, again); diff != "" {
		t.Errorf("second install differs (-first +second):\n%s", diff)
	}
	if got := ix.Requests()[first:]; len(got) != 0 {
		t.Errorf("the second install downloaded: %q", got)
	}
}

// A wheel whose checksum is not the lock's is refused and not kept.
func TestInstallChecksumMismatch(t *testing.T) {
	t.Parallel()
	ix := pkgtest.NewIndex(t, pkgtest.Fixtures()...)
	ix.BadSum = "betapkg"
	s := &packages.Store{Dir: t.TempDir()}
	_, err := s.Install(t.Context(), packages.Source{Index: ix.PyodideURL()}, []string{"alphapkg"})
	var ie *packages.InstallError
	if !errors.As(err, &ie) {
		t.Fatalf("want an InstallError, got %v", err)
	}
	want := "betapkg: betapkg-1.0-py3-none-any.whl: checksum mismatch: expected sha256 " + strings.Repeat("0", 64) + ", got "
	if len(ie.Problems) != 1 || !strings.HasPrefix(ie.Problems[0], want) {
		t.Errorf("problems %q, want one starting %q", ie.Problems, want)
	}
	if _, err := os.Stat(filepath.Join(s.Dir, "wheels", "betapkg-1.0-py3-none-any.whl")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the bad wheel was kept: %v", err)
	}
}

// Names an index does not have are named in the error.
func TestInstallMissing(t *testing.T) {
	t.Parallel()
	ix := pkgtest.NewIndex(t, pkgtest.Fixtures()...)
	s := &packages.Store{Dir: t.TempDir()}
	_, err := s.Install(t.Context(), packages.Source{Index: ix.PyodideURL()}, []string{"betapkg", "nosuchpkg"})
	want := "packages: nosuchpkg: not in the package index " + ix.URL + "/pyodide"
	if err == nil || err.Error() != want {
		t.Errorf("got %v, want %q", err, want)
	}
}

// A simple index: the pure-Python wheel and its Requires-Dist (not the
// extra's, not what a marker excludes), by JSON or HTML, once.
func TestInstallFromSimpleIndex(t *testing.T) {
	t.Parallel()
	for _, html := range []bool{false, true} {
		t.Run(map[bool]string{false: "json", true: "html"}[html], func(t *testing.T) {
			t.Parallel()
			ix := pkgtest.NewIndex(t, pkgtest.Fixtures()...)
			ix.HTMLOnly = html
			testSimpleIndex(t, ix)
		})
	}
}

func testSimpleIndex(t *testing.T, ix *pkgtest.Index) {
	s := &packages.Store{Dir: t.TempDir()}
	src := packages.Source{Index: ix.SimpleURL(), RuntimeLock: runtimeLock(t)}
	ws, err := s.Install(t.Context(), src, []string{"alphapkg", "dotenv"})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"betapkg", "alphapkg", "python-dotenv"}, names(ws)); diff != "" {
		t.Errorf("wheels (-want +got):\n%s", diff)
	}
	reqs := ix.Requests()
	if !slices.Contains(reqs, "/simple/betapkg/") || !slices.Contains(reqs, "/simple/python-dotenv/") {
		t.Errorf("requests: %q", reqs)
	}
	n := len(reqs)
	if _, err := s.Install(t.Context(), src, []string{"alphapkg", "dotenv"}); err != nil {
		t.Fatal(err)
	}
	if got := ix.Requests()[n:]; len(got) != 0 {
		t.Errorf("the second install downloaded: %q", got)
	}
	_, err = s.Install(t.Context(), src, []string{"nosuchpkg"})
	want := "nosuchpkg: not found on the simple index " + ix.SimpleURL()
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("got %v, want %q", err, want)
	}
}

// Explicit wheel files and URLs, and directories of wheels.
func TestInstallExplicitWheels(t *testing.T) {
	t.Parallel()
	ix := pkgtest.NewIndex(t, pkgtest.Fixtures()...)
	dir := t.TempDir()
	beta := pkgtest.Fixtures()[1]
	if err := os.WriteFile(filepath.Join(dir, beta.FileName()), beta.Wheel(t), 0o644); err != nil {
		t.Fatal(err)
	}
	s := &packages.Store{Dir: t.TempDir()}
	ws, err := s.Install(t.Context(), packages.Source{}, []string{
		filepath.Join(dir, beta.FileName()), dir, ix.URL + "/files/gammadata-1.0-py3-none-any.whl",
	})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"betapkg", "gammadata"}, names(ws)); diff != "" {
		t.Errorf("wheels (-want +got):\n%s", diff)
	}
	if ws, err := s.Install(t.Context(), packages.Source{}, []string{"file://" + filepath.Join(dir, beta.FileName())}); err != nil || len(ws) != 1 || ws[0].Name != "betapkg" {
		t.Errorf("a file: URL: %v, %v", ws, err)
	}
	_, err = s.Install(t.Context(), packages.Source{}, []string{ix.URL + "/files/gammadata-1.0-py3-none-any.whl#sha256=" + strings.Repeat("1", 64)})
	if err == nil || !strings.Contains(err.Error(), "gammadata-1.0-py3-none-any.whl: checksum mismatch: expected sha256 "+strings.Repeat("1", 64)) {
		t.Errorf("got %v, want a checksum mismatch", err)
	}
}

func TestPackageForImport(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{"yaml": "pyyaml", "PIL.Image": "pillow", "sklearn": "scikit-learn", "numpy": "numpy", "dateutil.parser": "python-dateutil"} {
		if got := packages.PackageForImport(in); got != want {
			t.Errorf("PackageForImport(%q) = %q, want %q", in, got, want)
		}
	}
}

// runtimeLock is a lock standing for the runtime's: it has none of the
// test's packages.
func runtimeLock(t *testing.T) string {
	p := filepath.Join(t.TempDir(), "pyodide-lock.json")
	if err := os.WriteFile(p, []byte(`{"info":{"python":"3.14.2"},"packages":{"six":{"name":"six","version":"1","file_name":"six-1-py3-none-any.whl","sha256":"00","imports":["six"],"depends":[]}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// A bundle is a Pyodide index directory: installed from it, with the
// index server gone, the same closure comes out.
func TestBundle(t *testing.T) {
	t.Parallel()
	ix := pkgtest.NewIndex(t, pkgtest.Fixtures()...)
	bundle := t.TempDir()
	s := &packages.Store{Dir: t.TempDir()}
	if _, err := s.Bundle(t.Context(), packages.Source{Index: ix.SimpleURL(), RuntimeLock: runtimeLock(t)}, []string{"alphapkg", "gammadata"}, bundle); err != nil {
		t.Fatal(err)
	}
	ix.Close()
	offline := &packages.Store{Dir: t.TempDir()}
	ws, err := offline.Install(t.Context(), packages.Source{Index: bundle}, []string{"alphapkg", "gammadata"})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"betapkg", "alphapkg", "gammadata"}, names(ws)); diff != "" {
		t.Errorf("wheels (-want +got):\n%s", diff)
	}
}

// Installs into one directory at the same time wait for each other: every
// one gets the same wheels, each downloaded once.
func TestInstallConcurrent(t *testing.T) {
	t.Parallel()
	ix := pkgtest.NewIndex(t, pkgtest.Fixtures()...)
	dir := t.TempDir()
	src := packages.Source{Index: ix.PyodideURL()}
	results := make([][]packages.Wheel, 4)
	errs := make([]error, 4)
	var wg sync.WaitGroup
	for i := range results {
		wg.Go(func() {
			s := &packages.Store{Dir: dir} // as separate hosts would
			results[i], errs[i] = s.Install(t.Context(), src, []string{"alphapkg", "gammadata"})
		})
	}
	wg.Wait()
	for i := range results {
		if errs[i] != nil {
			t.Fatalf("install %d: %v", i, errs[i])
		}
		if diff := cmp.Diff(results[0], results[i]); diff != "" {
			t.Errorf("install %d differs (-0 +%d):\n%s", i, i, diff)
		}
	}
	counts := map[string]int{}
	for _, r := range ix.Requests() {
		counts[r]++
	}
	for _, w := range []string{"alphapkg", "betapkg", "gammadata"} {
		if n := counts["/pyodide/"+w+"-1.0-py3-none-any.whl"]; n != 1 {
			t.Errorf("%s downloaded %d times", w, n)
		}
	}
}

// Separate processes installing into one directory at the same time (hosts
// sharing a package_dir) wait for each other: each gets the same wheels,
// each wheel downloaded once, no partial file left behind.
func TestInstallConcurrentProcesses(t *testing.T) {
	if dir := os.Getenv("PKGTEST_INSTALL_DIR"); dir != "" {
		// The helper process: one install, its wheels as JSON on stdout.
		s := &packages.Store{Dir: dir}
		ws, err := s.Install(context.Background(), packages.Source{Index: os.Getenv("PKGTEST_INSTALL_INDEX")}, []string{"alphapkg", "gammadata"})
		if err != nil {
			t.Fatal(err)
		}
		if err := json.NewEncoder(os.Stdout).Encode(ws); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Parallel()
	ix := pkgtest.NewIndex(t, pkgtest.Fixtures()...)
	dir := t.TempDir()
	outs := make([][]byte, 3)
	errs := make([]error, 3)
	var wg sync.WaitGroup
	for i := range outs {
		wg.Go(func() {
			cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^TestInstallConcurrentProcesses$", "-test.count=1")
			cmd.Env = append(os.Environ(), "PKGTEST_INSTALL_DIR="+dir, "PKGTEST_INSTALL_INDEX="+ix.PyodideURL())
			outs[i], errs[i] = cmd.Output()
		})
	}
	wg.Wait()
	var first []packages.Wheel
	for i, out := range outs {
		if errs[i] != nil {
			t.Fatalf("process %d: %v: %s", i, errs[i], out)
		}
		line, _, _ := strings.Cut(string(out), "\n")
		var ws []packages.Wheel
		if err := json.Unmarshal([]byte(line), &ws); err != nil {
			t.Fatalf("process %d: %v: %s", i, err, out)
		}
		if i == 0 {
			first = ws
		} else if diff := cmp.Diff(first, ws); diff != "" {
			t.Errorf("process %d differs (-0 +%d):\n%s", i, i, diff)
		}
	}
	if diff := cmp.Diff([]string{"betapkg", "alphapkg", "gammadata"}, names(first)); diff != "" {
		t.Errorf("wheels (-want +got):\n%s", diff)
	}
	counts := map[string]int{}
	for _, r := range ix.Requests() {
		counts[r]++
	}
	for _, w := range []string{"alphapkg", "betapkg", "gammadata"} {
		if n := counts["/pyodide/"+w+"-1.0-py3-none-any.whl"]; n != 1 {
			t.Errorf("%s downloaded %d times", w, n)
		}
	}
	left, _ := filepath.Glob(filepath.Join(dir, "*", ".tmp-*"))
	if len(left) > 0 {
		t.Errorf("partial files left: %q", left)
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// toLoopback is a client that sends what it is asked of the official
// distribution to the loopback index's /pyodide/ instead, and records
// every URL asked.
func toLoopback(t *testing.T, ix *pkgtest.Index) (*http.Client, func() []string) {
	var mu sync.Mutex
	var asked []string
	official, err := url.Parse(packages.DefaultIndexURL("314.0.7"))
	if err != nil {
		t.Fatal(err)
	}
	loop, err := url.Parse(ix.PyodideURL())
	if err != nil {
		t.Fatal(err)
	}
	client := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		mu.Lock()
		asked = append(asked, r.URL.String())
		mu.Unlock()
		if r.URL.Host == official.Host {
			r = r.Clone(r.Context())
			r.URL.Scheme, r.URL.Host, r.Host = loop.Scheme, loop.Host, ""
			r.URL.Path = loop.Path + path.Base(r.URL.Path)
		}
		return http.DefaultTransport.RoundTrip(r)
	})}
	return client, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(asked)
	}
}

// lockOf writes the index's lock to a file, to stand for the runtime's.
func lockOf(t *testing.T, ix *pkgtest.Index) string {
	resp, err := http.Get(ix.PyodideURL() + packages.LockFile)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), packages.LockFile)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// Without package_index, wheels come from the official distribution of
// the pinned Pyodide, by the runtime's lock, through the same code as any
// index (only the URL differs); a simple index takes what the lock has
// from there too, and only the rest from the simple index.
func TestDefaultIndex(t *testing.T) {
	t.Parallel()
	if got, want := packages.DefaultIndexURL("314.0.7"), "https://cdn.jsdelivr.net/pyodide/v314.0.7/full/"; got != want {
		t.Errorf("DefaultIndexURL = %q, want %q", got, want)
	}
	ix := pkgtest.NewIndex(t, pkgtest.Fixtures()...)
	client, asked := toLoopback(t, ix)
	src := packages.Source{RuntimeLock: lockOf(t, ix), PyodideVersion: "314.0.7"}
	s := &packages.Store{Dir: t.TempDir(), Client: client}
	ws, err := s.Install(t.Context(), src, []string{"alphapkg"})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"betapkg", "alphapkg"}, names(ws)); diff != "" {
		t.Errorf("wheels (-want +got):\n%s", diff)
	}
	official := packages.DefaultIndexURL("314.0.7")
	if diff := cmp.Diff([]string{official + "betapkg-1.0-py3-none-any.whl", official + "alphapkg-1.0-py3-none-any.whl"}, asked()); diff != "" {
		t.Errorf("asked (-want +got):\n%s", diff)
	}

	// A simple index whose package needs betapkg, which the lock has.
	simple := pkgtest.NewIndex(t, pkgtest.Package{Name: "deltapkg", Requires: []string{"betapkg"}, Files: map[string]string{"deltapkg.py": "from betapkg import NAME\n"}})
	s = &packages.Store{Dir: t.TempDir(), Client: client}
	src.Index = simple.SimpleURL()
	n := len(asked())
	ws, err = s.Install(t.Context(), src, []string{"deltapkg"})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"betapkg", "deltapkg"}, names(ws)); diff != "" {
		t.Errorf("wheels (-want +got):\n%s", diff)
	}
	if !slices.Contains(asked()[n:], official+"betapkg-1.0-py3-none-any.whl") || slices.Contains(simple.Requests(), "/simple/betapkg/") {
		t.Errorf("betapkg was not taken from the lock: asked %q; the simple index served %q", asked()[n:], simple.Requests())
	}
}

// What cannot be resolved is named, with what needed it.
func TestInstallUnresolvable(t *testing.T) {
	t.Parallel()
	ix := pkgtest.NewIndex(t, pkgtest.Package{Name: "needy", Requires: []string{"ghostpkg"}, Files: map[string]string{"needy.py": ""}})
	s := &packages.Store{Dir: t.TempDir()}
	_, err := s.Install(t.Context(), packages.Source{Index: ix.PyodideURL()}, []string{"needy"})
	if want := "packages: ghostpkg (a dependency of needy): not in the package index " + ix.URL + "/pyodide"; err == nil || err.Error() != want {
		t.Errorf("Pyodide index: got %v, want %q", err, want)
	}
	_, err = s.Install(t.Context(), packages.Source{Index: ix.SimpleURL(), RuntimeLock: runtimeLock(t)}, []string{"needy"})
	if want := "packages: ghostpkg: not found on the simple index " + ix.SimpleURL(); err == nil || !strings.HasPrefix(err.Error(), want) || !strings.HasSuffix(err.Error(), "(a dependency of needy)") {
		t.Errorf("simple index: got %v, want %q ... (a dependency of needy)", err, want)
	}
}

// An index out of reach (offline, as the default index is without the
// internet) is named with what works instead: a mirror or a bundle.
func TestInstallIndexOutOfReach(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + l.Addr().String() + "/pyodide/"
	l.Close()
	s := &packages.Store{Dir: t.TempDir()}
	_, err = s.Install(t.Context(), packages.Source{Index: closed}, []string{"alphapkg"})
	if err == nil || !strings.Contains(err.Error(), l.Addr().String()) ||
		!strings.Contains(err.Error(), "--package-index") || !strings.Contains(err.Error(), "parselbox packages fetch") {
		t.Errorf("got %v, want the address and how to install offline", err)
	}
}

// Every package of a bundle's lock file has its imports and depends as
// lists, [] when empty: Pyodide iterates them when it loads a lock file
// (`for (let l of s.imports)` in pyodide.asm.mjs), and null is not
// iterable. That holds for a wheel without import names (data only) and
// for a package of a bundle already there that has null or none.
func TestBundleLockLists(t *testing.T) {
	t.Parallel()
	ix := pkgtest.NewIndex(t, pkgtest.Package{Name: "datapkg", Files: map[string]string{"datapkg-1.0.data/data/share/datapkg/words.txt": "one\n"}})
	bundle := t.TempDir()
	old := `{"info":{"python":"3.14.2"},"packages":{"oldpkg":{"name":"oldpkg","version":"1","file_name":"oldpkg-1-py3-none-any.whl","sha256":"00","imports":null}}}`
	if err := os.WriteFile(filepath.Join(bundle, packages.LockFile), []byte(old), 0o644); err != nil {
		t.Fatal(err)
	}
	s := &packages.Store{Dir: t.TempDir()}
	if _, err := s.Bundle(t.Context(), packages.Source{Index: ix.SimpleURL(), RuntimeLock: runtimeLock(t)}, []string{"datapkg"}, bundle); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(bundle, packages.LockFile))
	if err != nil {
		t.Fatal(err)
	}
	var lock struct {
		Packages map[string]map[string]json.RawMessage `json:"packages"`
	}
	if err := json.Unmarshal(b, &lock); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for name, p := range lock.Packages {
		got[name+" imports"], got[name+" depends"] = string(p["imports"]), string(p["depends"])
	}
	want := map[string]string{"datapkg imports": "[]", "datapkg depends": "[]", "oldpkg imports": "[]", "oldpkg depends": "[]"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("lists of the bundle's lock (-want +got):\n%s", diff)
	}
}
