package sandbox

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/parselbox/parselbox/host/confine"
)

// Options configure a sandbox. The host resolves them from its Config;
// directories must exist.
type Options struct {
	Runtime *Runtime
	// CacheDir holds the runner, the snapshot and Deno's cache.
	CacheDir string
	// Workspace is the host directory backing /workspace.
	Workspace string
	// FilesDir is the host directory backing /files (optional).
	FilesDir string
	// Mounts map host directories to paths under /mnt.
	Mounts []Bind
	// Network grants the whole network; otherwise AllowNet lists the only
	// "host:port" pairs the sandbox may reach.
	Network  bool
	AllowNet []string
	// MemoryMB caps the WebAssembly memory: beyond it, allocation fails with
	// MemoryError. Zero means 2048.
	MemoryMB int
	// HardMemoryMB caps the whole process's resident memory; the host kills
	// a process above it and restarts the sandbox. Zero means 2×MemoryMB+512.
	HardMemoryMB int
	// Env is os.environ inside Python; nothing else of any environment is
	// visible to the sandbox.
	Env map[string]string
	// Globals are JSON values bound as Python globals at start.
	Globals map[string]any
	// Namespaces is passed to the Python bootstrap to create the namespace
	// objects of the bridges (JSON; see the router).
	Namespaces json.RawMessage
	// Handler serves the sandbox's requests (tool calls).
	Handler Handler
	// Logger receives the sandbox's logs; nil discards them.
	Logger hclog.Logger
	// Notify, if set, is told what a person waiting should hear: that the
	// snapshot is being built (the first start), and when it is done.
	Notify func(msg string)
	// Grace is how long an interrupted execution has to stop before the
	// process is killed and restarted. Zero means 5 s.
	Grace time.Duration
	// StopGrace is how long Close waits at each step of stopping the
	// process (EOF on stdin, then SIGTERM, then SIGKILL). Zero means 1 s.
	StopGrace time.Duration
	// IdleTimeout bounds how long a callback that an execution left
	// scheduled may block the sandbox between executions: it is then
	// interrupted, and if it does not stop within Grace the sandbox is
	// restarted (the next execution is told). Zero means 60 s; it should not
	// exceed the executions' timeout.
	IdleTimeout time.Duration
	// WorkspaceQuota caps, in bytes, what the writable directories
	// (/workspace, /files, rw mounts) hold, counted from what is there at
	// start: a write past it fails in Python with OSError(ENOSPC, "quota
	// exceeded") and writes nothing. Zero means DefaultWorkspaceQuota;
	// negative, no quota.
	WorkspaceQuota int64
	// MaxMessageBytes caps one protocol message, either way (a tool call's
	// arguments, a tool's result, an execution's result). Zero means
	// DefaultMaxMessageBytes.
	MaxMessageBytes int64
	// MaxResultBytes caps one execution's result (its output with stdout,
	// stderr and files): a larger one fails the execution with an error
	// naming max_result_size. Zero means DefaultMaxResultBytes.
	MaxResultBytes int64
	// BootTimeout bounds a start. Zero means 60 s.
	BootTimeout time.Duration
	// OnRestart, if set, is told why the process ended each time it ended
	// unexpectedly and is restarted: "timeout", "interrupt", "memory", "runaway",
	// "fatal", "wedged", "protocol" or "crash".
	OnRestart func(cause string)
	// NoSnapshot boots cold, without the memory snapshot (for measurements).
	NoSnapshot bool
	// Confine, if set, confines each process with the kernel (package
	// confine); the sandbox fills in its paths, network and memory limit.
	Confine *confine.Spec
	// Packages are Python packages the host installed (package packages),
	// visible read-only at PackagesPath; nil: none.
	Packages *Packages
	// NPMDir holds the npm packages the host installed for require() (a
	// node_modules directory inside it), readable by the sandbox's Deno
	// only (not a root: Python does not see it); empty: none.
	NPMDir string
	// CAFile is a PEM file of CA certificates the sandbox's fetch trusts
	// besides the built-in roots (Deno's --cert); empty: none.
	CAFile string
}

// PackagesPath is where the sandbox sees the host's unpacked packages.
const PackagesPath = "/lib/packages"

// Packages are unpacked wheels in one host directory (read-only for the
// sandbox): Paths, relative to Dir, go on sys.path in this order.
type Packages struct {
	Dir   string
	Paths []string
	// Runtime says the host installs what the code imports
	// (allow_runtime_packages): it only changes what a
	// ModuleNotFoundError suggests.
	Runtime bool
	// Preload are modules imported before the memory snapshot is taken:
	// the sandbox boots from a snapshot of its own, keyed by the package
	// set, with them already imported.
	Preload []string
	// Libs, relative to Dir, are directories of shared libraries (of
	// shared library packages) that the dynamic loader searches
	// (LD_LIBRARY_PATH) when an extension module needs one.
	Libs []string
	// Micropip replaces micropip's defaults in the sandbox when the
	// configuration names a package index (nil: PyPI and Pyodide's lock).
	Micropip *Micropip
}

// Micropip is micropip's package index in the sandbox.
type Micropip struct {
	// IndexURLs are its default index_urls: a simple index's URL, or none
	// (a Pyodide index is not one).
	IndexURLs []string `json:"index_urls"`
	// Lock are the packages (name → pyodide-lock.json entry) micropip asks
	// the host for, in place of Pyodide's distribution; nil: Pyodide's.
	Lock json.RawMessage `json:"lock,omitempty"`
}

