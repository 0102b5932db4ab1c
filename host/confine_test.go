package host_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/hashicorp/go-hclog"

	"github.com/parselbox/parselbox/host"
	"github.com/parselbox/parselbox/host/confine"
	"github.com/parselbox/parselbox/internal/testenv"
)

// needLandlock skips where the kernel has no Landlock, saying so.
func needLandlock(t *testing.T) {
	t.Helper()
	if rep, _ := confine.Check(&confine.Spec{}); !rep.Active(confine.LayerLandlock) {
		testenv.Missing(t, testenv.RequireConfinementEnv, "no Landlock on this machine (%s): the kernel's path checks are not tested here", rep.Summary())
	}
}

// With Landlock, the kernel checks paths after symlinks are resolved: a
// mount may hold a link that leads out of it (the host starts), and reading
// through it fails. Python's own file functions resolve links inside
// Pyodide's file system (an absolute host path there names nothing); what
// reaches the host's kernel through the link (fetch of a file: URL, Deno's
// own file functions) is refused by Landlock with EACCES.
func TestSymlinkOutOfMountWithLandlock(t *testing.T) {
	t.Parallel()
	needLandlock(t)
	secretDir := t.TempDir()
	os.WriteFile(filepath.Join(secretDir, "secret.txt"), []byte("top secret"), 0o644)
	mnt := t.TempDir()
	os.WriteFile(filepath.Join(mnt, "real.txt"), []byte("inside"), 0o644)
	os.Symlink("real.txt", filepath.Join(mnt, "link.txt"))
	os.MkdirAll(filepath.Join(mnt, "sub"), 0o755)
	os.Symlink(secretDir, filepath.Join(mnt, "sub", "escape"))
	os.Symlink(filepath.Join(secretDir, "secret.txt"), filepath.Join(mnt, "secret-link.txt"))
	os.Symlink("../../"+filepath.Base(secretDir)+"/secret.txt", filepath.Join(mnt, "sub", "relative-escape.txt"))

	sb := newSandbox(t, host.Config{Mounts: map[string]host.Mount{"data": {Source: mnt}}})
	if !sb.Confinement().Active(confine.LayerLandlock) {
		t.Fatalf("Landlock is not active: %s", sb.Confinement().Summary())
	}
	if got := value(t, exec(t, sb, `open("/mnt/data/link.txt").read()`)); got != "inside" {
		t.Errorf("a link inside the mount: %v", got)
	}
	leaked := func(r *host.Result) bool {
		s := string(r.Output) + r.Stdout + r.Stderr
		if r.Error != nil {
			s += r.Error.Message + r.Error.Traceback
		}
		return strings.Contains(s, "top secret")
	}
	for _, code := range []string{
		`open("/mnt/data/sub/escape/secret.txt").read()`,
		`open("/mnt/data/secret-link.txt").read()`,
		`open("/mnt/data/sub/relative-escape.txt").read()`,
		`import os; os.listdir("/mnt/data/sub/escape")`,
	} {
		r := exec(t, sb, code)
		if r.Error == nil || leaked(r) {
			t.Errorf("%s: %s %+v", code, r.Output, r.Error)
			continue
		}
		if r.Error.Type != "PermissionError" || !strings.Contains(r.Error.Message, "Permission denied") {
			t.Errorf("%s: %s: %s, want PermissionError: Permission denied", code, r.Error.Type, r.Error.Message)
		}
	}
	// Through the host's kernel: a file: URL of the link's path, which
	// Deno's permission check allows (it is under the mount).
	fetch := func(path string) *host.Result {
		return exec(t, sb, "from js import fetch\nr = await fetch('file://"+path+"')\nawait r.text()")
	}
	for _, p := range []string{filepath.Join(mnt, "sub", "escape", "secret.txt"), filepath.Join(mnt, "secret-link.txt")} {
		r := fetch(p)
		if r.Error == nil || leaked(r) {
			t.Fatalf("fetch through %s: %s %+v", p, r.Output, r.Error)
		}
		if control := fetch(filepath.Join(mnt, "real.txt")); control.Error != nil {
			t.Logf("the runner refuses file: URLs (%s): the kernel's refusal is tested with Deno's permissions widened (package confine)", control.Error.Message)
		} else if !strings.Contains(r.Error.Message, "Permission denied (os error 13)") {
			t.Errorf("fetch through %s: not refused by the kernel: %s", p, r.Error.Message)
		} else {
			t.Logf("fetch through %s: refused by Landlock: %s", p, r.Error.Message)
		}
	}
	// The sandbox lives on.
	if got := value(t, exec(t, sb, "'still here'")); got != "still here" {
		t.Errorf("after the attempts: %v", got)
	}
}

// sbx.info() says which layers confine the sandbox.
func TestInfoShowsConfinement(t *testing.T) {
	t.Parallel()
	sb := newSandbox(t, host.Config{})
	got := value(t, exec(t, sb, "import json; json.dumps(sbx.info()['confinement'])"))
	var rep confine.Report
	if err := json.Unmarshal([]byte(got.(string)), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Mode != confine.BestEffort || len(rep.Layers) != 6 {
		t.Fatalf("sbx.info()['confinement'] = %s", got)
	}
	for i, l := range rep.Layers {
		if l != sb.Confinement().Layers[i] {
			t.Errorf("layer %d: %+v, the host says %+v", i, l, sb.Confinement().Layers[i])
		}
		if l.State != confine.Active && l.Reason == "" {
			t.Errorf("%s is %s with no reason", l.Name, l.State)
		}
	}
}

func TestConfinementOptions(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		cfg  host.Config
		want string
	}{
		"bad mode":     {host.Config{Confinement: "strict"}, `confinement: must be "required", "best-effort" or "off"`},
		"negative cpu": {host.Config{CPU: -1}, "cpu: must be a number of cores"},
		"root run_as":  {host.Config{RunAs: "0"}, "must not run as root"},
	} {
		t.Run(name, func(t *testing.T) {
			tc.cfg.RuntimeDir = testenv.Runtime(t).Dir
			_, err := host.New(t.Context(), tc.cfg)
			var ce *host.ConfigError
			if !errors.As(err, &ce) || !strings.Contains(err.Error(), tc.want) {
				if tc.want == "must not run as root" && os.Geteuid() != 0 {
					return // run_as only matters to a root host
				}
				t.Errorf("%v, want a ConfigError with %q", err, tc.want)
			}
		})
	}
}

