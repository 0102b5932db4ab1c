package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parselbox/parselbox/host/packages/pkgtest"
	"github.com/parselbox/parselbox/internal/testenv"
)

// `parselbox packages fetch` writes a Pyodide index: the closure's wheels
// and a lock; a name the index lacks is a usage error that names it.
func TestPackagesFetch(t *testing.T) {
	t.Parallel()
	ix := pkgtest.NewIndex(t, pkgtest.Fixtures()...)
	dir := filepath.Join(t.TempDir(), "bundle")
	var out, errb bytes.Buffer
	code := run(t.Context(), []string{"packages", "fetch", "--runtime-dir", testenv.Runtime(t).Dir, "--cache-dir", t.TempDir(),
		"--index", ix.PyodideURL(), "--dir", dir, "alphapkg"}, nil, &out, &errb)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	for _, f := range []string{"pyodide-lock.json", "alphapkg-1.0-py3-none-any.whl", "betapkg-1.0-py3-none-any.whl"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("bundle: %v", err)
		}
	}
	if !strings.Contains(out.String(), "2 wheels in "+dir) {
		t.Errorf("stdout: %s", out.String())
	}
	errb.Reset()
	code = run(t.Context(), []string{"packages", "fetch", "--runtime-dir", testenv.Runtime(t).Dir, "--cache-dir", t.TempDir(),
		"--index", ix.PyodideURL(), "--dir", dir, "nosuchpkg"}, nil, &out, &errb)
	if code != exitUsage || !strings.Contains(errb.String(), "nosuchpkg: not in the package index") {
		t.Errorf("exit %d: %s", code, errb.String())
	}
}