// Defaults for the zero values of Options.
const (
	DefaultWorkspaceQuota  = 1 << 30
	DefaultMaxMessageBytes = 64 << 20
	DefaultMaxResultBytes  = 64 << 20
)

// Bind is a host directory visible in the sandbox at Target (a mount of
// the configuration, host.Mount, resolved).
type Bind struct {
	// Target is the absolute sandbox path, under /mnt.
	Target string
	// Source is the host directory.
	Source   string
	ReadOnly bool
}

// Supervisor is the process supervisor of one sandbox: it runs a Python
// interpreter in a Deno process, speaks the protocol with it, and restarts
// it when it dies, must be killed, or can no longer run code (healthy):
// Python state is lost, files on disk are not. Its methods are safe for
// concurrent use; executions run one at a time. The host's Sandbox (package
// host) wraps it with the workspace and the tools.
type Supervisor struct {
	opts      Options
	log       hclog.Logger
	runnerDir string
	snapshot  string // "" when booting cold
	// snapshotPackages is the package set imported in snapshot (nil: none).
	snapshotPackages *Packages

	execMu sync.Mutex // one execution at a time

	mu       sync.Mutex
	proc     *process
	ready    ReadyInfo
	starting chan struct{} // closed when the start in progress ends
	startErr error
	closed   bool
	restarts int
	roots    []initRoot // /workspace, /files, mounts: host directories resolved
	running  *process   // the process running an execution, if any
	runID    int64      // that execution's request id
	note     string     // for the next execution: what happened since the last

	// runInterrupted hears of Interrupt() calls for that execution: it
	// must stop within Grace, or the process is killed.
	runInterrupted chan struct{}
}

// Start boots a sandbox and waits until it is ready.
func Start(ctx context.Context, opts Options) (*Supervisor, error) {
	if opts.Runtime == nil {
		return nil, errors.New("sandbox: no runtime")
	}
	if opts.Workspace == "" {
		return nil, errors.New("sandbox: no workspace directory")
	}
	orDefault(&opts.MemoryMB, 2048)
	orDefault(&opts.HardMemoryMB, 2*opts.MemoryMB+512)
	orDefault(&opts.Grace, 5*time.Second)
	orDefault(&opts.IdleTimeout, 60*time.Second)
	if opts.WorkspaceQuota == 0 { // negative: no quota
		opts.WorkspaceQuota = DefaultWorkspaceQuota
	}
	orDefault(&opts.MaxMessageBytes, DefaultMaxMessageBytes)
	orDefault(&opts.MaxResultBytes, DefaultMaxResultBytes)
	orDefault(&opts.StopGrace, time.Second)
	orDefault(&opts.BootTimeout, 60*time.Second)
	for _, m := range opts.Mounts {
		if !strings.HasPrefix(m.Target, "/mnt/") || strings.Contains(m.Target, "..") {
			return nil, fmt.Errorf("sandbox: mount target %q is not under /mnt", m.Target)
		}
	}
	if opts.CacheDir == "" {
		d, err := DefaultCacheDir()
		if err != nil {
			return nil, fmt.Errorf("sandbox: no cache directory: %w", err)
		}
		opts.CacheDir = d
	}
	if err := checkPaths(opts); err != nil {
		return nil, err
	}
	log := opts.Logger
	if log == nil {
		log = hclog.NewNullLogger()
	}
	s := &Supervisor{opts: opts, log: log.Named("sandbox")}
	var err error
	if s.roots, err = resolveRoots(opts); err != nil {
		return nil, err
	}
	if s.runnerDir, err = installRunner(opts.CacheDir, opts.Runtime); err != nil {
		return nil, err
	}
	pruneRunners(s.log, opts.CacheDir, filepath.Base(s.runnerDir), time.Now())
	if !opts.NoSnapshot {
		pk := opts.Packages
		// A package set whose snapshot could not be built is not tried
		// again (until the runtime or runner changes the key).
		failed := snapshotPath(opts.CacheDir, opts.Runtime, pk) + ".failed"
		if pk != nil && len(pk.Preload) > 0 {
			if _, statErr := os.Stat(failed); statErr == nil {
				s.log.Debug("the package set's snapshot could not be built before: using the bare one", "preload", pk.Preload)
				pk = nil
			}
		}
		s.snapshot, err = ensureSnapshot(ctx, s.log, opts.Notify, opts.CacheDir, s.runnerDir, opts.Runtime, pk, nil)
		if err != nil && pk != nil && len(pk.Preload) > 0 && ctx.Err() == nil {
			// The packages could not be imported into a snapshot: the
			// bare one still boots fast, and they import on first use.
			s.log.Error("no memory snapshot with the packages imported: booting from the bare snapshot; the packages are imported when the code imports them",
				"preload", pk.Preload, "error", err)
			_ = os.WriteFile(failed, []byte(err.Error()), 0o600)
			pk = nil
			s.snapshot, err = ensureSnapshot(ctx, s.log, opts.Notify, opts.CacheDir, s.runnerDir, opts.Runtime, nil, nil)
		}
		if err != nil {
			// Loud, not fatal: a cold boot works, only slower.
			s.log.Error("no Pyodide memory snapshot: every start boots cold (~5 s)", "error", err)
		}
		s.snapshotPackages = pk
	}
	p, info, err := s.boot(ctx)
	if errors.Is(err, errSnapshotUnusable) {
		// A snapshot that does not load (truncated, or from an incompatible
		// build) is rebuilt once, loudly. (A start that failed after the
		// snapshot loaded, was cancelled or was too slow says nothing about
		// the snapshot, which others may be using: it is left alone.)
		s.log.Error("booting from the snapshot failed; rebuilding it", "snapshot", s.snapshot, "error", err)
		// Replaced, never removed: other hosts may be starting from it.
		bad, _ := os.Stat(s.snapshot)
		if s.snapshot, err = ensureSnapshot(ctx, s.log, opts.Notify, opts.CacheDir, s.runnerDir, opts.Runtime, s.snapshotPackages, bad); err != nil {
			return nil, fmt.Errorf("rebuilding the snapshot: %w", err)
		}
		p, info, err = s.boot(ctx)
	}
	if err != nil {
		return nil, err
	}
	s.proc, s.ready = p, info
	return s, nil
}