// With confinement = "required", the sandbox starts when the machine offers
// every layer, and refuses to, naming the missing ones, when it does not.
func TestConfinementRequired(t *testing.T) {
	t.Parallel()
	rep, checkErr := confine.Check(&confine.Spec{Mode: confine.Required})
	sb, err := host.New(t.Context(), host.Config{RuntimeDir: testenv.Runtime(t).Dir, CacheDir: testenv.CacheDir(t), Confinement: "required"})
	if checkErr != nil {
		if os.Getenv(testenv.RequireConfinementEnv) != "" {
			t.Errorf("this machine cannot confine (%v) and $%s is set", checkErr, testenv.RequireConfinementEnv)
		}
		var ce *host.ConfigError
		if !errors.As(err, &ce) || !errors.Is(err, confine.ErrUnavailable) {
			t.Errorf("required on a machine without %v: %v", rep.Unavailable(), err)
		}
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	if got := value(t, exec(t, sb, "6*7")); got != float64(42) {
		t.Errorf("6*7 = %v", got)
	}
	// The process runs as the unprivileged user (TestRunAsGivesFilesBack
	// checks what it writes).
	if os.Geteuid() == 0 {
		var st syscall.Stat_t
		if err := syscall.Stat("/proc/"+strconv.Itoa(sb.PID()), &st); err != nil {
			t.Fatal(err)
		}
		if st.Uid != 65532 {
			t.Errorf("the sandbox process runs as uid %d", st.Uid)
		}
	}
}

// A root host runs the sandbox as run_as: what the sandbox writes in the
// output directory and in a rw mount is owned by that user while it runs,
// and by the owner of each directory once the sandbox is closed.
func TestRunAsGivesFilesBack(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		testenv.Missing(t, testenv.RequireConfinementEnv, "the host is not root: run_as does not apply")
	}
	if rep, err := confine.Check(&confine.Spec{Mode: confine.Required}); err != nil {
		testenv.Missing(t, testenv.RequireConfinementEnv, "the kernel layers cannot all be applied here (%v; %s)", err, rep.Summary())
	}
	out, mnt := t.TempDir(), t.TempDir()
	for _, d := range []string{out, mnt} { // someone else's directories
		if err := os.Chown(d, 1000, 1001); err != nil {
			t.Fatal(err)
		}
	}
	sb, err := host.New(t.Context(), host.Config{RuntimeDir: testenv.Runtime(t).Dir, CacheDir: testenv.CacheDir(t),
		Logger: testenv.Logger(t), Confinement: "required", RunAs: "65000:65001", OutputDir: out,
		Mounts: map[string]host.Mount{"data": {Source: mnt, Mode: "rw"}}})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	exec(t, sb, `import os
os.makedirs("/workspace/sub")
open("/workspace/sub/out.txt", "w").write("out")
open("/mnt/data/m.txt", "w").write("m")`)
	owner := func(p string) [2]uint32 {
		t.Helper()
		var st syscall.Stat_t
		if err := syscall.Lstat(p, &st); err != nil {
			t.Fatal(err)
		}
		return [2]uint32{st.Uid, st.Gid}
	}
	files := []string{filepath.Join(out, "sub"), filepath.Join(out, "sub", "out.txt"), filepath.Join(mnt, "m.txt")}
	for _, p := range files {
		if got := owner(p); got[0] != 65000 {
			t.Errorf("%s while the sandbox runs: owned by %v, want uid 65000", p, got)
		}
	}
	if err := sb.Close(); err != nil {
		t.Fatal(err)
	}
	for _, p := range files {
		if got := owner(p); got != [2]uint32{1000, 1001} {
			t.Errorf("%s after Close: owned by %v, want 1000:1001 (the directory's owner)", p, got)
		}
	}
}

// The startup log says which kernel layers confine the sandbox (the same
// summary as sbx.info() and doctor), at Info when all apply and as a
// warning when some do not or confinement is off.
func TestStartupLogSaysLayers(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"", "off"} {
		t.Run("confinement="+mode, func(t *testing.T) {
			t.Parallel()
			var out testenv.SyncBuffer
			log := hclog.New(&hclog.LoggerOptions{Output: &out, Level: hclog.Info, Name: "startup"})
			sb := newSandbox(t, host.Config{Confinement: mode, Logger: log})
			got := out.String()
			rep := sb.Confinement()
			var want string
			switch {
			case mode == "off":
				want = "[WARN]  startup: kernel confinement is off: Deno's permissions are the sandbox's only wall"
			case len(rep.Unavailable()) > 0:
				want = fmt.Sprintf("[WARN]  startup: kernel confinement: some layers are unavailable: mode=best-effort layers=%q", rep.Summary())
			default:
				want = fmt.Sprintf("[INFO]  startup: kernel confinement: mode=best-effort layers=%q", rep.Summary())
			}
			if !strings.Contains(got, want) {
				t.Errorf("the log does not say\n%s\nit says:\n%s", want, got)
			}
		})
	}
}
