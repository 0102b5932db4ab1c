package host_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/parselbox/parselbox/host"
	"github.com/parselbox/parselbox/host/packages/pkgtest"
	"github.com/parselbox/parselbox/internal/testenv"
)

// Packages from a loopback Pyodide index, installed by the host: with the
// network off, they import (dependencies, data files, an import name that
// differs from the package's), and the sandbox still reaches nothing, not
// even the index. A second start with the same package_dir downloads
// nothing.
func TestPackagesFromPyodideIndex(t *testing.T) {
	t.Parallel()
	ix := pkgtest.NewIndex(t, pkgtest.Fixtures()...)
	cfg := host.Config{
		Packages:     []string{"alphapkg", "gammadata", "dotenv"},
		PackageIndex: ix.PyodideURL(),
		PackageDir:   t.TempDir(),
	}
	sb := newSandbox(t, cfg)
	// Booted from a snapshot of its own, with the packages imported.
	if got := value(t, exec(t, sb, "import sys\n[m in sys.modules for m in ('alphapkg', 'betapkg', 'gammadata', 'dotenv')]")); fmt.Sprint(got) != "[true true true true]" {
		t.Errorf("preloaded: %v", got)
	}
	if info, err := sb.Info(t.Context()); err != nil || !info.Snapshot {
		t.Errorf("booted from a snapshot: %v, %v", info, err)
	}
	got := value(t, exec(t, sb, `import alphapkg, gammadata, gammaextra, dotenv
[alphapkg.GREETING, gammadata.words(), gammaextra.EXTRA, dotenv.load()]`))
	if fmt.Sprint(got) != "[alpha+beta [one two three] true dotenv ok]" {
		t.Errorf("got %v", got)
	}
	if want := "- Packages: installed by the host (no pip/micropip needed); ready to import: alphapkg, gammadata, dotenv."; !strings.Contains(sb.Prompt(), want) {
		t.Errorf("the guide does not say %q:\n%s", want, sb.Prompt())
	}
	// The index is on loopback, and the sandbox may not reach it: its
	// network is off, as without packages.
	networkOff(t, sb)
	e := raised(t, exec(t, sb, fmt.Sprintf(`import urllib.request
urllib.request.urlopen(%q)`, ix.PyodideURL()+"pyodide-lock.json")), "URLError")
	if !strings.Contains(e.Message, "is not allowed in the sandbox") {
		t.Errorf("urlopen of the index: %s", e.Message)
	}
	// The packages are read-only.
	e = raised(t, exec(t, sb, `import gammadata, os
open(os.path.join(os.path.dirname(gammadata.__file__), "data", "words.txt"), "w")`), "OSError")
	if !strings.Contains(e.Message, "Read-only file system") {
		t.Errorf("writing a package's file: %s", e.Message)
	}
	n := len(ix.Requests())
	if slices.Contains(ix.Requests(), "/pyodide/pyodide-lock.json") == false || n != 5 {
		t.Errorf("first start: %q", ix.Requests())
	}
	sb2 := newSandbox(t, cfg)
	if got := value(t, exec(t, sb2, "import alphapkg\nalphapkg.GREETING")); got != "alpha+beta" {
		t.Errorf("second start: %v", got)
	}
	if more := ix.Requests()[n:]; len(more) != 0 {
		t.Errorf("the second start downloaded: %q", more)
	}
}

// package_index naming a simple index (PEP 503/691, as PyPI): declared
// packages by name and run-time imports come from it, Requires-Dist
// resolved, an import name mapped to its package (dotenv: python-dotenv,
// which the simple index alone cannot say); the sandbox's network stays
// off.
func TestPackagesFromSimpleIndex(t *testing.T) {
	t.Parallel()
	ix := pkgtest.NewIndex(t, pkgtest.Fixtures()...)
	sb := newSandbox(t, host.Config{Packages: []string{"alphapkg"}, AllowRuntimePackages: true, PackageIndex: ix.SimpleURL(), PackageDir: t.TempDir()})
	got := value(t, exec(t, sb, "import alphapkg, dotenv\n[alphapkg.GREETING, dotenv.load()]"))
	if fmt.Sprint(got) != "[alpha+beta dotenv ok]" {
		t.Errorf("got %v", got)
	}
	for _, want := range []string{"/simple/alphapkg/", "/files/alphapkg-1.0-py3-none-any.whl", "/simple/betapkg/", "/simple/python-dotenv/", "/files/python_dotenv-1.0-py3-none-any.whl"} {
		if !slices.Contains(ix.Requests(), want) {
			t.Errorf("the host did not ask the simple index for %s: %q", want, ix.Requests())
		}
	}
	networkOff(t, sb)
}

