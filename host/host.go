package host

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/parselbox/parselbox/host/audit"
	"github.com/parselbox/parselbox/host/confine"
	"github.com/parselbox/parselbox/host/packages"
	"github.com/parselbox/parselbox/host/router"
	"github.com/parselbox/parselbox/host/sandbox"
	"github.com/parselbox/parselbox/host/serve"
	"github.com/parselbox/parselbox/sdk"
)

// MaxMemoryMB is the most memory 32-bit WebAssembly can address.
const MaxMemoryMB = 4096

// Sandbox is a Python sandbox with its workspace and tools: the host's
// main type. Create one with New, run code with Execute, and Close it.
type Sandbox struct {
	cfg     Config
	log     hclog.Logger
	sb      *sandbox.Supervisor
	router  *router.Router
	files   fsMap
	tempDir string // removed on Close; holds the workspace unless OutputDir is set
	timeout time.Duration
	closers []func() error // bridges to stop on Close, in reverse order
	jail    confine.Report // the kernel layers around the sandbox process

	serve      *serve.Server // the workspace as a web app; nil unless Config.Serve
	runtimeDir string

	pkgs      *packages.Store // nil without packages
	pkgSource packages.Source
	npm       npmInstaller // where require() finds npm packages
	dryRun    bool         // Check: look, write nothing
}

// New starts a sandbox as cfg says and waits until it is ready. A
// configuration that Config.Validate refuses, or that names what does not
// exist, is a *ConfigError.
func New(ctx context.Context, cfg Config) (_ *Sandbox, err error) {
	if err := cfg.Validate(); err != nil {
		return nil, &ConfigError{err}
	}
	s := &Sandbox{cfg: cfg, log: cmp.Or(cfg.Logger, hclog.NewNullLogger())}
	defer func() {
		if err != nil {
			s.cleanup() // undo what was set up before the failure
		}
	}()
	opts, err := s.sandboxOptions()
	if err != nil {
		return nil, err
	}
	if err := s.installPackages(ctx, &opts); err != nil {
		return nil, err
	}
	var recs recorders
	if cfg.AuditLog != "" || cfg.OTLPEndpoint != "" || cfg.TracerProvider != nil {
		trail, err := audit.Open(ctx, audit.Options{Path: cfg.AuditLog, OTLPEndpoint: cfg.OTLPEndpoint, TracerProvider: cfg.TracerProvider})
		if err != nil {
			return nil, &ConfigError{err}
		}
		s.closers = append(s.closers, trail.Close)
		recs = append(recs, trail)
	}
	if cfg.Observer != nil {
		recs = append(recs, observed{cfg.Observer})
		opts.OnRestart = cfg.Observer.Restarted
	}
	var recorder router.Recorder
	switch len(recs) {
	case 0:
	case 1:
		recorder = recs[0]
	default:
		recorder = recs
	}
	s.router = router.New(router.Options{
		Recorder: recorder,
		Logger:   s.log,
		TaskDir:  filepath.Join(opts.Workspace, ".parselbox", "tasks"),
		Hooks:    hookList(cfg.Hooks),
		Guide:    s.Prompt,
		Info:     s.info,
	})
	if err := s.addBridges(ctx); err != nil {
		return nil, err
	}
	if opts.Namespaces, err = json.Marshal(s.router.Namespaces()); err != nil {
		return nil, err
	}
	opts.Handler = sandboxHandler{s: s, next: s.router}
	if s.sb, err = sandbox.Start(ctx, opts); err != nil {
		return nil, fmt.Errorf("starting sandbox: %w", err)
	}
	if err := s.startServe(opts.Workspace, opts.FilesDir); err != nil {
		return nil, err
	}
	return s, nil
}