// orDefault sets *v to def when it is zero or negative.
func orDefault[T int | int64 | time.Duration](v *T, def T) {
	if *v <= 0 {
		*v = def
	}
}

// boot starts one process and waits until it is ready.
func (s *Supervisor) boot(ctx context.Context) (*process, ReadyInfo, error) {
	s.mu.Lock() // AddPackages changes opts.Packages
	o := s.opts
	s.mu.Unlock()
	perms := permissions{
		read:     []string{s.runnerDir, interruptPipe},
		network:  o.Network,
		allowNet: o.AllowNet,
		caFile:   o.CAFile,
	}
	// Refreshes the runner's mtime, so that no host prunes it while this
	// one lives, and installs it again if it is gone all the same.
	if _, err := installRunner(o.CacheDir, o.Runtime); err != nil {
		return nil, ReadyInfo{}, err
	}
	snap := s.snapshot
	if snap != "" {
		if _, err := os.Stat(snap); errors.Is(err, fs.ErrNotExist) {
			// Another host sharing the cache directory removed it (a newer
			// runner's clean-up, a cache clean): build it again.
			if snap, err = ensureSnapshot(ctx, s.log, o.Notify, o.CacheDir, s.runnerDir, o.Runtime, s.snapshotPackages, nil); err != nil {
				s.log.Error("the Pyodide memory snapshot is gone and could not be rebuilt: booting cold", "error", err)
				snap = ""
			}
		}
	}
	init := initParams{
		IndexURL:      o.Runtime.Pyodide + "/",
		Snapshot:      snap,
		Roots:         s.roots,
		InterruptPipe: interruptPipe,
		Limits: initLimits{
			MaxMessageBytes:     o.MaxMessageBytes,
			MaxResultBytes:      o.MaxResultBytes,
			WorkspaceQuotaBytes: max(o.WorkspaceQuota, 0),
			GraceMS:             o.Grace.Milliseconds(),
			IdleLimitMS:         o.IdleTimeout.Milliseconds(),
		},
		Env:        o.Env,
		Globals:    o.Globals,
		Namespaces: o.Namespaces,
		Paths:      initPaths{CacheDir: o.CacheDir},
	}
	if pk := o.Packages; pk != nil {
		init.Packages = &initPackages{Paths: slices.Clone(pk.Paths), Libs: slices.Clone(pk.Libs), Runtime: pk.Runtime, Micropip: pk.Micropip}
	}
	for _, f := range pyodideFiles {
		init.Paths.PyodideFiles = append(init.Paths.PyodideFiles, filepath.Join(o.Runtime.Pyodide, f))
	}
	if snap != "" {
		perms.read = append(perms.read, snap)
	}
	// just-bash, imported after boot: public code, kept readable
	// (lockdown.ts revokes the runtime's other files).
	perms.read = append(perms.read, o.Runtime.JustBash...)
	if o.NPMDir != "" {
		dir, err := filepath.EvalSymlinks(o.NPMDir)
		if err != nil {
			return nil, ReadyInfo{}, fmt.Errorf("sandbox: npm packages: %w", err)
		}
		perms.read = append(perms.read, dir)
		init.NPM = &initNPM{Dir: dir}
	}
	for _, r := range s.roots {
		perms.read = append(perms.read, r.Dir)
		if !r.ReadOnly {
			perms.write = append(perms.write, r.Dir)
		}
	}
	var jail *confine.Spec
	if o.Confine != nil { // Deno's reads, its module files and cache, and its writes
		c := *o.Confine
		// The interrupt pipe is an inherited descriptor, not a path of the
		// host's: Landlock does not govern pipes.
		c.Read = slices.Concat(slices.DeleteFunc(slices.Clone(perms.read), func(p string) bool { return p == interruptPipe }),
			[]string{o.Runtime.Pyodide, o.Runtime.Modules})
		if o.CAFile != "" { // read by Deno as it starts
			c.Read = append(c.Read, o.CAFile)
		}
		c.Write, c.Network, c.AllowNet, c.MemoryMB = perms.write, o.Network, o.AllowNet, o.HardMemoryMB
		c.Private = []string{"DENO_DIR"} // its own copy of Deno's caches
		c.Linked = compiledRunner(o.CacheDir, s.runnerDir)
		jail = &c
	}
	p, err := spawn(spawnSpec{
		args:    denoArgs(o.Runtime, s.runnerDir, perms, o.MemoryMB),
		env:     denoEnv(o.CacheDir),
		dir:     s.runnerDir,
		init:    init,
		handler: o.Handler,
		log:     s.log,
		limits:  protocolLimits{maxMessage: o.MaxMessageBytes},
		confine: jail,
	})
	if err != nil {
		return nil, ReadyInfo{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, o.BootTimeout)
	defer cancel()
	info, err := p.waitReady(ctx)
	if err != nil {
		return nil, ReadyInfo{}, err
	}
	lowerHelperPriority(p.pid(), s.log)
	go s.watch(p)
	s.log.Debug("sandbox ready", "pid", p.pid(), "snapshot", info.Snapshot, "boot_ms", info.BootMS)
	return p, info, nil
}

// resolveRoots resolves the host directories the sandbox sees.
func resolveRoots(o Options) ([]initRoot, error) {
	roots := []initRoot{{Target: "/workspace", Dir: o.Workspace}}
	if o.FilesDir != "" {
		roots = append(roots, initRoot{Target: "/files", Dir: o.FilesDir})
	}
	for _, m := range o.Mounts {
		roots = append(roots, initRoot{Target: m.Target, Dir: m.Source, ReadOnly: m.ReadOnly})
	}
	if o.Packages != nil {
		roots = append(roots, initRoot{Target: PackagesPath, Dir: o.Packages.Dir, ReadOnly: true})
	}
	for i := range roots {
		real, err := filepath.EvalSymlinks(roots[i].Dir)
		if err != nil {
			return nil, fmt.Errorf("sandbox: %s: %w", roots[i].Target, err)
		}
		if strings.ContainsAny(real, ",\n") {
			return nil, fmt.Errorf("sandbox: path %q: commas and newlines are not supported", real)
		}
		roots[i].Dir = real
	}
	return roots, nil
}

// watch polices a process's memory and restarts the sandbox when the
// process ends unexpectedly, so that the next execution finds it ready.
func (s *Supervisor) watch(p *process) {
	// The RSS watchdog only where no cgroup limits the process's memory.
	var poll <-chan time.Time
	if !p.guard.LimitsMemory() {
		tick := time.NewTicker(250 * time.Millisecond)
		defer tick.Stop()
		poll = tick.C
	}
	for {
		select {
		case <-p.exited:
			if reason, detail := p.reason(); reason != killClose {
				s.log.Warn("sandbox process ended; restarting", "status", p.exitStatus(), "reason", reason)
				if s.opts.OnRestart != nil {
					s.opts.OnRestart(cmp.Or(reason, "crash"))
				}
				s.mu.Lock()
				if s.running != p && !p.reported {
					// No execution saw it: the next one is told, once.
					s.note = s.idleNote(p, reason, detail)
				}
				if !s.closed && s.proc == p {
					s.startLocked()
				}
				s.mu.Unlock()
			}
			return
		case <-poll:
			if mb, err := rssMB(p.pid()); err == nil && mb > s.opts.HardMemoryMB {
				s.log.Warn("sandbox process above its memory limit; killing it", "rss_mb", mb, "limit_mb", s.opts.HardMemoryMB)
				p.kill(killMemory)
			}
		}
	}
}

// startLocked begins a (re)start in the background unless one is running.
// s.mu must be held.
func (s *Supervisor) startLocked() {
	if s.starting != nil {
		return
	}
	done := make(chan struct{})
	s.starting = done
	go func() {
		p, info, err := s.boot(context.Background())
		if err != nil {
			s.log.Error("restarting the sandbox failed", "error", err)
		}
		s.mu.Lock()
		if err == nil && !s.closed {
			s.proc, s.ready = p, info
			s.restarts++
			p = nil
		}
		s.startErr = err
		s.mu.Unlock()
		if p != nil {
			p.stop(0) // closed while it booted; Close waits for this
		}
		s.mu.Lock()
		s.starting = nil
		close(done)
		s.mu.Unlock()
	}()
}

// current returns the running process, waiting for a (re)start if needed.
func (s *Supervisor) current(ctx context.Context) (*process, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	retried := false
	for {
		if s.closed {
			return nil, ErrClosed
		}
		if s.proc != nil && !s.proc.isExited() {
			return s.proc, nil
		}
		if s.starting == nil {
			if retried && s.startErr != nil {
				return nil, fmt.Errorf("restarting sandbox: %w", s.startErr)
			}
			s.startLocked()
			retried = true
		}
		done := s.starting
		s.mu.Unlock()
		select {
		case <-done:
		case <-ctx.Done():
			s.mu.Lock()
			return nil, ctx.Err()
		}
		s.mu.Lock()
	}
}

// Exec runs code. Timeout bounds it (zero or less: no limit): at the
// deadline Python gets a KeyboardInterrupt and keeps its state; if it does
// not stop within the grace period, the process is killed and restarted and
// the result says that state was lost. The error return is for failures of
// the host (closed, cannot restart), never for the code's own errors, which
// are in Result.Error. Cancelling ctx interrupts the execution the same way.
//
// If the sandbox was restarted since the last execution (it crashed, or a
// callback left running blocked it), the execution runs on the fresh one
// and Result.Note says what was lost. An execution that ended in an error
// after which the interpreter could no longer run code (healthy) keeps its
// error, which says that the sandbox was restarted and state was lost.
func (s *Supervisor) Exec(ctx context.Context, code string, timeout time.Duration) (*Result, error) {
	s.execMu.Lock()
	defer s.execMu.Unlock()
	for attempt := 0; ; attempt++ {
		p, err := s.current(ctx)
		if err != nil {
			return nil, err
		}
		s.mu.Lock()
		note := s.note
		s.note = ""
		s.mu.Unlock()
		r, err := s.execOn(ctx, p, code, timeout)
		if errors.Is(err, errNotStarted) && attempt == 0 {
			// A callback of an earlier execution blocked the sandbox before
			// this one could start, and it was restarted: run it there.
			reason, detail := p.reason()
			s.mu.Lock()
			s.note = joinNotes(note, s.idleNote(p, reason, detail))
			s.mu.Unlock()
			continue
		}
		if err != nil {
			return nil, err
		}
		r.Note = joinNotes(note, r.Note)
		return r, nil
	}
}

type outputKey struct{}

// WithOutput returns a context whose executions (Supervisor.Exec) pass what
// the code prints to fn while it runs, a line or more at a time, stream
// "stdout" or "stderr" (the result still has all of it). fn runs on the
// goroutine that reads the sandbox's messages: it must not block.
func WithOutput(ctx context.Context, fn func(stream, text string)) context.Context {
	return context.WithValue(ctx, outputKey{}, fn)
}

// errNotStarted: the process was restarted before the execution began.
var errNotStarted = errors.New("the execution did not start")

// execOn runs one execution on process p.
func (s *Supervisor) execOn(ctx context.Context, p *process, code string, timeout time.Duration) (*Result, error) {
	params := execParams{Code: code}
	var hardDeadline <-chan time.Time
	if timeout > 0 {
		params.Timeout = timeout.Seconds()
		// The runner's watchdog interrupts at the deadline and reports code
		// that does not stop within the grace period; this is the backstop
		// for a runner that cannot.
		t := time.NewTimer(timeout + 2*s.opts.Grace)
		defer t.Stop()
		hardDeadline = t.C
	}
	s.mu.Lock()
	s.running = p
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.running, s.runID, s.runInterrupted = nil, 0, nil
		s.mu.Unlock()
	}()
	out, _ := ctx.Value(outputKey{}).(func(stream, text string))
	params.Stream = out != nil
	interrupts := make(chan struct{}, 1)
	id, ch, err := p.call("exec", params, func(id int64) {
		if out != nil {
			p.output.Store(&outputSink{id: id, fn: out})
		}
		// Interrupt reaches it from now on, before it is sent too (the
		// runner's watchdog keeps an interrupt for an execution that has
		// not begun, which then begins with KeyboardInterrupt).
		s.mu.Lock()
		s.runID, s.runInterrupted = id, interrupts
		s.mu.Unlock()
	})
	if err != nil {
		return s.lost(p, timeout), nil
	}
	if out != nil {
		defer p.output.Store(nil)
	}
	var (
		graceDeadline <-chan time.Time
		done          = ctx.Done()
		interrupted   bool
	)
	for {
		select {
		case m, ok := <-ch:
			if !ok {
				s.reported(p)
				if reason, _ := p.reason(); reason == killRunaway {
					return nil, errNotStarted // Exec tells the next attempt
				}
				return s.lost(p, timeout), nil
			}
			if m.Error != nil {
				return nil, fmt.Errorf("sandbox exec: %w", m.Error)
			}
			r, err := decodeResult(m.Result)
			if err != nil {
				s.log.Error("the sandbox sent a malformed result; killing it", "error", err)
				p.killWith(killProtocol, "a malformed result: "+err.Error())
				return s.lost(p, timeout), nil
			}
			r.Files = s.checkFiles(r.Files)
			if interrupted && r.Error != nil && r.Error.Type == "KeyboardInterrupt" {
				r.Error.Message = "Execution interrupted: " + context.Cause(ctx).Error()
			}
			if r.Error != nil && slices.Contains(troubleTypes, r.Error.Type) && !s.healthy(p) {
				// Kept: what the code raised; the restart is told here, once.
				p.killWith(killWedged, r.Error.Type)
				s.reported(p)
				msg := strings.TrimSpace(r.Error.Message)
				if msg != "" && !strings.HasSuffix(msg, ".") {
					msg += "."
				}
				r.Error.Message = joinNotes(msg, fmt.Sprintf("After this %s the Python interpreter could no longer run code; "+
					"the sandbox was restarted and all state was lost.", r.Error.Type))
			}
			return r, nil
		case <-hardDeadline:
			p.kill(killTimeout)
			hardDeadline = nil
		case <-graceDeadline:
			// Interrupted (by Interrupt or the context), it did not stop:
			// not a timeout, whatever the runner's deadline.
			p.killWith(killInterrupt, fmtSeconds(s.opts.Grace))
			graceDeadline = nil
		case <-interrupts:
			if graceDeadline == nil {
				graceDeadline = time.After(s.opts.Grace)
			}
			interrupts = nil
		case <-done:
			p.interrupt(id)
			if graceDeadline == nil {
				graceDeadline = time.After(s.opts.Grace)
			}
			done, interrupted = nil, true
		}
	}
}