// What cannot be installed stops the start, named; a checksum mismatch too.
func TestPackagesErrors(t *testing.T) {
	t.Parallel()
	ix := pkgtest.NewIndex(t, pkgtest.Fixtures()...)
	ix.BadSum = "betapkg"
	// json is in the standard library: not installed, not an error.
	cfg := host.Config{Packages: []string{"alphapkg", "nosuchpkg", "json"}, PackageIndex: ix.PyodideURL(), PackageDir: t.TempDir()}
	cfg.RuntimeDir = testenv.Runtime(t).Dir
	cfg.CacheDir = testenv.CacheDir(t)
	_, err := host.New(t.Context(), cfg)
	var ce *host.ConfigError
	if !errors.As(err, &ce) {
		t.Fatalf("want a ConfigError, got %v", err)
	}
	for _, want := range []string{"nosuchpkg: not in the package index " + ix.URL + "/pyodide", "betapkg: betapkg-1.0-py3-none-any.whl: checksum mismatch"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	if strings.Contains(err.Error(), "json") {
		t.Errorf("error %q names json, which is in the standard library", err)
	}
	// Without package_dir, the packages are kept under the cache
	// directory (its packages folder): alphapkg was, before the start
	// stopped.
	cfg.PackageDir, cfg.CacheDir = "", t.TempDir()
	if _, err := host.New(t.Context(), cfg); err == nil {
		t.Fatal("the start did not stop")
	}
	if _, err := os.Stat(filepath.Join(cfg.CacheDir, "packages", "wheels", "alphapkg-1.0-py3-none-any.whl")); err != nil {
		t.Errorf("the default package directory: %v", err)
	}
}

// Without packages, a missing module says how the host would install it.
func TestModuleNotFoundHint(t *testing.T) {
	t.Parallel()
	sb := newSandbox(t, host.Config{})
	e := raised(t, exec(t, sb, "import alphapkg"), "ModuleNotFoundError")
	want := `No module named 'alphapkg'; the host installs packages: add 'alphapkg' to packages (--packages alphapkg), or set allow_runtime_packages (--allow-runtime-packages) to install what the code imports`
	if e.Message != want {
		t.Errorf("message %q, want %q", e.Message, want)
	}
}

// allow_runtime_packages: the imports of each execution that the sandbox
// cannot find are installed by the host first (the network stays off);
// what the index lacks stays a ModuleNotFoundError. A restart keeps them.
func TestRuntimePackages(t *testing.T) {
	t.Parallel()
	ix := pkgtest.NewIndex(t, pkgtest.Fixtures()...)
	sb := newSandbox(t, host.Config{AllowRuntimePackages: true, PackageIndex: ix.PyodideURL(), PackageDir: t.TempDir()})
	// Before any import, at most the index itself is read (micropip's
	// index is the configured one): no package is fetched.
	for _, r := range ix.Requests() {
		if r != "/pyodide/pyodide-lock.json" {
			t.Errorf("requests before any import: %q", ix.Requests())
			break
		}
	}
	got := value(t, exec(t, sb, "import json\nfrom alphapkg import GREETING\nimport dotenv\n[GREETING, dotenv.load()]"))
	if fmt.Sprint(got) != "[alpha+beta dotenv ok]" {
		t.Errorf("got %v", got)
	}
	// The host reached the index; the sandbox's network stayed off
	// (Deno runs with --deny-net) and Python still cannot reach it.
	if !slices.Contains(ix.Requests(), "/pyodide/alphapkg-1.0-py3-none-any.whl") {
		t.Errorf("the host did not install alphapkg from the index: %q", ix.Requests())
	}
	networkOff(t, sb)
	e := raised(t, exec(t, sb, fmt.Sprintf("import urllib.request\nurllib.request.urlopen(%q)", ix.PyodideURL()+"pyodide-lock.json")), "URLError")
	if !strings.Contains(e.Message, "is not allowed in the sandbox") {
		t.Errorf("urlopen of the index: %s", e.Message)
	}
	e = raised(t, exec(t, sb, "import nosuchpkg"), "ModuleNotFoundError")
	want := "No module named 'nosuchpkg' (allow_runtime_packages is on, but the host could not install 'nosuchpkg': see the host's log)"
	if e.Message != want {
		t.Errorf("message %q, want %q", e.Message, want)
	}
	// After a restart (the process killed), the runtime packages are there.
	if err := syscall.Kill(sb.PID(), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	r := exec(t, sb, "import alphapkg\nalphapkg.GREETING")
	if got := value(t, r); got != "alpha+beta" {
		t.Errorf("after a restart: %v", got)
	}
}

// networkOff checks that the sandbox's Deno process runs with --deny-net
// and no --allow-net: packages did not open its network.
func networkOff(t *testing.T, sb *host.Sandbox) {
	t.Helper()
	cmdline, err := os.ReadFile("/proc/" + strconv.Itoa(sb.PID()) + "/cmdline")
	if err != nil {
		t.Fatal(err)
	}
	var flags []string
	for a := range strings.SplitSeq(string(cmdline), "\x00") {
		if strings.HasSuffix(strings.SplitN(a, "=", 2)[0], "-net") {
			flags = append(flags, a)
		}
	}
	if !slices.Equal(flags, []string{"--deny-net"}) {
		t.Errorf("the sandbox's network is not off: Deno runs with %q", flags)
	}
}

// A slow package install is named on the way (Config.Notify), with the
// packages it waits for.
func TestPackagesInstallNoticed(t *testing.T) {
	t.Parallel()
	ix := pkgtest.NewIndex(t, pkgtest.Fixtures()...)
	target, err := url.Parse(ix.URL)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(target)
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, ".whl") {
			time.Sleep(4 * time.Second) // past the 3 s after which a wait is said
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(slow.Close)
	var mu sync.Mutex
	var said []string
	newSandbox(t, host.Config{
		Packages:     []string{"alphapkg"},
		PackageIndex: slow.URL + "/pyodide/",
		PackageDir:   t.TempDir(),
		Notify: func(m string) {
			mu.Lock()
			said = append(said, m)
			mu.Unlock()
		},
	})
	mu.Lock()
	defer mu.Unlock()
	if !slices.ContainsFunc(said, func(m string) bool {
		return strings.HasPrefix(m, "installing Python packages: still waiting for alphapkg (")
	}) {
		t.Errorf("nothing said about the slow install: %q", said)
	}
}

// micropip comes from the package index like any package, and keeps working
// for code that calls it: with the network granted to an index, it
// installs from there, dependencies included; without, it fails saying the
// address is not allowed.
func TestMicropip(t *testing.T) {
	t.Parallel()
	// six stands for a package of Pyodide's own distribution (the runtime's
	// lock has it), which micropip asks Pyodide to load.
	six := pkgtest.Package{Name: "six", Files: map[string]string{"six.py": "FROM_TEST_INDEX = True\n"}}
	ix := pkgtest.NewIndex(t, append(pkgtest.Fixtures(), pkgtest.Micropip(), six)...)
	u, err := url.Parse(ix.URL)
	if err != nil {
		t.Fatal(err)
	}
	simple := strings.TrimSuffix(ix.SimpleURL(), "/") // as micropip's default is written
	cfg := host.Config{Packages: []string{"micropip"}, PackageIndex: ix.PyodideURL(), PackageDir: t.TempDir(), AllowNet: []string{u.Host}}
	sb := newSandbox(t, cfg)
	// micropip keeps JS objects, which a memory snapshot cannot hold: it is
	// left out of the package set's snapshot, which still boots.
	if info, err := sb.Info(t.Context()); err != nil || !info.Snapshot {
		t.Errorf("booted from a snapshot: %v, %v", info, err)
	}
	got := value(t, exec(t, sb, fmt.Sprintf(`import micropip
await micropip.install("alphapkg", index_urls=[%q])
import alphapkg
[micropip.__version__, alphapkg.GREETING, sorted(p for p in micropip.list() if p.endswith("pkg"))]`, simple)))
	if fmt.Sprint(got) != "[0.11.1 alpha+beta [alphapkg betapkg]]" {
		t.Errorf("got %v", got)
	}
	for _, want := range []string{"/simple/alphapkg/", "/files/alphapkg-1.0-py3-none-any.whl", "/simple/betapkg/", "/files/betapkg-1.0-py3-none-any.whl"} {
		if !slices.Contains(ix.Requests(), want) {
			t.Errorf("micropip did not ask the index for %s: %q", want, ix.Requests())
		}
	}

	cfg.AllowNet = nil
	off := newSandbox(t, cfg)
	e := raised(t, exec(t, off, fmt.Sprintf(`import micropip
await micropip.install("gammadata", index_urls=[%q])`, simple)), "")
	if want := "(during this execution, network access to " + u.Host + " was refused: it is not allowed in the sandbox by the host's network rules)"; !strings.HasSuffix(e.Message, want) {
		t.Errorf("micropip without the network: %s: %s", e.Type, e.Message)
	}
	if slices.Contains(ix.Requests(), "/simple/gammadata/") {
		t.Errorf("the sandbox reached the index without the network: %q", ix.Requests())
	}
	// A package of Pyodide's distribution: the host installs it, if it may.
	e = raised(t, exec(t, off, "import micropip\nawait micropip.install('six')"), "ModuleNotFoundError")
	if want := "six: packages of Pyodide's distribution are installed by the host: add them to packages (--packages NAME), or set allow_runtime_packages (--allow-runtime-packages) to have the host install them when asked"; e.Message != want {
		t.Errorf("micropip.install('six') without allow_runtime_packages: %s\nwant %s", e.Message, want)
	}
	cfg.AllowRuntimePackages = true
	runtime := newSandbox(t, cfg)
	// (Not imported by the same code: the runtime packages would install
	// it before the code ran.)
	value(t, exec(t, runtime, "import micropip, importlib.util\nassert importlib.util.find_spec('six') is None\nawait micropip.install('six')"))
	if got := value(t, exec(t, runtime, "import six\nsix.FROM_TEST_INDEX")); got != true {
		t.Errorf("micropip.install('six') with allow_runtime_packages: %v", got)
	}
	if !slices.Contains(ix.Requests(), "/pyodide/six-1.0-py3-none-any.whl") {
		t.Errorf("the host did not install six from its index: %q", ix.Requests())
	}
}

// requestLog records the requests that the test servers of the HTTP
// library tests receive, by server name.
type requestLog struct {
	mu   sync.Mutex
	seen []string // "name METHOD /uri"
}

// record notes a request that the server called name received.
func (l *requestLog) record(name string, r *http.Request) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.seen = append(l.seen, name+" "+r.Method+" "+r.URL.RequestURI())
}

// neverReached fails t if the server called name received any request
// (the server of an address the network rules deny).
func (l *requestLog) neverReached(t *testing.T, name string) {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, s := range l.seen {
		if strings.HasPrefix(s, name+" ") {
			t.Errorf("the %s server was reached: %q", name, l.seen)
			return
		}
	}
}

// httpLibraries are requests and httpx with their dependencies, as wheels
// built from Debian's python3-requests and python3-httpx (make pyclients
// installs them); nil when they are not installed.
func httpLibraries(t *testing.T) []pkgtest.Package {
	t.Helper()
	var out []pkgtest.Package
	for _, p := range []struct {
		module, name string
		requires     []string
	}{
		{"requests", "requests", []string{"urllib3", "idna", "certifi", "charset-normalizer"}},
		{"urllib3", "urllib3", []string{"six"}}, // Debian's urllib3 does not vendor six
		{"six", "six", nil},
		{"idna", "idna", nil},
		{"certifi", "certifi", nil},
		{"charset_normalizer", "charset-normalizer", nil},
		{"httpx", "httpx", []string{"httpcore", "rfc3986", "sniffio", "certifi"}},
		{"httpcore", "httpcore", []string{"h11", "anyio", "sniffio", "certifi"}},
		{"h11", "h11", nil},
		{"anyio", "anyio", []string{"idna", "sniffio"}},
		{"sniffio", "sniffio", nil},
		{"rfc3986", "rfc3986", []string{"idna"}},
	} {
		pkg, err := pkgtest.FromDistPackages(pkgtest.DistPackages, p.module, p.name, p.requires...)
		if err != nil {
			testenv.Missing(t, requirePyClients, "requests and httpx are not installed (make pyclients installs Debian's python3-requests and python3-httpx): %v", err)
			return nil
		}
		if p.name == "certifi" {
			// Debian's certifi names the system's bundle
			// (/etc/ssl/certs), which the sandbox does not have; the
			// certifi of PyPI and of Pyodide's distribution names the
			// cacert.pem it ships, as this one does. (requests checks
			// that the bundle exists before an HTTPS request.)
			pkg.Files["certifi/core.py"] = "import os\n\n\ndef where():\n    return os.path.join(os.path.dirname(__file__), 'cacert.pem')\n\n\n" +
				"def contents():\n    with open(where(), encoding='ascii') as f:\n        return f.read()\n"
		}
		out = append(out, pkg)
	}
	return out
}

// requirePyClients, when set (make test sets it where make pyclients could
// install them), makes a missing requests or httpx a failure, not a skip.
const requirePyClients = "PARSELBOX_REQUIRE_PYCLIENTS"

// requests and httpx, installed as packages, work in the sandbox through
// fetch, synchronously (and httpx's async client awaited), under exactly
// the network rules: an allowed address answers; another fails saying it
// is not allowed, and is not reached.
func TestHTTPLibraries(t *testing.T) {
	t.Parallel()
	libs := httpLibraries(t)
	ix := pkgtest.NewIndex(t, libs...)
	var log requestLog
	echo := func(name string) *httptest.Server {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(r.Body)
			log.record(name, r)
			if r.URL.Path == "/redirect" {
				http.Redirect(w, r, "/echo?from=redirect", http.StatusFound)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			json.NewEncoder(w).Encode(map[string]string{"method": r.Method, "uri": r.URL.RequestURI(), "body": string(body), "x": r.Header.Get("X-Test")})
		}))
		t.Cleanup(srv.Close)
		return srv
	}
	allowed, denied := echo("allowed"), echo("denied")
	sb := newSandbox(t, host.Config{
		Packages: []string{"requests", "httpx"}, PackageIndex: ix.PyodideURL(), PackageDir: t.TempDir(),
		AllowNet: []string{strings.TrimPrefix(allowed.URL, "http://")},
	})
	for _, c := range []struct{ name, code, want string }{
		{"requests.get", `import requests
r = requests.get(OK + "/echo", params={"a": 1}, headers={"X-Test": "yes"}, timeout=10)
[r.status_code, r.json()]`, `[200,{"body":"","method":"GET","uri":"/echo?a=1","x":"yes"}]`},
		{"requests.post, a session, a redirect", `import requests
with requests.Session() as s:
    a = s.post(OK + "/echo", json={"k": "v"}).json()
    b = s.get(OK + "/redirect")
[a, b.status_code, b.url.endswith("/echo?from=redirect"), b.json()["uri"]]`, `[{"body":"{\"k\": \"v\"}","method":"POST","uri":"/echo","x":""},200,true,"/echo?from=redirect"]`},
		{"requests, a denied address", `import requests
try:
    requests.get(NO + "/secret")
except requests.ConnectionError as e:
    out = str(e)
out`, ""},
		{"httpx.get and post", `import httpx
with httpx.Client() as c:
    a = c.get(OK + "/echo", params={"a": 1}, headers={"X-Test": "yes"}).json()
    b = c.post(OK + "/echo", content=b"hello").json()
[a, b]`, `[{"body":"","method":"GET","uri":"/echo?a=1","x":"yes"},{"body":"hello","method":"POST","uri":"/echo","x":""}]`},
		{"httpx.AsyncClient", `import httpx
async with httpx.AsyncClient(follow_redirects=True) as c:
    r = await c.get(OK + "/redirect")
[r.status_code, r.json()["uri"]]`, `[200,"/echo?from=redirect"]`},
		{"httpx, a denied address", `import httpx
try:
    httpx.get(NO + "/secret")
except httpx.ConnectError as e:
    out = str(e)
out`, ""},
	} {
		code := fmt.Sprintf("OK, NO = %q, %q\n", allowed.URL, denied.URL) + c.code
		got, err := json.Marshal(value(t, exec(t, sb, code)))
		if err != nil {
			t.Fatal(err)
		}
		want := c.want
		if want == "" {
			want = `"network access to ` + strings.TrimPrefix(denied.URL, "http://") + ` is not allowed in the sandbox (the host's network rules)"`
			if strings.Contains(c.name, "requests") {
				if !strings.Contains(string(got), strings.Trim(want, `"`)) {
					t.Errorf("%s: got %s, want it to say %s", c.name, got, want)
				}
				continue
			}
		}
		if string(got) != want {
			t.Errorf("%s: got %s, want %s", c.name, got, want)
		}
	}
	log.neverReached(t, "denied")
}