// sandboxOptions validates the configuration and prepares the directories.
func (s *Sandbox) sandboxOptions() (sandbox.Options, error) {
	cfg := &s.cfg
	rt, err := sandbox.FindRuntime(cfg.RuntimeDir)
	if err != nil {
		return sandbox.Options{}, &ConfigError{err}
	}
	s.runtimeDir = rt.Dir
	opts := sandbox.Options{
		Runtime:  rt,
		CacheDir: cfg.CacheDir,
		Network:  cfg.Network,
		MemoryMB: s.memoryMB(),
		Env:      cfg.Env,
		Globals:  cfg.Globals,
		Logger:   s.log,
		Notify:   cfg.Notify,
		Grace:    cfg.InterruptGrace,
	}
	if opts.CacheDir != "" {
		if opts.CacheDir, err = filepath.Abs(opts.CacheDir); err != nil {
			return opts, err
		}
	}
	s.timeout = max(cmp.Or(cfg.Timeout, DefaultTimeout), 0) // negative: no limit
	// Between executions, a callback may block the sandbox as long as an
	// execution may run.
	opts.IdleTimeout = s.timeout
	for _, l := range []struct {
		mb, def int
		bytes   *int64
	}{
		{cfg.WorkspaceQuota, DefaultWorkspaceQuotaMB, &opts.WorkspaceQuota},
		{cfg.MaxMessageSize, DefaultMaxMessageSizeMB, &opts.MaxMessageBytes},
		{cfg.MaxResultSize, DefaultMaxResultSizeMB, &opts.MaxResultBytes},
	} {
		*l.bytes = int64(cmp.Or(l.mb, l.def)) << 20 // Validate refused negative values
	}
	opts.AllowNet = cfg.AllowNet
	if cfg.CAFile != "" {
		if opts.CAFile, err = caFile(cfg.CAFile); err != nil {
			return opts, err
		}
	}
	if err := s.confine(&opts); err != nil {
		return opts, err
	}

	if s.tempDir, err = os.MkdirTemp("", "parselbox-"); err != nil {
		return opts, fmt.Errorf("creating temporary directory: %w", err)
	}
	if cfg.OutputDir != "" {
		if opts.Workspace, err = filepath.Abs(cfg.OutputDir); err != nil {
			return opts, err
		}
		if err := outputDir(opts.Workspace, true); err != nil {
			return opts, &ConfigError{&KeyError{Key: "output_dir", Message: err.Error()}}
		}
	} else {
		opts.Workspace = filepath.Join(s.tempDir, "workspace")
		if err := os.Mkdir(opts.Workspace, 0o700); err != nil {
			return opts, err
		}
	}
	opts.FilesDir = filepath.Join(s.tempDir, "files")
	if err := os.Mkdir(opts.FilesDir, 0o700); err != nil {
		return opts, err
	}
	for i, f := range cfg.Files {
		if err := copyFile(f, filepath.Join(opts.FilesDir, filepath.Base(f))); err != nil {
			return opts, &ConfigError{&KeyError{Key: index("files", i), Message: "input file: " + err.Error()}}
		}
	}
	roots := []fsRoot{{prefix: "/workspace", dir: opts.Workspace}, {prefix: "/files", dir: opts.FilesDir}}
	for _, t := range slices.Sorted(maps.Keys(cfg.Mounts)) {
		m, target := cfg.Mounts[t], path.Join("/mnt", t) // Validate checked t
		src, err := filepath.Abs(m.Source)
		if err != nil {
			return opts, err
		}
		if err := mountSource(t, m); err != nil {
			return opts, &ConfigError{err}
		}
		opts.Mounts = append(opts.Mounts, sandbox.Bind{Target: target, Source: src, ReadOnly: m.ReadOnly()})
		roots = append(roots, fsRoot{prefix: target, dir: src, readOnly: m.ReadOnly()})
	}
	if s.files, err = newFSMap(roots...); err != nil {
		return opts, err
	}
	// Deno's path permissions follow symlinks: a link in a granted directory
	// that leads out of every granted directory would open that target to
	// the sandbox. Refuse to start rather than leak, unless Landlock checks
	// paths after the links are resolved.
	for _, r := range s.files {
		if s.jail.Active(confine.LayerLandlock) {
			break
		}
		if err := checkSymlinks(r.prefix, r.dir, s.files); err != nil {
			return opts, err
		}
	}
	return opts, nil
}

// maxScan bounds the symlink check of one directory tree.
const maxScan = 200_000

// checkSymlinks walks dir and fails on a symlink that resolves outside every
// root of the map.
func checkSymlinks(prefix, dir string, roots fsMap) error {
	seen := 0
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // unreadable entries are unreadable to the sandbox too
		}
		if seen++; seen > maxScan {
			return filepath.SkipAll
		}
		if d.Type()&fs.ModeSymlink == 0 {
			return nil
		}
		target, err := filepath.EvalSymlinks(p)
		if err != nil {
			return nil // dangling: nothing to read
		}
		if slices.ContainsFunc(roots, func(r fsRoot) bool { return r.holds(target) }) {
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		return configErrorf("%s/%s is a symlink to %s, outside the directories the sandbox may read; "+
			"Deno's permissions follow symlinks, so it would expose that path: remove the link or mount its target",
			prefix, filepath.ToSlash(rel), target)
	})
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	if fi, err := in.Stat(); err != nil {
		return err
	} else if fi.IsDir() {
		return fmt.Errorf("%s is a directory", src)
	}
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// Execute runs code in the sandbox with the configured timeout. The error is
// for failures of the host; the code's own errors are in Result.Error.
func (s *Sandbox) Execute(ctx context.Context, code string) (*Result, error) {
	for _, h := range s.cfg.Hooks {
		if err := h.PreExecute(ctx, code); err != nil {
			return &Result{Output: []byte("null"), Files: []string{},
				Error: &Error{Type: sdk.CodePermission.Python(), Message: "Blocked by hook: " + err.Error()}}, nil
		}
	}
	if s.pkgs != nil && s.cfg.AllowRuntimePackages {
		if err := s.runtimePackages(ctx, code); err != nil {
			return nil, err
		}
	}
	session, _ := ctx.Value(sessionKey{}).(string)
	e := s.router.Begin(ctx, "", session)
	r, err := s.sb.Exec(ctx, code, s.timeout)
	switch {
	case err != nil:
		e.End("error", "", err.Error())
		return nil, err
	case r.Error != nil:
		e.End("error", r.Error.Type, r.Error.Message)
	default:
		e.End("ok", "", "")
	}
	r.ExecutionID = e.ID
	if r.View != "" {
		r.View = s.renderView(r.View)
	}
	for _, h := range s.cfg.Hooks {
		if err := h.PostExecute(ctx, code, r); err != nil {
			return nil, fmt.Errorf("post-execute hook: %w", err)
		}
	}
	return r, nil
}

