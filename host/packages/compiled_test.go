package packages_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/parselbox/parselbox/host/packages"
	"github.com/parselbox/parselbox/host/packages/pkgtest"
)

var target = packages.Target{ABIVersion: "2026_0", Platform: "emscripten_5_0_3", Python: "3.14.2"}

// What Pyodide installs, by wheel file name: pure Python 3, or built for
// its platform and CPython (or the stable ABI of one not newer).
func TestTargetCompatible(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ file, err string }{
		{"a-1.0-py3-none-any.whl", ""},
		{"a-1.0-py2.py3-none-any.whl", ""},
		{"numpy-2.4.6-cp314-cp314-pyemscripten_2026_0_wasm32.whl", ""},
		{"a-1.0-cp312-abi3-pyemscripten_2026_0_wasm32.whl", ""},
		{"a-1.0-cp314-cp314-emscripten_5_0_3_wasm32.whl", ""},
		{"a-1.0-cp314-cp314-pyodide_2026_0_wasm32.whl", ""},
		{"a-1.0-py2-none-any.whl", "is not a Python 3 wheel"},
		{"a-1.0-cp313-cp313-pyemscripten_2026_0_wasm32.whl", "is built for cp313/cp313, not for this Pyodide's Python 3.14.2"},
		{"a-1.0-cp315-abi3-pyemscripten_2026_0_wasm32.whl", "not for this Pyodide's Python 3.14.2"},
		{"a-1.0-cp314-cp314-pyemscripten_2025_0_wasm32.whl", "is built for pyemscripten_2025_0_wasm32, not for this Pyodide (pyemscripten_2026_0_wasm32)"},
		{"a-1.0-cp314-cp314-manylinux_2_17_x86_64.whl", "is built for manylinux_2_17_x86_64"},
		{"a-1.0.tar.gz", "is not a wheel file name"},
	} {
		err := target.Compatible(c.file)
		if (c.err == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), c.err)) {
			t.Errorf("%s: %v, want %q", c.file, err, c.err)
		}
	}
}

// runtimeLockFor writes a lock file of the target, as the runtime's.
func runtimeLockFor(t *testing.T, tg packages.Target) string {
	p := filepath.Join(t.TempDir(), packages.LockFile)
	lock := `{"info": {"abi_version": "` + tg.ABIVersion + `", "platform": "` + tg.Platform + `", "python": "` + tg.Python + `"}, "packages": {}}`
	if err := os.WriteFile(p, []byte(lock), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// A wheel with an extension module and the shared library package it
// depends on, from a Pyodide index: the library first, its directory on
// the loader's path (Libs), both marked compiled; a second install asks
// nothing.
func TestInstallCompiled(t *testing.T) {
	t.Parallel()
	ix := pkgtest.NewIndex(t, pkgtest.Compiled("pyemscripten_2026_0_wasm32")...)
	s := &packages.Store{Dir: t.TempDir()}
	src := packages.Source{Index: ix.PyodideURL(), RuntimeLock: runtimeLockFor(t, target)}
	ws, err := s.Install(t.Context(), src, []string{"tinyext"})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"libpbxtriple", "tinyext"}, names(ws)); diff != "" {
		t.Fatalf("wheels (-want +got):\n%s", diff)
	}
	lib, ext := ws[0], ws[1]
	if !lib.Binary || !ext.Binary || len(lib.Libs) != 1 || lib.Libs[0] != lib.Site || len(ext.Libs) != 0 {
		t.Errorf("library %+v, extension %+v", lib, ext)
	}
	if diff := cmp.Diff([]string{"tinyext"}, ext.Imports); diff != "" {
		t.Errorf("the extension's imports (-want +got):\n%s", diff)
	}
	if got := readSite(t, s, lib, "libpbxtriple.so"); !strings.HasPrefix(got, "\x00asm") {
		t.Errorf("the library: %q", got[:8])
	}
	n := len(ix.Requests())
	again, err := s.Install(t.Context(), src, []string{"tinyext"})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(ws, again); diff != "" {
		t.Errorf("second install differs (-first +second):\n%s", diff)
	}
	if more := ix.Requests()[n:]; len(more) != 0 {
		t.Errorf("the second install downloaded: %q", more)
	}
	// A bundle of them is a Pyodide index that gives the same.
	dir := filepath.Join(t.TempDir(), "bundle")
	if _, err := s.Bundle(t.Context(), src, []string{"tinyext"}, dir); err != nil {
		t.Fatal(err)
	}
	fromBundle, err := (&packages.Store{Dir: t.TempDir()}).Install(t.Context(), packages.Source{Index: dir, RuntimeLock: src.RuntimeLock}, []string{"tinyext"})
	if err != nil {
		t.Fatal(err)
	}
	if len(fromBundle) != 2 || fromBundle[0].SHA256 != lib.SHA256 || len(fromBundle[0].Libs) != 1 || fromBundle[1].SHA256 != ext.SHA256 {
		t.Errorf("from the bundle: %+v", fromBundle)
	}
	// A library from an index built for another ABI is refused, named.
	_, err = s.Install(t.Context(), packages.Source{Index: ix.PyodideURL(), RuntimeLock: runtimeLockFor(t, packages.Target{ABIVersion: "2027_0", Platform: "emscripten_6_0_0", Python: "3.15.0"})}, []string{"tinyext"})
	if err == nil || !strings.Contains(err.Error(), "tinyext: tinyext-1.0-cp312-abi3-pyemscripten_2026_0_wasm32.whl is built for pyemscripten_2026_0_wasm32, not for this Pyodide (pyemscripten_2027_0_wasm32)") {
		t.Errorf("another ABI: %v", err)
	}
}