// urllib3 2 (the one requests brings from the official distribution) has
// an Emscripten backend of its own; the sandbox sets it aside for the same
// fetch as http.client, so that it works under the same rules.
func TestUrllib3v2(t *testing.T) {
	t.Parallel()
	ix := pkgtest.NewIndex(t, pkgtest.Urllib3())
	var mu sync.Mutex
	var seen []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Method+" "+r.URL.RequestURI())
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]string{"uri": r.URL.RequestURI()})
	}))
	t.Cleanup(srv.Close)
	denied := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { t.Errorf("the denied server was reached: %s", r.URL) }))
	t.Cleanup(denied.Close)
	addr := strings.TrimPrefix(srv.URL, "http://")
	sb := newSandbox(t, host.Config{Packages: []string{"urllib3"}, PackageIndex: ix.PyodideURL(), PackageDir: t.TempDir(), AllowNet: []string{addr}})
	got, err := json.Marshal(value(t, exec(t, sb, fmt.Sprintf(`import urllib3
r = urllib3.request("GET", %[1]q + "/a?x=1")
pm = urllib3.PoolManager()
out = [urllib3.__version__, r.status, r.json(), [pm.request("GET", %[1]q + "/b/%%d" %% i).json()["uri"] for i in range(3)]]
try:
    urllib3.request("GET", %[2]q + "/secret", retries=False)
except urllib3.exceptions.HTTPError as e:
    out.append(str(e))
out`, srv.URL, denied.URL))))
	if err != nil {
		t.Fatal(err)
	}
	want := `["2.6.3",200,{"uri":"/a?x=1"},["/b/0","/b/1","/b/2"],"('Connection aborted.', PermissionError(2, \"network access to ` + strings.TrimPrefix(denied.URL, "http://") + ` is not allowed in the sandbox (the host's network rules)\"))"]`
	if string(got) != want {
		t.Errorf("got %s\nwant %s", got, want)
	}
	mu.Lock()
	defer mu.Unlock()
	if diff := cmp.Diff([]string{"GET /a?x=1", "GET /b/0", "GET /b/1", "GET /b/2"}, seen); diff != "" {
		t.Errorf("requests served (-want +got):\n%s", diff)
	}
}