type sessionKey struct{}

// WithSession returns a context whose executions (Sandbox.Execute) are
// recorded in the audit trail as belonging to the front end's session id
// (an MCP session's).
func WithSession(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, sessionKey{}, id)
}

// Progress is a sign of life from a running execution: see WithProgress.
type Progress = router.Progress

// WithProgress returns a context whose executions (Sandbox.Execute) pass
// what they report while they run to fn: sbx.progress(done, total,
// message) from Python or js(), and the log and progress lines of the
// tools they call (redacted of the bridges' secrets), at most one every
// router.MinProgressInterval, with values that rise from one to the next.
// fn must not block (the MCP server queues).
func WithProgress(ctx context.Context, fn func(Progress)) context.Context {
	return router.WithProgress(ctx, fn)
}

// WithOutput returns a context whose executions pass what the code prints
// to fn while it runs, whole lines at a time, stream "stdout" or "stderr";
// the Result still has all of it. fn must not block.
func WithOutput(ctx context.Context, fn func(stream, text string)) context.Context {
	return sandbox.WithOutput(ctx, fn)
}

// Info describes the running sandbox.
func (s *Sandbox) Info(ctx context.Context) (*sandbox.Info, error) {
	return s.sb.Info(ctx)
}

// Warm does now the setup the sandbox would do shortly after boot, and
// returns once it is done: for a sandbox started ahead of its first
// execution (sandbox.Supervisor.Warm).
func (s *Sandbox) Warm(ctx context.Context) error { return s.sb.Warm(ctx) }

// Interrupt raises KeyboardInterrupt in the running execution, if any.
func (s *Sandbox) Interrupt() { s.sb.Interrupt() }

// Close stops the sandbox and removes its temporary directories (the output
// directory, if configured, stays).
func (s *Sandbox) Close() error {
	var err error
	if s.sb != nil {
		err = s.sb.Close()
	}
	return errors.Join(err, s.cleanup())
}

// cleanup stops the bridges and removes the temporary directories.
func (s *Sandbox) cleanup() error {
	var errs []error
	if s.router != nil {
		errs = append(errs, s.router.Close())
	}
	for i := len(s.closers) - 1; i >= 0; i-- {
		errs = append(errs, s.closers[i]())
	}
	s.closers = nil
	if s.tempDir != "" {
		errs = append(errs, os.RemoveAll(s.tempDir))
		s.tempDir = ""
	}
	return errors.Join(errs...)
}

// PID is the sandbox process's id, for tests and diagnostics.
func (s *Sandbox) PID() int { return s.sb.PID() }

// RuntimeDir is the directory of the sandbox runtime it runs on (the one
// Config.RuntimeDir named, or the one found next to the executable).
func (s *Sandbox) RuntimeDir() string { return s.runtimeDir }

// ConfigError is a configuration the host cannot run with: a bad value, a
// missing directory or runtime.
type ConfigError struct{ Err error }

func (e *ConfigError) Error() string { return e.Err.Error() }
func (e *ConfigError) Unwrap() error { return e.Err }

func configErrorf(format string, args ...any) error {
	return &ConfigError{fmt.Errorf(format, args...)}
}

// mountSource checks that a mount's source is a directory.
func mountSource(target string, m Mount) error {
	if fi, err := os.Stat(m.Source); err != nil || !fi.IsDir() {
		return &KeyError{Key: entry("mount", target), Message: fmt.Sprintf("source %s is not a directory", m.Source)}
	}
	return nil
}

// outputDir makes sure dir can back /workspace: an existing directory the
// host can write to, or a new one in an existing directory (a missing
// parent is a mistake more often than a wish: it is not created). Without
// create (Check) it writes nothing: a missing dir whose parent exists is
// fine, and an existing one is not probed for writing.
func outputDir(dir string, create bool) error {
	fi, err := os.Stat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		if _, perr := os.Stat(filepath.Dir(dir)); perr != nil {
			return fmt.Errorf("%s: its parent %s does not exist (create it first)", dir, filepath.Dir(dir))
		}
		if !create {
			return nil
		}
		return os.Mkdir(dir, 0o755)
	}
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s is not a directory", dir)
	}
	if !create {
		return nil
	}
	f, err := os.CreateTemp(dir, ".parselbox-probe-")
	if err != nil {
		return fmt.Errorf("%s is not a directory parselbox can write to: %w", dir, errors.Unwrap(err))
	}
	f.Close()
	return os.Remove(f.Name())
}
