package sandbox

import (
	"context"
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/hashicorp/go-hclog"
)

// snapshotBuildTimeout bounds building the snapshot: a cold boot plus the
// bootstrap, ~5 s on a quiet machine, 10 s or more under load.
var snapshotBuildTimeout = 3 * time.Minute

// snapshotMaxAge is how long a snapshot other than the one being built
// stays in the cache: see pruneSnapshots.
const snapshotMaxAge = 14 * 24 * time.Hour

// pruneSnapshots removes, after a build, the snapshots other than keep in
// dir (and in its packages folder) built more than snapshotMaxAge ago:
// those of another Pyodide or runner, and of package sets no longer
// declared. Younger ones stay, as two parselbox versions sharing one cache directory
// would otherwise remove each other's snapshot at every start. One still
// in use that is removed is built again on its host's next start.
func pruneSnapshots(dir, keep string) {
	olds, _ := filepath.Glob(filepath.Join(dir, "pyodide-*.snap"))
	pkgs, _ := filepath.Glob(filepath.Join(dir, "packages", "pkgs-*.snap"))
	for _, old := range append(olds, pkgs...) {
		if fi, err := os.Stat(old); err == nil && old != keep && time.Since(fi.ModTime()) > snapshotMaxAge {
			_ = os.Remove(old)
		}
	}
}

// snapshotPath is where the snapshot for this runtime and runner lives;
// with packages to preload, one per package set (the unpacked wheels'
// directories, which name their checksums, and the modules imported).
func snapshotPath(cacheDir string, rt *Runtime, pk *Packages) string {
	if pk == nil || len(pk.Preload) == 0 {
		return filepath.Join(cacheDir, "snapshots",
			fmt.Sprintf("pyodide-%s-%s.snap", rt.PyodideVersion, runnerKey(rt)[:16]))
	}
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00%q\x00%q", rt.PyodideVersion, runnerKey(rt), pk.Paths, pk.Preload)
	return filepath.Join(cacheDir, "snapshots", "packages", fmt.Sprintf("pkgs-%x.snap", h.Sum(nil)[:12]))
}

// ensureSnapshot returns the path of the Pyodide memory snapshot, building it
// first if it is missing. The snapshot is keyed by the Pyodide version, the
// hash of the embedded runner and bootstrap and Deno's version (runnerKey),
// so a change to any makes a new one; old snapshots are pruned
// (pruneSnapshots). Concurrent hosts take a file lock, and one builds while
// the others wait.
//
// With packages to preload (pk.Preload), the snapshot has them imported:
// its process sees pk.Dir read-only at PackagesPath, as the sandboxes do.
//
// bad, when not nil, is a snapshot file that did not load: it is replaced
// (by a rename over it, so that other hosts sharing the cache directory
// never find the path missing) unless another host replaced it already.
func ensureSnapshot(ctx context.Context, log hclog.Logger, notify func(string), cacheDir, runnerDir string, rt *Runtime, pk *Packages, bad os.FileInfo) (string, error) {
	path := snapshotPath(cacheDir, rt, pk)
	usable := func() bool {
		fi, err := os.Stat(path)
		return err == nil && fi.Size() > 0 && (bad == nil || !os.SameFile(fi, bad))
	}
	if usable() {
		return path, nil
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("creating snapshot directory: %w", err)
	}
	lock, err := os.OpenFile(filepath.Join(dir, ".lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return "", fmt.Errorf("locking snapshot directory: %w", err)
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return "", fmt.Errorf("locking snapshot directory: %w", err)
	}
	defer syscall.Flock(int(lock.Fd()), syscall.LOCK_UN)
	if usable() {
		return path, nil // built by another host while we waited
	}

	start := time.Now()
	if notify != nil {
		notify("preparing the Python runtime (once, a few seconds; the next starts take under a second)...")
	}
	tmp := path + ".tmp-" + fmt.Sprint(os.Getpid())
	defer os.Remove(tmp)
	perms := permissions{
		read:  []string{runnerDir, interruptPipe},
		write: []string{tmp},
	}
	init := initParams{
		IndexURL:     rt.Pyodide + "/",
		Snapshot:     tmp,
		MakeSnapshot: true,
	}
	if pk != nil && len(pk.Preload) > 0 {
		dir, err := filepath.EvalSymlinks(pk.Dir)
		if err != nil {
			return "", fmt.Errorf("building snapshot: packages: %w", err)
		}
		perms.read = append(perms.read, dir)
		init.Roots = []initRoot{{Target: PackagesPath, Dir: dir, ReadOnly: true}}
		init.Packages = &initPackages{Paths: pk.Paths, Libs: pk.Libs, Preload: pk.Preload}
	}
	p, err := spawn(spawnSpec{
		args:   denoArgs(rt, runnerDir, perms, 0),
		env:    denoEnv(cacheDir),
		dir:    runnerDir,
		init:   init,
		log:    log.Named("snapshot"),
		limits: protocolLimits{maxMessage: DefaultMaxMessageBytes},
	})
	if err != nil {
		return "", fmt.Errorf("building snapshot: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, snapshotBuildTimeout)
	defer cancel()
	select {
	case <-p.exited:
	case <-ctx.Done():
		p.kill(killTimeout)
		<-p.exited
		return "", fmt.Errorf("building snapshot: %w; stderr: %s", ctx.Err(), p.stderr.String())
	}
	if st := p.exitStatus(); st != "exit status 0" {
		return "", fmt.Errorf("building snapshot: deno %s: %s", st, p.stderr.String())
	}
	if fi, err := os.Stat(tmp); err != nil || fi.Size() == 0 {
		return "", fmt.Errorf("building snapshot: no snapshot written: %s", p.stderr.String())
	}
	if err := os.Rename(tmp, path); err != nil {
		return "", fmt.Errorf("building snapshot: %w", err)
	}
	pruneSnapshots(filepath.Join(cacheDir, "snapshots"), path)
	log.Info("built the Pyodide memory snapshot", "path", path, "duration", time.Since(start).Round(time.Millisecond))
	if notify != nil {
		notify(fmt.Sprintf("the Python runtime is ready (%s)", time.Since(start).Round(100*time.Millisecond)))
	}
	return path, nil
}
