package packages_test

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parselbox/parselbox/host/packages"
	"github.com/parselbox/parselbox/host/packages/pkgtest"
)

// zeros is an endless reader of zero bytes.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) { clear(p); return len(p), nil }

// A wheel that unpacks to more than the store takes (a zip bomb: a few MB
// that inflate to gigabytes) is refused before anything is unpacked; the
// host does not read it into memory or fill its disk.
func TestInstallZipBomb(t *testing.T) {
	t.Parallel()
	wheel := filepath.Join(t.TempDir(), "bomb-1.0-py3-none-any.whl")
	f, err := os.Create(wheel)
	if err != nil {
		t.Fatal(err)
	}
	// One member of 64 MB of zeros (64 KB compressed), then 20 raw
	// copies of it: 1.3 GB in all.
	zw := zip.NewWriter(f)
	if _, err := zw.Create("bomb/__init__.py"); err != nil {
		t.Fatal(err)
	}
	var one bytes.Buffer
	ow := zip.NewWriter(&one)
	w, err := ow.Create("bomb/0.bin")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.CopyN(w, zeros{}, 64<<20); err != nil {
		t.Fatal(err)
	}
	if err := ow.Close(); err != nil {
		t.Fatal(err)
	}
	zr, err := zip.NewReader(bytes.NewReader(one.Bytes()), int64(one.Len()))
	if err != nil {
		t.Fatal(err)
	}
	for i := range 20 {
		hdr := zr.File[0].FileHeader
		hdr.Name = fmt.Sprintf("bomb/%d.bin", i)
		raw, err := zr.File[0].OpenRaw()
		if err != nil {
			t.Fatal(err)
		}
		w, err := zw.CreateRaw(&hdr)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.Copy(w, raw); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	s := &packages.Store{Dir: t.TempDir()}
	_, err = s.Install(t.Context(), packages.Source{}, []string{wheel})
	if err == nil || !strings.Contains(err.Error(), "unpacks to more than") {
		t.Fatalf("a zip bomb: %v", err)
	}
	sites, _ := filepath.Glob(filepath.Join(s.SiteDir(), "*"))
	if len(sites) > 0 {
		t.Errorf("unpacked anyway: %q", sites)
	}
}

// A remote package index names its files by URL: one that is a file on the
// host (file://) is refused, in a simple index's links and in a Pyodide
// lock's file names alike, so that an index cannot have the host read its
// own files into the package store (and a sandbox import them).
func TestRemoteIndexNamesNoHostFile(t *testing.T) {
	t.Parallel()
	secret := pkgtest.Package{Name: "hostsecret", Files: map[string]string{"hostsecret.py": "KEY = 'host-only'\n"}}
	wheel := filepath.Join(t.TempDir(), secret.FileName()) // on the host, nowhere in an index
	b := secret.Wheel(t)
	if err := os.WriteFile(wheel, b, 0o644); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b)
	lock, err := json.Marshal(map[string]any{"info": map[string]string{"python": "3.14"}, "packages": map[string]any{
		"hostsecret": map[string]any{"name": "hostsecret", "version": "1.0", "file_name": "file://" + wheel,
			"sha256": hex.EncodeToString(sum[:]), "package_type": "package", "imports": []string{"hostsecret"}, "depends": []string{}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/pyodide/pyodide-lock.json":
			w.Write(lock)
		case "/simple/hostsecret/":
			fmt.Fprintf(w, `<a href="file://%s#sha256=%s">%s</a>`, wheel, hex.EncodeToString(sum[:]), secret.FileName())
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	for _, index := range []string{srv.URL + "/pyodide/", srv.URL + "/simple/"} {
		s := &packages.Store{Dir: t.TempDir()}
		ws, err := s.Install(t.Context(), packages.Source{Index: index, RuntimeLock: runtimeLock(t)}, []string{"hostsecret"})
		if err == nil {
			t.Errorf("%s: the host installed %s from its own disk: %+v", index, wheel, ws)
		}
		if got, _ := filepath.Glob(filepath.Join(s.SiteDir(), "hostsecret-*")); len(got) > 0 {
			t.Errorf("%s: unpacked into the store: %q", index, got)
		}
	}
}

// A package index that answers with more than a wheel can be (here an
// endless body, as a lock's file) is cut off: the host does not read it
// all into memory. The limit is lowered to 4 MB for the test (not
// parallel: the limit is the package's).
func TestInstallEndlessDownload(t *testing.T) {
	t.Cleanup(packages.SetMaxDownload(4 << 20))
	lock, err := json.Marshal(map[string]any{"info": map[string]string{"python": "3.14"}, "packages": map[string]any{
		"endless": map[string]any{"name": "endless", "version": "1.0", "file_name": "endless-1.0-py3-none-any.whl",
			"sha256": strings.Repeat("0", 64), "package_type": "package", "imports": []string{"endless"}, "depends": []string{}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/pyodide/pyodide-lock.json":
			w.Write(lock)
		case "/pyodide/endless-1.0-py3-none-any.whl":
			buf := make([]byte, 1<<20)
			for {
				if _, err := w.Write(buf); err != nil {
					return // the host hung up
				}
			}
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	s := &packages.Store{Dir: t.TempDir()}
	_, err = s.Install(t.Context(), packages.Source{Index: srv.URL + "/pyodide/"}, []string{"endless"})
	if err == nil || !strings.Contains(err.Error(), "more than") {
		t.Errorf("an endless download: %v", err)
	}
}
