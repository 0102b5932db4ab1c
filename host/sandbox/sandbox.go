package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
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
	Mounts []Mount
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
	// Grace is how long an interrupted execution has to stop before the
	// process is killed and restarted. Zero means 5 s.
	Grace time.Duration
	// BootTimeout bounds a start. Zero means 60 s.
	BootTimeout time.Duration
	// NoSnapshot boots cold, without the memory snapshot (for measurements).
	NoSnapshot bool
	// Confine, if set, confines each process with the kernel (package
	// confine); the sandbox fills in its paths, network and memory limit.
	Confine *confine.Spec
}

// Mount is a host directory visible in the sandbox.
type Mount struct {
	// Target is the absolute sandbox path, under /mnt.
	Target string
	// Source is the host directory.
	Source   string
	ReadOnly bool
}

// Sandbox is a supervised Python interpreter in a Deno process. Its methods
// are safe for concurrent use; executions run one at a time. If the process
// dies or must be killed, the sandbox restarts it: Python state is lost,
// files on disk are not.
type Sandbox struct {
	opts      Options
	log       hclog.Logger
	runnerDir string
	snapshot  string // "" when booting cold

	execMu sync.Mutex // one execution at a time

	mu       sync.Mutex
	proc     *process
	ready    ReadyInfo
	starting chan struct{} // closed when the start in progress ends
	startErr error
	closed   bool
	restarts int
}