// troubleTypes are the errors of an execution that may mean that the
// interpreter cannot run code any more (its memory, its stack or the
// runner's Python are broken), not only that the code failed: the
// supervisor then checks that it still can (healthy). "SandboxError" is the
// runner's own: running the code failed outside Python.
var troubleTypes = []string{"MemoryError", "RecursionError", "SystemError", "SandboxError"}

// healthy reports whether process p's interpreter still runs code: the
// runner runs a test expression the way it runs an execution's code,
// n + 1 on a random n of the host's (not code the guest wrote, and no
// answer it could give without running Python), and the answer must be
// right within Grace. An interpreter that fails it is wedged, and restarted.
// It runs only after an execution that ended in one of troubleTypes: code
// that raised MemoryError itself passes it and keeps its state.
func (s *Supervisor) healthy(p *process) bool {
	n := rand.Int64N(1 << 40)
	ctx, cancel := context.WithTimeout(context.Background(), s.opts.Grace)
	defer cancel()
	raw, err := p.request(ctx, "probe", map[string]int64{"n": n})
	var got int64
	if err == nil && json.Unmarshal(raw, &got) == nil && got == n+1 {
		return true
	}
	if err == nil {
		err = fmt.Errorf("the answer %s, not %d", escape(string(raw), 100), n+1)
	}
	s.log.Warn("the Python interpreter can no longer run code; restarting the sandbox", "probe", escape(err.Error(), 300))
	return false
}

