// Command image builds parselbox's OCI image without a container daemon
// (github.com/google/go-containerregistry): one layer with the binaries,
// the shared libraries they load (taken from this machine, found by ldd),
// the pinned runtime, a prebuilt Pyodide snapshot and a configuration that
// serves MCP over HTTP; it runs as the non-root user 65532. `make image`
// runs it:
//
//	go run ./deploy/image -bin bin -runtime runtime -cache DIR -out bin/image
//
// It writes an OCI image layout in -out (for skopeo, crane or podman:
// `oci:bin/image:parselbox`) and the same image as a `docker load` tarball,
// -out.tar.
package main

import (
	"archive/tar"
	"bytes"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// Where things go in the image.
const (
	binDir     = "/usr/local/bin"
	runtimeDir = "/usr/local/lib/parselbox/runtime" // found next to the binary
	cacheDir   = "/var/cache/parselbox"
	configFile = "/etc/parselbox/parselbox.hcl"
	uid, gid   = 65532, 65532
)

// config is the image's parselbox.hcl: MCP over HTTP on every address (a
// token is then required: $PARSELBOX_AUTH_TOKEN).
const config = `# parselbox in a container: MCP over streamable HTTP on port 9000.
# The token comes from $PARSELBOX_AUTH_TOKEN.
cache_dir   = "` + cacheDir + `"
confinement = "best-effort"

server {
  transport     = "http"
  host          = "0.0.0.0"
  port          = 9000
  drain_timeout = "2m"
}
`

func main() {
	var (
		bin       = flag.String("bin", "bin", "directory with parselbox and parselbox-bridge-* (make build)")
		runtime   = flag.String("runtime", "runtime", "the pinned runtime directory (make runtime)")
		snapshots = flag.String("cache", "", "a cache directory a first start filled (snapshots/*.snap, deno/) to ship")
		out       = flag.String("out", "bin/image", "OCI layout directory to write (and OUT.tar)")
		tag       = flag.String("tag", "parselbox:latest", "the image's name in the tarball")
	)
	flag.Parse()
	if err := build(*bin, *runtime, *snapshots, *out, *tag); err != nil {
		fmt.Fprintln(os.Stderr, "image:", err)
		os.Exit(1)
	}
}

func build(bin, runtime, snapshots, out, tag string) error {
	w := newLayer()
	for _, d := range []string{"/etc", "/etc/parselbox", "/usr", "/usr/local", binDir, "/usr/local/lib",
		"/usr/local/lib/parselbox", "/var", "/var/cache", "/proc", "/dev", "/lib", "/lib64", "/lib/x86_64-linux-gnu"} {
		w.dir(d, 0o755, 0, 0)
	}
	w.dir("/tmp", 0o1777, 0, 0)
	w.dir(cacheDir, 0o755, uid, gid)
	w.file("/etc/passwd", []byte("root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n"), 0o644, 0, 0)
	w.file("/etc/group", []byte("root:x:0:\nnonroot:x:65532:\n"), 0o644, 0, 0)
	w.file(configFile, []byte(config), 0o644, 0, 0)

	binaries, err := filepath.Glob(filepath.Join(bin, "parselbox*"))
	if err != nil || !slices.Contains(binaries, filepath.Join(bin, "parselbox")) {
		return fmt.Errorf("%s/parselbox not found: run make build", bin)
	}
	deno := filepath.Join(runtime, "node_modules", "@deno", "linux-x64-glibc", "deno")
	libs := map[string]bool{}
	for _, b := range append(slices.Clone(binaries), deno) {
		if err := sharedLibs(b, libs); err != nil {
			return err
		}
	}
	for _, b := range binaries {
		if fi, err := os.Stat(b); err != nil || fi.IsDir() {
			continue
		}
		if err := w.copy(b, path.Join(binDir, filepath.Base(b)), 0o755); err != nil {
			return err
		}
	}
	for _, l := range slices.Sorted(func(yield func(string) bool) {
		for l := range libs {
			if !yield(l) {
				return
			}
		}
	}) {
		if err := w.copyFollow(l, l, 0o755); err != nil {
			return err
		}
	}
	if err := w.tree(runtime, runtimeDir, []string{"package.json", "package-lock.json", "node_modules"}); err != nil {
		return err
	}
	if snapshots != "" {
		// The cache a first start filled: the snapshot and Deno's cache.
		snaps, _ := filepath.Glob(filepath.Join(snapshots, "snapshots", "*.snap"))
		if len(snaps) == 0 {
			return fmt.Errorf("no snapshots/*.snap in %s: run parselbox exec --cache-dir %s once", snapshots, snapshots)
		}
		w.owner = [2]int{uid, gid}
		if err := w.tree(snapshots, cacheDir, []string{"snapshots", "deno"}); err != nil {
			return err
		}
		w.owner = [2]int{}
	}
	layer, err := w.layer()
	if err != nil {
		return err
	}
	img, err := mutate.AppendLayers(empty.Image, layer)
	if err != nil {
		return err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return err
	}
	cf = cf.DeepCopy()
	cf.Architecture, cf.OS = "amd64", "linux"
	cf.Created = v1.Time{Time: time.Unix(0, 0).UTC()}
	cf.Config.User = fmt.Sprintf("%d:%d", uid, gid)
	cf.Config.Entrypoint = []string{binDir + "/parselbox"}
	cf.Config.Cmd = []string{"--config", configFile}
	cf.Config.Env = []string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=/tmp"}
	cf.Config.ExposedPorts = map[string]struct{}{"9000/tcp": {}}
	cf.Config.WorkingDir = "/tmp"
	cf.Config.Labels = map[string]string{"org.opencontainers.image.title": "parselbox"}
	if img, err = mutate.ConfigFile(img, cf); err != nil {
		return err
	}
	if err := os.RemoveAll(out); err != nil {
		return err
	}
	p, err := layout.Write(out, empty.Index)
	if err != nil {
		return err
	}
	if err := p.AppendImage(img, layout.WithAnnotations(map[string]string{"org.opencontainers.image.ref.name": "parselbox"})); err != nil {
		return err
	}
	ref, err := name.NewTag(tag)
	if err != nil {
		return err
	}
	if err := tarball.WriteToFile(out+".tar", ref, img); err != nil {
		return err
	}
	d, _ := img.Digest()
	fmt.Printf("wrote %s (OCI layout) and %s.tar: %s\n", out, out, d)
	return nil
}

// sharedLibs adds the shared libraries a binary loads (ldd), with the
// dynamic loader; a static binary has none.
func sharedLibs(bin string, libs map[string]bool) error {
	outb, err := exec.Command("ldd", bin).CombinedOutput()
	if err != nil {
		if bytes.Contains(outb, []byte("not a dynamic executable")) {
			return nil
		}
		return fmt.Errorf("ldd %s: %v: %s", bin, err, outb)
	}
	re := regexp.MustCompile(`(/\S+)\s+\(0x`)
	for _, m := range re.FindAllStringSubmatch(string(outb), -1) {
		libs[m[1]] = true // copied as the file it leads to
	}
	return nil
}

// layerWriter builds one tar layer in memory.
type layerWriter struct {
	owner [2]int // uid, gid of what tree adds
	buf   bytes.Buffer
	tw    *tar.Writer
	seen  map[string]bool
	err   error
}

func newLayer() *layerWriter {
	w := &layerWriter{seen: map[string]bool{}}
	w.tw = tar.NewWriter(&w.buf)
	return w
}

var epoch = time.Unix(0, 0)

func (w *layerWriter) header(h *tar.Header) bool {
	if w.err != nil || w.seen[h.Name] {
		return false
	}
	w.seen[h.Name] = true
	h.Name = strings.TrimPrefix(h.Name, "/")
	h.ModTime, h.Format = epoch, tar.FormatPAX
	w.err = w.tw.WriteHeader(h)
	return w.err == nil
}

func (w *layerWriter) dir(p string, mode int64, u, g int) {
	w.header(&tar.Header{Typeflag: tar.TypeDir, Name: p + "/", Mode: mode, Uid: u, Gid: g})
}

func (w *layerWriter) file(p string, data []byte, mode int64, u, g int) {
	if w.header(&tar.Header{Typeflag: tar.TypeReg, Name: p, Mode: mode, Size: int64(len(data)), Uid: u, Gid: g}) {
		_, w.err = w.tw.Write(data)
	}
}

func (w *layerWriter) copy(src, dst string, mode int64) error {
	return w.copyOwned(src, dst, mode, 0, 0)
}

// copyOwned adds a host file (a symlink as a symlink).
func (w *layerWriter) copyOwned(src, dst string, mode int64, u, g int) error {
	fi, err := os.Lstat(src)
	if err != nil {
		return err
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		target, err := os.Readlink(src)
		if err != nil {
			return err
		}
		w.header(&tar.Header{Typeflag: tar.TypeSymlink, Name: dst, Linkname: target, Mode: 0o777, Uid: u, Gid: g})
		return w.err
	}
	f, err := os.Open(src)
	if err != nil {
		return err
	}
	defer f.Close()
	if w.header(&tar.Header{Typeflag: tar.TypeReg, Name: dst, Mode: mode, Size: fi.Size(), Uid: u, Gid: g}) {
		_, w.err = io.Copy(w.tw, f)
	}
	return w.err
}

// copyFollow adds the file a host path leads to, symlinks followed.
func (w *layerWriter) copyFollow(src, dst string, mode int64) error {
	real, err := filepath.EvalSymlinks(src)
	if err != nil {
		return err
	}
	return w.copy(real, dst, mode)
}

// tree adds the named entries of src under dst, keeping the executable
// bit, owned by w.owner.
func (w *layerWriter) tree(src, dst string, names []string) error {
	u, g := w.owner[0], w.owner[1]
	w.dir(dst, 0o755, u, g)
	for _, n := range names {
		root := filepath.Join(src, n)
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(src, p)
			target := path.Join(dst, filepath.ToSlash(rel))
			fi, err := os.Lstat(p)
			if err != nil {
				return err
			}
			switch {
			case d.IsDir():
				w.dir(target, 0o755, u, g)
			case fi.Mode()&fs.ModeSymlink != 0:
				return w.copyOwned(p, target, 0o777, u, g)
			case !fi.Mode().IsRegular():
				return nil // sockets, fifos: nothing to ship
			default:
				mode := int64(0o644)
				if fi.Mode()&0o111 != 0 {
					mode = 0o755
				}
				return w.copyOwned(p, target, mode, u, g)
			}
			return w.err
		})
		if err != nil {
			return err
		}
	}
	return w.err
}

func (w *layerWriter) layer() (v1.Layer, error) {
	if w.err != nil {
		return nil, w.err
	}
	if err := w.tw.Close(); err != nil {
		return nil, err
	}
	data := w.buf.Bytes()
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil })
}