// Start boots a sandbox and waits until it is ready.
func Start(ctx context.Context, opts Options) (*Sandbox, error) {
	if opts.Runtime == nil {
		return nil, errors.New("sandbox: no runtime")
	}
	if opts.Workspace == "" {
		return nil, errors.New("sandbox: no workspace directory")
	}
	if opts.MemoryMB <= 0 {
		opts.MemoryMB = 2048
	}
	if opts.HardMemoryMB <= 0 {
		opts.HardMemoryMB = 2*opts.MemoryMB + 512
	}
	if opts.Grace <= 0 {
		opts.Grace = 5 * time.Second
	}
	if opts.BootTimeout <= 0 {
		opts.BootTimeout = 60 * time.Second
	}
	for _, m := range opts.Mounts {
		if !strings.HasPrefix(m.Target, "/mnt/") || strings.Contains(m.Target, "..") {
			return nil, fmt.Errorf("sandbox: mount target %q is not under /mnt", m.Target)
		}
	}
	if opts.CacheDir == "" {
		d, err := defaultCacheDir()
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
	s := &Sandbox{opts: opts, log: log.Named("sandbox")}
	var err error
	if s.runnerDir, err = installRunner(opts.CacheDir, opts.Runtime); err != nil {
		return nil, err
	}
	if !opts.NoSnapshot {
		s.snapshot, err = ensureSnapshot(ctx, s.log, opts.CacheDir, s.runnerDir, opts.Runtime)
		if err != nil {
			// Loud, not fatal: a cold boot works, only slower.
			s.log.Error("no Pyodide memory snapshot: every start boots cold (~5 s)", "error", err)
		}
	}
	p, info, err := s.boot(ctx)
	if errors.Is(err, errExitedBeforeReady) && s.snapshot != "" {
		// A snapshot that does not boot (truncated, or from an incompatible
		// build) is rebuilt once, loudly. (A start that was cancelled or too
		// slow says nothing about the snapshot, which others may be using.)
		s.log.Error("booting from the snapshot failed; rebuilding it", "snapshot", s.snapshot, "error", err)
		_ = os.Remove(s.snapshot)
		if s.snapshot, err = ensureSnapshot(ctx, s.log, opts.CacheDir, s.runnerDir, opts.Runtime); err != nil {
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

// boot starts one process and waits until it is ready.
func (s *Sandbox) boot(ctx context.Context) (*process, ReadyInfo, error) {
	o := s.opts
	perms := permissions{
		read:     []string{s.runnerDir, o.Workspace},
		write:    []string{o.Workspace},
		network:  o.Network,
		allowNet: o.AllowNet,
	}
	init := initParams{
		IndexURL:   o.Runtime.Pyodide + "/",
		Bootstrap:  filepath.Join(s.runnerDir, "bootstrap.py"),
		Snapshot:   s.snapshot,
		Workspace:  o.Workspace,
		Env:        o.Env,
		Globals:    o.Globals,
		Namespaces: o.Namespaces,
	}
	if s.snapshot != "" {
		perms.read = append(perms.read, s.snapshot)
	}
	if o.FilesDir != "" {
		perms.read = append(perms.read, o.FilesDir)
		perms.write = append(perms.write, o.FilesDir)
		init.Files = o.FilesDir
	}
	for _, m := range o.Mounts {
		perms.read = append(perms.read, m.Source)
		if !m.ReadOnly {
			perms.write = append(perms.write, m.Source)
		}
		init.Mounts = append(init.Mounts, initMount{Target: m.Target, Source: m.Source, ReadOnly: m.ReadOnly})
	}
	var jail *confine.Spec
	if o.Confine != nil { // Deno's reads, its module files and cache, and its writes
		c := *o.Confine
		c.Read = slices.Concat(perms.read, []string{o.Runtime.Pyodide})
		c.Write, c.Network, c.AllowNet, c.MemoryMB = perms.write, o.Network, o.AllowNet, o.HardMemoryMB
		c.Private = []string{"DENO_DIR"} // its own copy of Deno's caches
		jail = &c
	}
	p, err := spawn(spawnSpec{
		args:    denoArgs(o.Runtime, s.runnerDir, perms, o.MemoryMB),
		env:     denoEnv(o.CacheDir),
		dir:     s.runnerDir,
		init:    init,
		handler: o.Handler,
		log:     s.log,
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
	go s.watch(p)
	s.log.Debug("sandbox ready", "pid", p.pid(), "snapshot", info.Snapshot, "boot_ms", info.BootMS)
	return p, info, nil
}

// watch polices a process's memory and restarts the sandbox when the
// process ends unexpectedly, so that the next execution finds it ready.
func (s *Sandbox) watch(p *process) {
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-p.exited:
			if reason := p.reason(); reason != killClose {
				s.log.Warn("sandbox process ended; restarting", "status", p.exitStatus(), "reason", reason)
				s.mu.Lock()
				if !s.closed && s.proc == p {
					s.startLocked()
				}
				s.mu.Unlock()
			}
			return
		case <-tick.C:
			if mb, err := rssMB(p.pid()); err == nil && mb > s.opts.HardMemoryMB && !p.guard.LimitsMemory() {
				s.log.Warn("sandbox process above its memory limit; killing it", "rss_mb", mb, "limit_mb", s.opts.HardMemoryMB)
				p.kill(killMemory)
			}
		}
	}
}

// startLocked begins a (re)start in the background unless one is running.
// s.mu must be held.
func (s *Sandbox) startLocked() {
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
func (s *Sandbox) current(ctx context.Context) (*process, error) {
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
func (s *Sandbox) Exec(ctx context.Context, code string, timeout time.Duration) (*Result, error) {
	s.execMu.Lock()
	defer s.execMu.Unlock()
	p, err := s.current(ctx)
	if err != nil {
		return nil, err
	}
	params := execParams{Code: code}
	var hardDeadline <-chan time.Time
	if timeout > 0 {
		params.Timeout = timeout.Seconds()
		t := time.NewTimer(timeout + s.opts.Grace)
		defer t.Stop()
		hardDeadline = t.C
	}
	ch, err := p.call("exec", params)
	if err != nil {
		return s.lost(p, timeout), nil
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
				return s.lost(p, timeout), nil
			}
			if m.Error != nil {
				return nil, fmt.Errorf("sandbox exec: %w", m.Error)
			}
			var r Result
			if err := json.Unmarshal(m.Result, &r); err != nil {
				return nil, fmt.Errorf("sandbox exec: decoding result: %w", err)
			}
			if r.Files == nil {
				r.Files = []string{}
			}
			if interrupted && r.Error != nil && r.Error.Type == "KeyboardInterrupt" {
				r.Error.Message = "Execution interrupted: " + context.Cause(ctx).Error()
			}
			return &r, nil
		case <-hardDeadline:
			p.kill(killTimeout)
			hardDeadline = nil
		case <-graceDeadline:
			p.kill(killTimeout)
			graceDeadline = nil
		case <-done:
			_ = p.send(&message{Method: "interrupt"})
			graceDeadline = time.After(s.opts.Grace)
			done, interrupted = nil, true
		}
	}
}

// lost is the result of an execution whose process died under it.
func (s *Sandbox) lost(p *process, timeout time.Duration) *Result {
	<-p.exited
	var e Error
	switch p.reason() {
	case killTimeout:
		e = Error{Type: ErrorTypeTimeout, Message: fmt.Sprintf(
			"Execution timed out after %s and did not stop when interrupted; "+
				"the sandbox was restarted and all state was lost.", fmtSeconds(timeout))}
	case killMemory:
		e = Error{Type: "MemoryError", Message: fmt.Sprintf(
			"The sandbox exceeded its memory limit (%d MB) and was killed; "+
				"it was restarted and all state was lost.", s.opts.HardMemoryMB)}
	default:
		e = Error{Type: ErrorTypeCrash, Message: fmt.Sprintf(
			"The sandbox process died (%s); it was restarted and all state was lost.", p.exitStatus())}
	}
	return &Result{Output: json.RawMessage("null"), Error: &e, Files: []string{}}
}

func fmtSeconds(d time.Duration) string {
	if d <= 0 {
		return "no limit"
	}
	return strconv.FormatFloat(d.Seconds(), 'f', -1, 64) + "s"
}

// Interrupt raises KeyboardInterrupt in the running execution, if any.
func (s *Sandbox) Interrupt() {
	s.mu.Lock()
	p := s.proc
	s.mu.Unlock()
	if p != nil {
		_ = p.send(&message{Method: "interrupt"})
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
	Restarts        int    `json:"restarts"`
	Snapshot        bool   `json:"snapshot"`
}

// Info asks the sandbox about itself.
func (s *Sandbox) Info(ctx context.Context) (*Info, error) {
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

// Ready returns what the current process reported when it booted.
func (s *Sandbox) Ready() ReadyInfo {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ready
}

// PID returns the process id of the Deno process (0 if none is running).
func (s *Sandbox) PID() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.proc == nil {
		return 0
	}
	return s.proc.pid()
}

// Close stops the sandbox: the process gets EOF on stdin and is killed if it
// has not exited within a second.
func (s *Sandbox) Close() error {
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
		p.stop(time.Second)
	}
	return nil
}

// permissions are the Deno permissions of one process.
type permissions struct {
	read, write []string
	network     bool
	allowNet    []string
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
	args = append(args, "--deny-env", "--deny-run", "--deny-ffi", "--deny-sys")
	v8 := "--disallow-code-generation-from-strings"
	if memoryMB > 0 {
		v8 += ",--wasm-max-mem-pages=" + strconv.Itoa(memoryMB*16) // 64 KiB pages
	}
	args = append(args, "--v8-flags="+v8, filepath.Join(runnerDir, "runner.ts"))
	return args
}

// checkPaths refuses paths that Deno's permission flags cannot express.
func checkPaths(o Options) error {
	paths := []string{o.CacheDir, o.Workspace, o.FilesDir, o.Runtime.Pyodide}
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
	seen := map[string]bool{}
	var out []string
	for _, p := range paths {
		if p != "" && !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	sort.Strings(out)
	return strings.Join(out, ",")
}

// denoEnv is the whole environment of a Deno process: the host's own is
// never inherited.
func denoEnv(cacheDir string) []string {
	return []string{
		"DENO_DIR=" + filepath.Join(cacheDir, "deno"),
		"DENO_NO_PACKAGE_JSON=1",
		"DENO_NO_UPDATE_CHECK=1",
		"NO_COLOR=1",
	}
}

// defaultCacheDir is the user cache directory's parselbox folder.
func defaultCacheDir() (string, error) {
	d, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(d, "parselbox"), nil
}
