package main

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parselbox/parselbox/host/packages/pkgtest"
	"github.com/parselbox/parselbox/internal/testenv"
)

// `parselbox packages fetch` writes a Pyodide index: the closure's wheels
// and a lock; a name the index lacks is a usage error that names it. The
// README's path for a host without the internet: with the index gone,
// `parselbox exec --packages NAME --package-index DIR` imports the package
// from the bundle (its dependency too), the sandbox's network off.
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

	ix.Close()
	pkgDir := t.TempDir()
	other := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { t.Error("the sandbox reached a loopback server") }))
	t.Cleanup(other.Close)
	code, res, stderr := runCLI(t, "", "exec", "--packages", "alphapkg", "--package-index", dir, "--package-dir", pkgDir,
		"import alphapkg, betapkg, urllib.request\ntry:\n    urllib.request.urlopen('"+other.URL+"')\nexcept OSError as e:\n    refused = 'not allowed in the sandbox' in str(e)\n[alphapkg.GREETING, refused]")
	if code != exitOK || string(res.Output) != `["alpha+beta",true]` {
		t.Errorf("exec from the bundle: exit %d, %+v, stderr %s", code, res, stderr)
	}
	code, _, stderr = runCLI(t, "", "exec", "--packages", "gammadata", "--package-index", dir, "--package-dir", pkgDir, "1")
	if code != exitUsage || !strings.Contains(stderr, "gammadata: not in the package index "+dir) {
		t.Errorf("a package the bundle lacks: exit %d, stderr %s", code, stderr)
	}
}
