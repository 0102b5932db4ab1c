package packages_test

import (
	"archive/zip"
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parselbox/parselbox/host/packages"
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
