package host_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/parselbox/parselbox/host"
	"github.com/parselbox/parselbox/host/packages/pkgtest"
	"github.com/parselbox/parselbox/internal/testenv"
)

// runtimePlatform is the pinned Pyodide's wheel platform tag
// (pyemscripten_ABI_wasm32), from its lock file.
func runtimePlatform(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(testenv.Runtime(t).Dir, "node_modules", "pyodide", "pyodide-lock.json"))
	if err != nil {
		t.Fatal(err)
	}
	var l struct {
		Info struct {
			ABIVersion string `json:"abi_version"`
		} `json:"info"`
	}
	if err := json.Unmarshal(b, &l); err != nil || l.Info.ABIVersion == "" {
		t.Fatalf("the runtime's lock file: %v (abi_version %q)", err, l.Info.ABIVersion)
	}
	return "pyemscripten_" + l.Info.ABIVersion + "_wasm32"
}

// Compiled packages from a loopback Pyodide index, as Pyodide's own loader
// takes them: a shared library package (a zip of WebAssembly side modules,
// as libopenblas) and a wheel with an extension module that needs it (as
// scipy), its dependency. The host installs both; in the sandbox the
// extension module loads, its needed library found on the dynamic
// loader's path, and calls into it. They are left out of the snapshot
// (which holds the heap, not the modules a library adds), which still
// boots.
func TestPackagesCompiled(t *testing.T) {
	t.Parallel()
	ix := pkgtest.NewIndex(t, append(pkgtest.Fixtures(), pkgtest.Compiled(runtimePlatform(t))...)...)
	cfg := host.Config{
		Packages:     []string{"tinyext", "alphapkg"},
		PackageIndex: ix.PyodideURL(),
		PackageDir:   t.TempDir(),
	}
	sb := newSandbox(t, cfg)
	if info, err := sb.Info(t.Context()); err != nil || !info.Snapshot {
		t.Errorf("booted from a snapshot: %v, %v", info, err)
	}
	got := value(t, exec(t, sb, "import sys\n['tinyext' in sys.modules, 'alphapkg' in sys.modules]"))
	if fmt.Sprint(got) != "[false true]" {
		t.Errorf("preloaded (tinyext, alphapkg): %v", got)
	}
	got = value(t, exec(t, sb, "import tinyext\n[tinyext.triple(14), tinyext.__file__.endswith('/tinyext.abi3.so'), tinyext.triple.__doc__]"))
	if fmt.Sprint(got) != "[42 true 3*x, computed by libpbxtriple]" {
		t.Errorf("the extension module: %v", got)
	}
	for _, want := range []string{"/pyodide/libpbxtriple-1.0.zip", "/pyodide/tinyext-1.0-cp312-abi3-" + runtimePlatform(t) + ".whl"} {
		if !slices.Contains(ix.Requests(), want) {
			t.Errorf("the host did not fetch %s: %q", want, ix.Requests())
		}
	}
	// The user's environment is theirs, with the library path added.
	if got := value(t, exec(t, sb, "import os\nos.environ['LD_LIBRARY_PATH'].split(':')[:2]")); fmt.Sprint(got) != "[/usr/lib /lib/python3.14/site-packages]" {
		t.Errorf("LD_LIBRARY_PATH starts with %v", got)
	}
	// After a restart (the process killed; a fresh one from the snapshot) too.
	killed(t, sb)
	if got := value(t, exec(t, sb, "import tinyext\ntinyext.triple(5)")); fmt.Sprint(got) != "15" {
		t.Errorf("after a restart: %v", got)
	}
}

// A compiled package installed at run time (allow_runtime_packages) loads
// with its shared library.
func TestPackagesCompiledAtRuntime(t *testing.T) {
	t.Parallel()
	ix := pkgtest.NewIndex(t, pkgtest.Compiled(runtimePlatform(t))...)
	sb := newSandbox(t, host.Config{AllowRuntimePackages: true, PackageIndex: ix.PyodideURL(), PackageDir: t.TempDir()})
	if got := value(t, exec(t, sb, "import tinyext\ntinyext.triple(7)")); fmt.Sprint(got) != "21" {
		t.Errorf("got %v", got)
	}
	killed(t, sb)
	if got := value(t, exec(t, sb, "import tinyext\ntinyext.triple(8)")); fmt.Sprint(got) != "24" {
		t.Errorf("after a restart: %v", got)
	}
}

// Compiled code the runtime's Pyodide cannot load is refused by the host,
// named: a wheel built for another Pyodide ABI or for Linux, a "wasm" file
// that is not WebAssembly. Without its shared library, the extension
// module's import fails in Python with an ImportError naming the library.
func TestPackagesCompiledRefused(t *testing.T) {
	t.Parallel()
	compiled := pkgtest.Compiled(runtimePlatform(t))
	lib, ext := compiled[0], compiled[1]
	other := ext
	other.Name, other.Tag = "otherabi", "cp312-abi3-pyemscripten_2020_0_wasm32"
	linux := ext
	linux.Name, linux.Tag = "linuxext", "cp314-cp314-manylinux_2_17_x86_64"
	fake := ext
	fake.Name, fake.Requires = "fakeext", nil
	fake.Files = map[string]string{"fakeext.abi3.so": "\x7fELF\x02\x01\x01"}
	alone := ext
	alone.Name, alone.Requires = "alone", nil
	ix := pkgtest.NewIndex(t, lib, other, linux, fake, alone)
	for _, c := range []struct{ pkg, want string }{
		{"otherabi", "otherabi-1.0-cp312-abi3-pyemscripten_2020_0_wasm32.whl is built for pyemscripten_2020_0_wasm32, not for this Pyodide (" + runtimePlatform(t) + ")"},
		{"linuxext", "is built for manylinux_2_17_x86_64, not for this Pyodide"},
		{"fakeext", "fakeext.abi3.so is not a WebAssembly module: it was built for another platform than Pyodide's"},
	} {
		_, err := host.New(t.Context(), host.Config{Packages: []string{c.pkg}, PackageIndex: ix.PyodideURL(), PackageDir: t.TempDir(),
			RuntimeDir: testenv.Runtime(t).Dir, CacheDir: testenv.CacheDir(t)})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want %q", c.pkg, err, c.want)
		}
	}
	sb := newSandbox(t, host.Config{Packages: []string{"alone"}, PackageIndex: ix.PyodideURL(), PackageDir: t.TempDir()})
	e := raised(t, exec(t, sb, "import tinyext"), "ImportError")
	if !strings.Contains(e.Message, `Failed to find dynamic library "libpbxtriple.so"`) {
		t.Errorf("importing without the library: %s", e.Message)
	}
}

// killed kills the sandbox's process, and runs an execution that may
// report the crash: the next one runs in a fresh process.
func killed(t *testing.T, sb *host.Sandbox) {
	t.Helper()
	if err := syscall.Kill(sb.PID(), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if r := exec(t, sb, "1"); r.Error != nil && r.Error.Type != "SandboxCrashed" {
		t.Fatalf("after the kill: %s: %s", r.Error.Type, r.Error.Message)
	}
}