// checkFiles keeps the reported files that are regular files inside the
// directories the sandbox was granted; it logs the others.
func (s *Supervisor) checkFiles(files []string) []string {
	out := files[:0]
	for _, f := range files {
		if host, ok := s.hostPath(f); ok {
			if fi, err := os.Lstat(host); err == nil && fi.Mode().IsRegular() {
				out = append(out, f)
				continue
			}
		}
		s.log.Warn("dropping a reported file that is not a regular file in the sandbox's directories", "file", escape(f, 300))
	}
	return out
}

// hostPath maps a sandbox path to its host path, if it is a clean path
// inside a granted directory whose resolved form stays inside it.
func (s *Supervisor) hostPath(p string) (string, bool) {
	if p != path.Clean(p) || !path.IsAbs(p) {
		return "", false
	}
	var best *initRoot
	for i, r := range s.roots {
		if strings.HasPrefix(p, r.Target+"/") && (best == nil || len(r.Target) > len(best.Target)) {
			best = &s.roots[i]
		}
	}
	if best == nil {
		return "", false
	}
	host := filepath.Join(best.Dir, filepath.FromSlash(strings.TrimPrefix(p, best.Target+"/")))
	real, err := filepath.EvalSymlinks(host)
	if err != nil || !strings.HasPrefix(real, best.Dir+string(filepath.Separator)) {
		return "", false
	}
	return host, true
}

