package confine

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parselbox/parselbox/internal/testenv"
)

// kernelLayers skips a test that needs the kernel's layers where this
// machine does not offer them (say which), and returns the report.
func kernelLayers(t *testing.T) Report {
	t.Helper()
	rep, err := Check(&Spec{Mode: Required})
	if err != nil {
		testenv.Missing(t, testenv.RequireConfinementEnv, "this machine cannot confine (%v): the kernel layers are not tested here", err)
	}
	return rep
}

// TestVerify starts a process through the real shim, with every layer, and
// checks from inside it that each holds: a file outside the granted paths,
// a TCP port not allowed, a new process, a unix socket and a keyring are
// all refused; it runs as the unprivileged user, in its own cgroup.
func TestVerify(t *testing.T) {
	rep := kernelLayers(t)
	got, f, err := Verify(&Spec{Mode: Required, MemoryMB: 256, CPU: 0.5})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("layers: %s", got.Summary())
	t.Logf("observed: %+v", *f)
	if rep.Summary() == "" || len(got.Unavailable()) > 0 {
		t.Errorf("report %+v", got)
	}
	for what, msg := range map[string]string{
		"read outside": f.ReadOutside, "fork": f.Fork, "unix socket": f.Unix, "keyctl": f.Keyctl,
	} {
		if !strings.Contains(msg, "permission denied") && !strings.Contains(msg, "operation not permitted") {
			t.Errorf("%s: %q", what, msg)
		}
	}
	// Landlock's refusals are EACCES, seccomp's EPERM: each layer did its part.
	if !strings.Contains(f.ReadOutside, "permission denied") || !strings.Contains(f.Connect, "permission denied") {
		t.Errorf("Landlock: read %q, connect %q", f.ReadOutside, f.Connect)
	}
	if !strings.Contains(f.Fork, "operation not permitted") {
		t.Errorf("seccomp: fork %q", f.Fork)
	}
}

// TestVerifyCatchesAMissingLayer checks that Verify's own check fails when
// a layer it reports is not felt, so that a green doctor means something.
func TestVerifyCatchesAMissingLayer(t *testing.T) {
	t.Parallel()
	rep := Report{Layers: []Layer{{Name: LayerLandlock, State: Active}, {Name: LayerSeccomp, State: Active}, {Name: LayerUser, State: Active}}}
	f := &Facts{UID: 0, ReadOutside: "", Seccomp: true, Fork: "operation not permitted"}
	err := f.check(rep, &Spec{})
	for _, want := range []string{"landlock is reported active", "seccomp is reported active", "user is reported active"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%v: want %q", err, want)
		}
	}
}

// TestShimFailsClosed: a plan the shim cannot apply stops the program from
// running at all, with the reason on stderr.
func TestShimFailsClosed(t *testing.T) {
	t.Parallel()
	exe, _ := os.Executable()
	marker := filepath.Join(t.TempDir(), "ran")
	cmd := exec.Command(exe)
	cmd.Args = []string{ShimName, `{"parent":0,"uid":-1,"gid":-1,"cgroup":["/nonexistent/cgroup.procs"]}`, "/bin/touch", "touch", marker}
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != exitShim {
		t.Errorf("exit: %v", err)
	}
	if !strings.Contains(string(out), "[error] parselbox-confine: joining cgroup") {
		t.Errorf("stderr: %q", out)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("the program ran")
	}
	// A wrong parent is refused too (the host it was meant for is gone).
	cmd = exec.Command(exe)
	cmd.Args = []string{ShimName, `{"parent":1,"uid":-1,"gid":-1}`, "/bin/touch", "touch", marker}
	if out, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(out), "parent 1 is gone") {
		t.Errorf("wrong parent: %v %q", err, out)
	}
}

// A program that cannot be re-executed as the shim names a separate one in
// Spec.Shim: the smallest one (testdata/shim) confines as well.
func TestStandaloneShim(t *testing.T) {
	kernelLayers(t)
	shim := filepath.Join(t.TempDir(), "parselbox-confine")
	build := exec.Command("go", "build", "-o", shim, "./testdata/shim")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	rep, f, err := Verify(&Spec{Mode: Required, Shim: shim})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("through %s: %s; the process saw %+v", shim, rep.Summary(), *f)
}
