//go:build image

package image

import (
	"archive/tar"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"

	"github.com/parselbox/parselbox/internal/testenv"
)

// unpack writes the image's flattened filesystem under root.
func unpack(t *testing.T, rc io.Reader, root string) {
	t.Helper()
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(root, filepath.FromSlash(h.Name))
		if !strings.HasPrefix(p, root+string(filepath.Separator)) {
			t.Fatalf("entry %q escapes the root", h.Name)
		}
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
		case tar.TypeSymlink:
			os.MkdirAll(filepath.Dir(p), 0o755)
			if err := os.Symlink(h.Linkname, p); err != nil {
				t.Fatal(err)
			}
		case tar.TypeReg:
			os.MkdirAll(filepath.Dir(p), 0o755)
			f, err := os.OpenFile(p, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := io.Copy(f, tr); err != nil {
				t.Fatal(err)
			}
			f.Close()
		default:
			continue
		}
		if err := os.Lchown(p, h.Uid, h.Gid); err != nil {
			t.Fatal(err)
		}
		if h.Typeflag != tar.TypeSymlink {
			if err := os.Chmod(p, os.FileMode(h.Mode&0o777)|modeBits(h.Mode)); err != nil {
				t.Fatal(err)
			}
		}
	}
}

func modeBits(m int64) os.FileMode {
	if m&0o1000 != 0 {
		return os.ModeSticky
	}
	return 0
}

func TestImageRunsOnItsOwn(t *testing.T) {
	dir := filepath.Join(testenv.ModuleRoot(t), "bin", "image")
	p, err := layout.FromPath(dir)
	if err != nil {
		t.Fatalf("%s: %v (run make image)", dir, err)
	}
	idx, err := p.ImageIndex()
	if err != nil {
		t.Fatal(err)
	}
	m, err := idx.IndexManifest()
	if err != nil || len(m.Manifests) != 1 {
		t.Fatalf("index: %v, %+v", err, m)
	}
	img, err := idx.Image(m.Manifests[0].Digest)
	if err != nil {
		t.Fatal(err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if cf.Config.User != "65532:65532" || len(cf.Config.Entrypoint) != 1 || cf.Config.Entrypoint[0] != "/usr/local/bin/parselbox" {
		t.Errorf("config: user %q, entrypoint %v", cf.Config.User, cf.Config.Entrypoint)
	}

	root := t.TempDir()
	os.Chmod(root, 0o755)
	rc := mutate.Extract(img)
	unpack(t, rc, root)
	rc.Close()
	for _, f := range []string{"usr/local/bin/parselbox", "usr/local/bin/parselbox-bridge-shell",
		"usr/local/lib/parselbox/runtime/node_modules/pyodide/package.json", "etc/parselbox/parselbox.hcl"} {
		if _, err := os.Stat(filepath.Join(root, f)); err != nil {
			t.Errorf("the image lacks %s: %v", f, err)
		}
	}
	snaps, _ := filepath.Glob(filepath.Join(root, "var/cache/parselbox/snapshots/*.snap"))
	if len(snaps) != 1 {
		t.Errorf("snapshots in the image: %v", snaps)
	}

	// parselbox exec inside the image's root, as its user, with a fresh
	// /proc and the host's /dev (device nodes only), and no environment
	// but PATH and HOME: the runtime is found next to the binary, the
	// snapshot in the image's cache.
	script := `set -e
mount --rbind /dev "$ROOT/dev"
exec chroot --userspec=65532:65532 "$ROOT" /usr/local/bin/parselbox exec --cache-dir /var/cache/parselbox "$CODE"`
	cmd := exec.Command("unshare", "--mount", "--pid", "--fork", "--mount-proc="+filepath.Join(root, "proc"), "sh", "-c", script)
	cmd.Env = []string{"PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin", "HOME=/tmp", "ROOT=" + root,
		"CODE=import sys, os\n(list(sys.version_info[:2]), os.listdir('/workspace'), 6 * 7)"}
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("parselbox exec in the image: %v\nstdout: %s\nstderr: %s", err, stdout.String(), stderr.String())
	}
	var res struct {
		Output json.RawMessage `json:"output"`
		Error  any             `json:"error"`
	}
	if err := json.Unmarshal([]byte(stdout.String()), &res); err != nil {
		t.Fatalf("stdout: %v\n%s\nstderr: %s", err, stdout.String(), stderr.String())
	}
	if string(res.Output) != `[[3,14],[],42]` || res.Error != nil {
		t.Errorf("result %s, error %v\nstderr: %s", res.Output, res.Error, stderr.String())
	}
	// The prebuilt snapshot was used: nothing was prepared.
	if strings.Contains(stderr.String(), "prepar") {
		t.Errorf("the image's snapshot was not used:\n%s", stderr.String())
	}
}
