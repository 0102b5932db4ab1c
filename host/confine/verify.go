package confine

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// verifyName is the argv[0] under which this program, started through the
// shim by Verify, reports what the kernel applied to it.
const verifyName = "parselbox-confine-verify"

// Facts are what a process confined by Verify observes about itself. Each
// error field holds the error of an attempt the layers should stop ("" if
// it succeeded).
type Facts struct {
	UID, GID   int
	CapEff     string // hex, from /proc/self/status
	NoNewPrivs bool
	Seccomp    bool   // in filter mode
	Cgroup     string // the process's cgroup(s) named by this package
	// ReadOutside is the error of opening a file outside the granted paths.
	ReadOutside string
	// ReadGranted is the error of opening a granted file (expected "").
	ReadGranted string
	// Fork is the error of a clone that is not a thread.
	Fork string
	// Unix is the error of creating a unix socket.
	Unix string
	// Keyctl is the error of looking up the session keyring.
	Keyctl string
	// Connect is the error of a TCP connection to the port Verify listens
	// on, which spec does not allow.
	Connect string
}

// Verify starts a process of this program through the shim with spec, with
// a readable file and a listening port that spec does not grant, and
// returns what it observed, checked against the report: an active layer
// that the process did not feel is an error. It is the proof `parselbox
// doctor` gives that the layers hold on this machine.
func Verify(spec *Spec) (Report, *Facts, error) {
	exe, err := os.Executable()
	if err != nil {
		return Report{}, nil, err
	}
	dir, err := os.MkdirTemp("", "parselbox-verify-")
	if err != nil {
		return Report{}, nil, err
	}
	defer os.RemoveAll(dir)
	granted, outside := filepath.Join(dir, "granted"), filepath.Join(dir, "outside")
	for _, d := range []string{granted, outside} {
		if err := os.Mkdir(d, 0o700); err != nil {
			return Report{}, nil, err
		}
		if err := os.WriteFile(filepath.Join(d, "f"), []byte("x"), 0o600); err != nil {
			return Report{}, nil, err
		}
	}
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		return Report{}, nil, err
	}
	defer ln.Close()
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)

	s := Spec{Mode: BestEffort}
	if spec != nil {
		s = *spec
	}
	s.Read = append([]string{granted}, s.Read...)
	// Sockets allowed (by an allowlist of another port), connections not:
	// Landlock, not seccomp, must refuse the connection.
	s.Network, s.AllowNet = false, []string{"127.0.0.1:1"}
	cmd := exec.Command(exe)
	cmd.Args = []string{verifyName, filepath.Join(granted, "f"), filepath.Join(outside, "f"), port}
	cmd.Env = []string{}
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	g, err := Command(cmd, &s)
	if err != nil {
		return Report{}, nil, err
	}
	rep := g.Report()
	err = cmd.Run()
	g.Release()
	if err != nil {
		return rep, nil, fmt.Errorf("confined process: %w: %s", err, strings.TrimSpace(errOut.String()))
	}
	var f Facts
	if err := json.Unmarshal(out.Bytes(), &f); err != nil {
		return rep, nil, fmt.Errorf("confined process: %w: %q", err, out.String())
	}
	return rep, &f, f.check(rep, &s)
}

// check compares what the process saw with what the report says.
func (f *Facts) check(rep Report, s *Spec) error {
	var errs []error
	want := func(layer string, felt bool, what string) {
		if rep.Active(layer) && !felt {
			errs = append(errs, fmt.Errorf("%s is reported active, but %s", layer, what))
		}
	}
	want(LayerLandlock, f.ReadOutside != "" && f.ReadGranted == "",
		fmt.Sprintf("reading outside the granted paths gave %q and inside %q", f.ReadOutside, f.ReadGranted))
	want(LayerLandlockNet, f.Connect != "", "a TCP connection to a port not allowed succeeded")
	want(LayerSeccomp, f.Seccomp && f.Fork != "" && f.Unix != "" && f.Keyctl != "",
		fmt.Sprintf("seccomp=%v, fork %q, unix socket %q, keyctl %q", f.Seccomp, f.Fork, f.Unix, f.Keyctl))
	want(LayerNoNewPrivs, f.NoNewPrivs, "no_new_privs is not set")
	if rep.Active(LayerUser) {
		uid, gid, _ := ParseRunAs(s.RunAs)
		want(LayerUser, f.UID == uid && f.GID == gid && f.CapEff == fmt.Sprintf("%016x", 1<<unix.CAP_DAC_OVERRIDE),
			fmt.Sprintf("the process ran as %d:%d with capabilities %s", f.UID, f.GID, f.CapEff))
	}
	want(LayerCgroup, f.Cgroup != "", "the process is in no cgroup of its own")
	return errors.Join(errs...)
}

func init() {
	if len(os.Args) == 4 && filepath.Base(os.Args[0]) == verifyName {
		json.NewEncoder(os.Stdout).Encode(observe(os.Args[1], os.Args[2], os.Args[3]))
		os.Exit(0)
	}
}

// observe is the confined side of Verify.
func observe(granted, outside, port string) *Facts {
	f := &Facts{UID: os.Getuid(), GID: os.Getgid()}
	status, _ := os.ReadFile("/proc/self/status")
	for line := range strings.Lines(string(status)) {
		k, v, _ := strings.Cut(line, ":")
		v = strings.TrimSpace(v)
		switch k {
		case "CapEff":
			f.CapEff = v
		case "NoNewPrivs":
			f.NoNewPrivs = v == "1"
		case "Seccomp":
			f.Seccomp = v == "2"
		}
	}
	cg, _ := os.ReadFile("/proc/self/cgroup")
	for line := range strings.Lines(string(cg)) {
		if strings.Contains(line, "/parselbox-") {
			f.Cgroup += strings.TrimSpace(line) + " "
		}
	}
	errText := func(err error) string {
		if err == nil {
			return ""
		}
		return err.Error()
	}
	_, err := os.ReadFile(outside)
	f.ReadOutside = errText(err)
	_, err = os.ReadFile(granted)
	f.ReadGranted = errText(err)
	f.Fork = errText(tryFork())
	fd, err := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	if err == nil {
		syscall.Close(fd)
	}
	f.Unix = errText(err)
	_, err = unix.KeyctlGetKeyringID(unix.KEY_SPEC_SESSION_KEYRING, false)
	f.Keyctl = errText(err)
	c, err := net.DialTimeout("tcp4", "127.0.0.1:"+port, 5*time.Second)
	if err == nil {
		c.Close()
	}
	f.Connect = errText(err)
	return f
}

// tryFork makes a clone that is not a thread: a new process, which exits
// at once.
func tryFork() error {
	pid, _, e := syscall.RawSyscall6(syscall.SYS_CLONE, uintptr(syscall.SIGCHLD), 0, 0, 0, 0, 0)
	if e != 0 {
		return e
	}
	if pid == 0 {
		syscall.RawSyscall(syscall.SYS_EXIT_GROUP, 0, 0, 0)
	}
	var ws syscall.WaitStatus
	syscall.Wait4(int(pid), &ws, 0, nil)
	return nil
}
