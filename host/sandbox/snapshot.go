package sandbox

import (
	"context"
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

// snapshotPath is where the snapshot for this runtime and runner lives.
func snapshotPath(cacheDir string, rt *Runtime) string {
	return filepath.Join(cacheDir, "snapshots",
		fmt.Sprintf("pyodide-%s-%s.snap", rt.PyodideVersion, runnerHash[:16]))
}

// ensureSnapshot returns the path of the Pyodide memory snapshot, building it
// first if it is missing. The snapshot is keyed by the Pyodide version and
// the hash of the embedded runner and bootstrap, so a change to either makes
// a new one; older snapshots are removed. Concurrent hosts take a file lock,
// and one builds while the others wait.
func ensureSnapshot(ctx context.Context, log hclog.Logger, notify func(string), cacheDir, runnerDir string, rt *Runtime) (string, error) {
	path := snapshotPath(cacheDir, rt)
	if fi, err := os.Stat(path); err == nil && fi.Size() > 0 {
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
	if fi, err := os.Stat(path); err == nil && fi.Size() > 0 {
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
	p, err := spawn(spawnSpec{
		args: denoArgs(rt, runnerDir, perms, 0),
		env:  denoEnv(cacheDir),
		dir:  runnerDir,
		init: initParams{
			IndexURL:     rt.Pyodide + "/",
			Snapshot:     tmp,
			MakeSnapshot: true,
		},
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
	// Older snapshots are for another Pyodide or runner: remove them.
	if olds, _ := filepath.Glob(filepath.Join(dir, "pyodide-*.snap")); len(olds) > 0 {
		for _, old := range olds {
			if old != path {
				_ = os.Remove(old)
			}
		}
	}
	log.Info("built the Pyodide memory snapshot", "path", path, "duration", time.Since(start).Round(time.Millisecond))
	if notify != nil {
		notify(fmt.Sprintf("the Python runtime is ready (%s)", time.Since(start).Round(100*time.Millisecond)))
	}
	return path, nil
}