// reported waits for process p to end, and records that the execution
// running tells of it: the next execution need not (watch).
func (s *Supervisor) reported(p *process) {
	<-p.exited
	s.mu.Lock()
	p.reported = true
	s.mu.Unlock()
}

// lost is the result of an execution whose process died under it.
func (s *Supervisor) lost(p *process, timeout time.Duration) *Result {
	s.reported(p)
	var e Error
	reason, detail := p.reason()
	switch reason {
	case killTimeout:
		e = Error{Type: ErrorTypeTimeout, Message: fmt.Sprintf(
			"Execution timed out after %s and did not stop when interrupted; "+
				"the sandbox was restarted and all state was lost.", fmtSeconds(timeout))}
	case killInterrupt:
		e = Error{Type: ErrorTypeCrash, Message: fmt.Sprintf(
			"Execution was interrupted and did not stop within %s of the interrupt, so the sandbox was killed; "+
				"it was restarted and all state was lost.", detail)}
	case killMemory:
		e = Error{Type: "MemoryError", Message: fmt.Sprintf(
			"The sandbox exceeded its memory limit (%d MB) and was killed; "+
				"it was restarted and all state was lost.", s.opts.HardMemoryMB)}
	case killFatal:
		e = Error{Type: ErrorTypeCrash, Message: fmt.Sprintf(
			"The Python runtime failed fatally (%s); the sandbox was restarted and all state was lost.", detail)}
	case killProtocol:
		e = Error{Type: ErrorTypeCrash, Message: fmt.Sprintf(
			"The sandbox broke the protocol (%s); it was restarted and all state was lost.", detail)}
	default:
		e = Error{Type: ErrorTypeCrash, Message: fmt.Sprintf(
			"The sandbox process died (%s); it was restarted and all state was lost.", p.exitStatus())}
	}
	return &Result{Output: json.RawMessage("null"), Error: &e, Files: []string{}}
}

// idleNote says what ended process p when no execution was running.
func (s *Supervisor) idleNote(p *process, reason, detail string) string {
	const restarted = "the sandbox was restarted before this execution and all state was lost."
	switch reason {
	case killRunaway:
		return fmt.Sprintf("A callback left running by an earlier execution blocked the sandbox for %ss "+
			"between executions and did not stop when interrupted; "+restarted, detail)
	case killMemory:
		return fmt.Sprintf("The sandbox exceeded its memory limit (%d MB) between executions and was killed; "+restarted, s.opts.HardMemoryMB)
	case killFatal:
		return fmt.Sprintf("The Python runtime failed fatally between executions (%s); "+restarted, detail)
	case killProtocol:
		return fmt.Sprintf("The sandbox broke the protocol between executions (%s); "+restarted, detail)
	default:
		return fmt.Sprintf("The sandbox process died between executions (%s); "+restarted, p.exitStatus())
	}
}

func joinNotes(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + " " + b
}

func fmtSeconds(d time.Duration) string {
	if d <= 0 {
		return "no limit"
	}
	return strconv.FormatFloat(d.Seconds(), 'f', -1, 64) + "s"
}

