package confine

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/hashicorp/go-hclog"
)

// Mode says how much confinement a sandbox insists on.
type Mode string

const (
	// Required refuses to start a process unless every layer is active.
	Required Mode = "required"
	// BestEffort applies the layers the machine offers and warns about the
	// others. It is the default.
	BestEffort Mode = "best-effort"
	// Off applies none: Deno's permissions are the only wall.
	Off Mode = "off"
)

// ParseMode accepts "required", "best-effort" and "off"; "" is BestEffort.
func ParseMode(s string) (Mode, error) {
	switch m := Mode(s); m {
	case "":
		return BestEffort, nil
	case Required, BestEffort, Off:
		return m, nil
	}
	return "", fmt.Errorf(`must be "required", "best-effort" or "off", got %q`, s)
}

// DefaultPids is the pids limit of a sandbox's cgroup: room for Deno's
// threads and a few workers, not for a bomb.
const DefaultPids = 256

// Spec says what one confined process may do. The zero value of each limit
// means none.
type Spec struct {
	// Mode is "" (BestEffort), Required, BestEffort or Off.
	Mode Mode
	// Read are the files and directories the process may read (and list),
	// not execute. The program itself, its ELF interpreter and the shared
	// libraries of the system are added by Command.
	Read []string
	// Write are the files and directories the process may read and write.
	Write []string
	// Network allows every TCP port; otherwise AllowNet lists the only
	// "host:port" pairs reachable. Landlock knows ports, not hosts: the
	// kernel enforces the ports, Deno the hosts.
	Network  bool
	AllowNet []string
	// RunAs is the user the process runs as when the host runs as root:
	// "UID", "UID:GID" or a user name of /etc/passwd. Empty: DefaultRunAs.
	RunAs string
	// MemoryMB caps the memory of the process's cgroup.
	MemoryMB int
	// CPU caps the CPU time of the process's cgroup, in cores (0.5 is half
	// of one).
	CPU float64
	// Pids caps the tasks (threads and processes) of the process's cgroup;
	// zero is DefaultPids.
	Pids int
	// Private names environment variables of the command whose value is a
	// directory that the process gets its own writable copy of, removed on
	// Release: a cache the processes share (Deno's DENO_DIR, whose SQLite
	// databases a reader also needs to write) is then read and written by
	// each, and none writes what another will read.
	Private []string
	// Linked names directories inside the Private ones (relative to them)
	// that the process only reads, such as Deno's gen (its compiled
	// modules): where Landlock makes them read-only they are linked to
	// rather than copied, a boot's copy being a file creation per file.
	Linked []string
	// Shim is the program that applies the layers, then executes the
	// command: a binary that links this package. Empty: this program,
	// through /proc/self/exe.
	Shim string
	// Without names layers (LayerLandlock, LayerSeccomp, LayerUser,
	// LayerCgroup, ...) to leave out even where the machine offers them:
	// for measuring what each one costs (`go run ./bench -only confine
	// -confine-without ...`), not for production. Leaving out Landlock
	// leaves out the user too (which needs it) and the network rules (which
	// are Landlock's); no_new_privs cannot be left out. A layer left out is
	// reported unavailable, so Mode Required refuses to start.
	Without []string
	// Logger receives warnings about layers that could not be applied in
	// BestEffort mode; nil discards them.
	Logger hclog.Logger
}

func (s *Spec) mode() Mode {
	if s == nil {
		return Off
	}
	return cmp.Or(s.Mode, BestEffort)
}