// A package whose import keeps a JS object where the preloading cannot see
// it makes the package set's snapshot impossible: the sandbox boots from
// the bare snapshot instead (not cold), and the package imports on first
// use.
func TestPackageSnapshotFallback(t *testing.T) {
	t.Parallel()
	ix := pkgtest.NewIndex(t, pkgtest.Package{Name: "jsholder", Files: map[string]string{
		"jsholder.py": "from pyodide.ffi import to_js\nHELD = [to_js([1, 2])]  # a JS object, one level down\nOK = True\n",
	}})
	cfg := host.Config{Packages: []string{"jsholder"}, PackageIndex: ix.PyodideURL(), PackageDir: t.TempDir(), CacheDir: testenv.CacheDir(t)}
	sb := newSandbox(t, cfg)
	if info, err := sb.Info(t.Context()); err != nil || !info.Snapshot {
		t.Errorf("booted from a snapshot: %v, %v", info, err)
	}
	if got := value(t, exec(t, sb, "import sys\n['jsholder' in sys.modules, __import__('jsholder').OK, list(sys.modules['jsholder'].HELD[0])]")); fmt.Sprint(got) != "[false true [1 2]]" {
		t.Errorf("got %v", got)
	}
	// The next start does not try again: it prepares nothing.
	var mu sync.Mutex
	var said []string
	cfg.Notify = func(m string) {
		mu.Lock()
		said = append(said, m)
		mu.Unlock()
	}
	again := newSandbox(t, cfg)
	if info, err := again.Info(t.Context()); err != nil || !info.Snapshot {
		t.Errorf("second start booted from a snapshot: %v, %v", info, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if slices.ContainsFunc(said, func(m string) bool { return strings.HasPrefix(m, "preparing the Python runtime") }) {
		t.Errorf("the second start tried to build the snapshot again: %q", said)
	}
}

// A package index out of reach does not stop a start that installs
// nothing yet: the sandbox runs, and micropip is left without an index.
func TestPackageIndexUnreachable(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gone := "http://" + ln.Addr().String() + "/pyodide/"
	ln.Close()
	sb := newSandbox(t, host.Config{AllowRuntimePackages: true, PackageIndex: gone, PackageDir: t.TempDir()})
	if got := value(t, exec(t, sb, "1 + 1")); fmt.Sprint(got) != "2" {
		t.Errorf("1 + 1 = %v", got)
	}
}