// Interrupt raises KeyboardInterrupt in the running execution, if any. An
// execution that does not stop within Grace (it swallows the interrupt, or
// JS or WASM code keeps the thread) has its sandbox killed and restarted,
// and its error says so.
func (s *Supervisor) Interrupt() {
	s.mu.Lock()
	p, id, interrupted := s.running, s.runID, s.runInterrupted
	s.mu.Unlock()
	if p != nil && id != 0 {
		p.interrupt(id)
		select {
		case interrupted <- struct{}{}:
		default: // told already
		}
	}
}

// Info describes the running interpreter.
type Info struct {
	Pyodide         string `json:"pyodide"`
	Python          string `json:"python"`
	WasmMemoryBytes int64  `json:"wasm_memory_bytes"`
	UptimeMS        int64  `json:"uptime_ms"`
	PID             int    `json:"pid"`
	RSSMB           int    `json:"rss_mb"`
	// QuotaUsedBytes is what the writable directories hold, as the quota counts it.
	QuotaUsedBytes int64 `json:"quota_used_bytes"`
	// RuntimeReadable reports that the sandbox could still read a file of
	// the runtime (the runner, the snapshot, Pyodide's data): false once
	// booted, unless a mount holds the runtime.
	RuntimeReadable bool `json:"runtime_readable"`
	Restarts        int  `json:"restarts"`
	Snapshot        bool `json:"snapshot"`
	// Warm reports that the setup the sandbox defers past boot (importing
	// just-bash, shortly after ready) is done: see Warm.
	Warm bool `json:"warm"`
}

// Warm has the sandbox do now the setup it otherwise defers until shortly
// after boot (importing just-bash, 0.1-1 s of its main thread), and returns
// once it is done. A sandbox booted ahead of its user (a pool's) calls it
// so that the user's first executions do not wait behind that setup.
func (s *Supervisor) Warm(ctx context.Context) error {
	p, err := s.current(ctx)
	if err != nil {
		return err
	}
	if _, err := p.request(ctx, "warm", struct{}{}); err != nil {
		return fmt.Errorf("warming the sandbox: %w", err)
	}
	return nil
}

// Info asks the sandbox about itself.
func (s *Supervisor) Info(ctx context.Context) (*Info, error) {
	p, err := s.current(ctx)
	if err != nil {
		return nil, err
	}
	raw, err := p.request(ctx, "info", struct{}{})
	if err != nil {
		return nil, fmt.Errorf("sandbox info: %w", err)
	}
	var info Info
	if err := json.Unmarshal(raw, &info); err != nil {
		return nil, fmt.Errorf("sandbox info: %w", err)
	}
	info.PID = p.pid()
	info.RSSMB, _ = rssMB(info.PID)
	s.mu.Lock()
	info.Restarts, info.Snapshot = s.restarts, s.ready.Snapshot
	s.mu.Unlock()
	return &info, nil
}

// MissingImports returns the top-level modules code imports that the
// sandbox cannot find (for allow_runtime_packages); code that does not
// parse has none.
func (s *Supervisor) MissingImports(ctx context.Context, code string) ([]string, error) {
	var raw json.RawMessage
	for attempt := 0; ; attempt++ {
		p, err := s.current(ctx)
		if err != nil {
			return nil, err
		}
		raw, err = p.request(ctx, "packages.missing", map[string]string{"code": code})
		if err == nil {
			break
		}
		// A process that died meanwhile is restarted: ask the new one.
		if p.ctx.Err() == nil || attempt > 0 {
			return nil, fmt.Errorf("scanning imports: %w", err)
		}
		select {
		case <-p.exited:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	var r struct {
		Missing []string `json:"missing"`
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		return nil, fmt.Errorf("scanning imports: %w", err)
	}
	return r.Missing, nil
}

// AddPackages puts more unpacked wheels (directories of Packages.Dir) on
// the sandbox's sys.path, and libs (directories of shared libraries) on
// its dynamic loader's search path, now and after every restart.
func (s *Supervisor) AddPackages(ctx context.Context, paths, libs []string) error {
	s.mu.Lock()
	if s.opts.Packages == nil {
		s.mu.Unlock()
		return errors.New("sandbox: started without packages")
	}
	pk := *s.opts.Packages
	for _, p := range paths {
		if !slices.Contains(pk.Paths, p) {
			pk.Paths = append(slices.Clone(pk.Paths), p)
		}
	}
	for _, l := range libs {
		if !slices.Contains(pk.Libs, l) {
			pk.Libs = append(slices.Clone(pk.Libs), l)
		}
	}
	s.opts.Packages = &pk
	s.mu.Unlock()
	p, err := s.current(ctx)
	if err != nil {
		return err
	}
	if _, err := p.request(ctx, "packages.add", map[string][]string{"paths": paths, "libs": libs}); err != nil && p.ctx.Err() == nil {
		return fmt.Errorf("adding packages: %w", err) // (a restart gets them at boot)
	}
	return nil
}

// Ready returns what the current process reported when it booted.
func (s *Supervisor) Ready() ReadyInfo {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ready
}

// PID returns the process id of the Deno process (0 if none is running).
func (s *Supervisor) PID() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.proc == nil {
		return 0
	}
	return s.proc.pid()
}

// Close stops the sandbox: the process gets EOF on stdin, then SIGTERM, then
// SIGKILL, StopGrace apart.
func (s *Supervisor) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	starting := s.starting
	s.mu.Unlock()
	if starting != nil {
		<-starting // the start notices closed and stops what it started
	}
	s.mu.Lock()
	p := s.proc
	s.mu.Unlock()
	if p != nil {
		p.stop(s.opts.StopGrace)
	}
	return nil
}