// ports returns the TCP ports of AllowNet, sorted and unique.
func (s *Spec) ports() ([]uint16, error) {
	var out []uint16
	for _, hp := range s.AllowNet {
		_, p, err := net.SplitHostPort(hp)
		if err != nil {
			return nil, fmt.Errorf("allow_net %q: %w", hp, err)
		}
		n, err := strconv.ParseUint(p, 10, 16)
		if err != nil || n == 0 {
			return nil, fmt.Errorf("allow_net %q: bad port", hp)
		}
		out = append(out, uint16(n))
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// Layer names, in the order of a Report.
const (
	LayerLandlock    = "landlock"     // files
	LayerLandlockNet = "landlock-net" // TCP ports
	LayerSeccomp     = "seccomp"
	LayerNoNewPrivs  = "no_new_privs"
	LayerUser        = "user"   // an unprivileged uid when the host is root
	LayerCgroup      = "cgroup" // memory, pids, CPU
)

// States of a layer.
const (
	Active      = "active"
	Unavailable = "unavailable" // the machine cannot apply it; Reason says why
	NotNeeded   = "not needed"  // nothing for it to do here; Reason says why
)

// Layer is one kernel layer and whether it applies.
type Layer struct {
	Name  string `json:"name"`
	State string `json:"state"`
	// Detail says what the layer does here when active.
	Detail string `json:"detail,omitempty"`
	// Reason says why it is not active.
	Reason string `json:"reason,omitempty"`
}

// Report says which layers apply to a sandbox, and why the others do not.
type Report struct {
	Mode   Mode    `json:"mode"`
	Layers []Layer `json:"layers"`
}

// Active reports whether the named layer is active.
func (r Report) Active(name string) bool {
	i := r.index(name)
	return i >= 0 && r.Layers[i].State == Active
}

// index is the position of the named layer in Layers, or -1.
func (r Report) index(name string) int {
	return slices.IndexFunc(r.Layers, func(l Layer) bool { return l.Name == name })
}

// Unavailable returns the layers the machine could not apply.
func (r Report) Unavailable() []Layer {
	var out []Layer
	for _, l := range r.Layers {
		if l.State == Unavailable {
			out = append(out, l)
		}
	}
	return out
}

// Summary is one line for a log: "landlock (ABI 7), seccomp, ...; not:
// user (the host does not run as root)".
func (r Report) Summary() string {
	if r.Mode == Off {
		return "off"
	}
	var on, off []string
	for _, l := range r.Layers {
		switch l.State {
		case Active:
			s := l.Name
			if l.Detail != "" {
				s += " (" + l.Detail + ")"
			}
			on = append(on, s)
		case Unavailable:
			off = append(off, l.Name+" ("+l.Reason+")")
		}
	}
	s := cmp.Or(strings.Join(on, ", "), "none")
	if len(off) > 0 {
		s += "; unavailable: " + strings.Join(off, ", ")
	}
	return s
}

func (r *Report) set(name, state, detail, reason string) {
	l := Layer{Name: name, State: state, Detail: detail, Reason: reason}
	if i := r.index(name); i >= 0 {
		r.Layers[i] = l
	} else {
		r.Layers = append(r.Layers, l)
	}
}

// Check reports which layers a process started with spec would get on this
// machine. With Mode Required, a missing layer is an error that names it.
func Check(spec *Spec) (Report, error) {
	_, rep, err := newPlan(spec, probe(), "")
	return rep, err
}

// Guard is the confinement of one started process. Its methods are safe
// for concurrent use, and on a nil Guard (no confinement).
type Guard struct {
	report       Report
	logger       hclog.Logger
	limitsMemory bool

	mu      sync.Mutex
	cgroup  *cgroup
	owner   *giveBack
	private []*privateCopy
	oomSeen bool
}

// Report says which layers apply to the process.
func (g *Guard) Report() Report {
	if g == nil {
		return Report{Mode: Off}
	}
	return g.report
}

// LimitsMemory reports whether the kernel caps the process's memory (a
// cgroup), so that no watchdog is needed.
func (g *Guard) LimitsMemory() bool { return g != nil && g.limitsMemory }

// OOMKilled reports whether the kernel killed the process for exceeding
// its memory limit. Call it once the process has exited.
func (g *Guard) OOMKilled() bool {
	if g == nil {
		return false
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.oomKilledLocked()
}

func (g *Guard) oomKilledLocked() bool {
	if !g.oomSeen && g.cgroup != nil {
		g.oomSeen = g.cgroup.oomKills() > 0
	}
	return g.oomSeen
}

// Release undoes what Command set up once the process has exited: it
// removes the cgroup (saying in the log if a limit of it was hit) and the
// private copies, and gives the files the process created back to the
// owner of the directory they are in. Calling it again does nothing.
func (g *Guard) Release() error {
	if g == nil {
		return nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	var errs []error // nil for what went well
	if g.cgroup != nil {
		if g.oomKilledLocked() {
			g.logger.Warn("memory limit exceeded: the kernel killed the sandbox process", "limit_mb", g.cgroup.memoryMB)
		}
		if n := g.cgroup.pidsRefused(); n > 0 {
			g.logger.Warn("pids limit reached: the kernel refused new threads or processes", "refused", n, "limit", g.cgroup.pids)
		}
		errs = append(errs, g.cgroup.remove())
		g.cgroup = nil
	}
	if g.owner != nil {
		errs = append(errs, g.owner.restore())
		g.owner = nil
	}
	for _, pc := range g.private {
		errs = append(errs, pc.remove())
	}
	g.private = nil
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("releasing confinement: %w", err)
	}
	return nil
}

// Command rewrites cmd, before it is started, to start through the shim,
// which applies the layers of spec to itself and then executes cmd's
// program, keeping its arguments, environment, directory and process
// attributes. It returns the Guard to Release once the process has exited.
// With Mode Off (or a nil spec) it changes nothing and returns a nil Guard.
func Command(cmd *exec.Cmd, spec *Spec) (*Guard, error) {
	if hook := testHook.Load(); hook != nil {
		spec = (*hook)(cmd, spec)
	}
	if spec.mode() == Off {
		return nil, nil
	}
	if cmd.Process != nil {
		return nil, fmt.Errorf("confine: command already started")
	}
	prog, err := exec.LookPath(cmd.Path)
	if err != nil {
		return nil, fmt.Errorf("confine: %w", err)
	}
	if prog, err = filepath.Abs(prog); err != nil {
		return nil, fmt.Errorf("confine: %w", err)
	}
	sys := probe()
	p, rep, err := newPlan(spec, sys, prog)
	if err != nil {
		return nil, err
	}
	log := cmp.Or(spec.Logger, hclog.NewNullLogger())
	g := &Guard{report: rep, logger: log}
	if p.cgroupLimits != nil {
		cg, err := sys.cgroups.create(*p.cgroupLimits)
		if err != nil {
			if spec.mode() == Required {
				return nil, fmt.Errorf("confine: %s: %w", LayerCgroup, err)
			}
			log.Warn("no cgroup for the sandbox; the RSS watchdog caps its memory", "error", err)
			g.report.set(LayerCgroup, Unavailable, "", err.Error())
		} else {
			g.cgroup, g.limitsMemory = cg, cg.memoryMB > 0
			p.Cgroup = cg.joinFiles()
		}
	}
	if p.UID >= 0 {
		g.owner = newGiveBack(p.UID, spec.Write)
	}
	for _, name := range spec.Private {
		for i, kv := range cmd.Env {
			k, dir, _ := strings.Cut(kv, "=")
			if k != name || dir == "" {
				continue
			}
			var linked []string // read-only only where Landlock applies
			if p.Landlock != nil {
				linked = spec.Linked
			}
			pc, err := newPrivateCopy(dir, linked, p.UID, p.GID)
			if err != nil {
				g.Release()
				return nil, fmt.Errorf("confine: %s: %w", name, err)
			}
			g.private = append(g.private, pc)
			cmd.Env = slices.Clone(cmd.Env) // the caller's slice stays as it was
			cmd.Env[i] = name + "=" + pc.dir
			if p.Landlock != nil {
				p.Landlock.grant(pc.dir, rightsWriteDir)
				for _, l := range pc.links {
					p.Landlock.grant(l, rightsReadDir)
				}
			}
			break
		}
	}
	arg, err := json.Marshal(p)
	if err != nil {
		g.Release()
		return nil, fmt.Errorf("confine: %w", err)
	}
	args := append([]string{ShimName, string(arg), prog}, cmd.Args...)
	if len(cmd.Args) == 0 {
		args = append(args, cmd.Path)
	}
	cmd.Path, cmd.Args, cmd.Err = cmp.Or(spec.Shim, "/proc/self/exe"), args, nil
	return g, nil
}

// testHook, set only by this package's tests, changes a command and its
// spec before it is confined: the tests widen Deno's own permissions with
// it. Nothing else can reach it (not the configuration, not the CLI).
var testHook atomic.Pointer[func(*exec.Cmd, *Spec) *Spec]

// hostPID is the host's pid, which the shim checks is still its parent.
var hostPID = os.Getpid()

// hostGone reports whether pid, read from the name of something a host left
// (a cgroup, a private copy), is a host that has ended: a number, not this
// host's, and no such process. A pid in use, by its host or by a process
// that reused it, is not gone.
func hostGone(pid string) bool {
	n, err := strconv.Atoi(pid)
	return err == nil && n > 0 && n != hostPID && syscall.Kill(n, 0) == syscall.ESRCH
}