// permissions are the Deno permissions of one process.
type permissions struct {
	read, write []string
	network     bool
	allowNet    []string
	caFile      string // CA certificates fetch trusts besides the built-in roots
}

// denoArgs is the command line: the narrowest permissions that work
// (RUNTIME-FACTS.md), no config, lock, remote modules or type checking.
func denoArgs(rt *Runtime, runnerDir string, perms permissions, memoryMB int) []string {
	read := append([]string(nil), perms.read...)
	for _, f := range pyodideFiles {
		read = append(read, filepath.Join(rt.Pyodide, f))
	}
	args := []string{rt.Deno, "run",
		"--no-prompt", "--no-config", "--no-lock", "--no-remote", "--no-check", "--cached-only",
		"--node-modules-dir=manual", // just-bash's imports, from the runtime's node_modules
		"--allow-read=" + joinPaths(read),
	}
	if len(perms.write) > 0 {
		args = append(args, "--allow-write="+joinPaths(perms.write))
	}
	switch {
	case perms.network:
		args = append(args, "--allow-net")
	case len(perms.allowNet) > 0:
		args = append(args, "--allow-net="+strings.Join(perms.allowNet, ","))
	default:
		args = append(args, "--deny-net")
	}
	if perms.caFile != "" {
		args = append(args, "--cert="+perms.caFile)
	}
	args = append(args, "--deny-env", "--deny-run", "--deny-ffi", "--deny-sys")
	// gc() for the runner: it collects boot's garbage before the first
	// execution (the guest does not reach the global object).
	//
	// --no-wasm-deopt: V8's optimizing tier speculates on the targets of
	// wasm indirect calls and deoptimizes when another one turns up.
	// CPython calls through function pointers everywhere (type slots,
	// vectorcall), so each execution found new targets and the sandbox
	// recompiled in the background for 70-250 ms of CPU after every `1+1`,
	// for as long as it lived: 20 sessions on 2 cores queued behind each
	// other's compiler threads (density bench: exec p99 650 ms, p50 9.6 ms).
	// Without deopts, `1+1` costs ~10 ms of CPU after the first execution
	// (p99 16 ms, p50 5.4 ms), and a CPU-bound loop ran as fast or faster
	// (390-440 ms of CPU against 410-1360 ms).
	v8 := "--disallow-code-generation-from-strings,--expose-gc,--no-wasm-deopt"
	if memoryMB > 0 {
		v8 += ",--wasm-max-mem-pages=" + strconv.Itoa(memoryMB*16) // 64 KiB pages
	}
	args = append(args, "--v8-flags="+v8, filepath.Join(runnerDir, entryPoint))
	return args
}

// checkPaths refuses paths that Deno's permission flags cannot express.
func checkPaths(o Options) error {
	paths := []string{o.CacheDir, o.Workspace, o.FilesDir, o.Runtime.Pyodide, o.NPMDir}
	for _, m := range o.Mounts {
		paths = append(paths, m.Source)
	}
	for _, p := range paths {
		if strings.ContainsAny(p, ",\n") {
			return fmt.Errorf("sandbox: path %q: commas and newlines are not supported", p)
		}
		if p != "" && !filepath.IsAbs(p) {
			return fmt.Errorf("sandbox: path %q is not absolute", p)
		}
	}
	return nil
}

// joinPaths joins paths for a Deno permission flag, sorted and unique.
func joinPaths(paths []string) string {
	out := slices.DeleteFunc(slices.Clone(paths), func(p string) bool { return p == "" })
	slices.Sort(out)
	return strings.Join(slices.Compact(out), ",")
}

// denoEnv is the whole environment of a Deno process: the host's own is
// never inherited.
//
// GLIBC_TUNABLES: glibc's malloc gives freed memory back to the system only
// from the top of a heap, past a trim threshold that it raises with each
// large free. V8's background threads (the wasm tier-up compiler among
// them) free tens of MB after boot in their own arenas, which a process
// then keeps for life. A fixed trim threshold returns it; the fixed mmap
// threshold keeps glibc's default ceiling for serving large blocks from
// the heap (fixing one threshold fixes the other at 128 KiB, and then
// every block above it is an mmap and a munmap: `1+1` took 70-140 ms
// instead of 5-12 ms). An idle sandbox's anonymous memory fell from
// 159-170 MB to 119-121 MB (README, Running many hosts). Other C libraries
// ignore the variable.
func denoEnv(cacheDir string) []string {
	return []string{
		"DENO_DIR=" + filepath.Join(cacheDir, "deno"),
		"DENO_NO_PACKAGE_JSON=1",
		"DENO_NO_UPDATE_CHECK=1",
		"NO_COLOR=1",
		"GLIBC_TUNABLES=" + mallocTunables,
	}
}

// mallocTunables are glibc's malloc settings for Deno (denoEnv).
const mallocTunables = "glibc.malloc.mmap_threshold=33554432:glibc.malloc.trim_threshold=4194304"

// DefaultCacheDir is the user cache directory's parselbox folder, used
// when Options.CacheDir is empty.
func DefaultCacheDir() (string, error) {
	d, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(d, "parselbox"), nil
}
