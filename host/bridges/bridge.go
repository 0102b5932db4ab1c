package bridges

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"github.com/hashicorp/go-plugin/runner"

	"github.com/parselbox/parselbox/internal/wire"
	"github.com/parselbox/parselbox/sdk"
)

// bridge is the host's view of one bridge plugin: an sdk.BridgeServer that
// forwards to the current plugin process, and starts a new one when the
// process is gone.
type bridge struct {
	m       *Manager
	name    string
	cfg     Config
	log     hclog.Logger
	backoff backoff

	mu      sync.Mutex
	config  json.RawMessage // for Configure after a restart
	host    sdk.HostClient  // idem
	inst    *instance       // nil only during Start
	lastErr error           // why the bridge last failed
	closed  bool

	envSecrets []string                     // the values of the variables passed to the plugin
	redactor   atomic.Pointer[sdk.Redactor] // of the configuration's secrets and the plugin's

	starting chan struct{} // one (re)start at a time; ctx-aware lock
}

// instance is one plugin process and the client of its Bridge service.
type instance struct {
	client *plugin.Client
	rpc    *wire.Client
	proc   *process
	dead   atomic.Bool // the connection broke; counted by the backoff once
}

func (in *instance) alive() bool { return !in.dead.Load() && !in.client.Exited() }

// kill stops the process at once and releases go-plugin's resources.
func (in *instance) kill() {
	_ = in.proc.Kill(context.Background())
	in.client.Kill()
}

// untilDone returns f's error, or ctx's when ctx is done first: then it
// kills proc at once, which ends f, and waits for f.
func untilDone(ctx context.Context, proc *process, f func() error) error {
	done := make(chan error, 1)
	go func() { done <- f() }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		_ = proc.Kill(context.Background())
		<-done
		return ctx.Err()
	}
}

func newBridge(m *Manager, name string, cfg Config, config json.RawMessage) *bridge {
	b := &bridge{
		m:        m,
		name:     name,
		cfg:      cfg,
		log:      m.log.With(logKeyBridge, name),
		backoff:  backoff{base: m.opts.RestartDelay, max: m.opts.MaxRestartDelay},
		config:   config,
		host:     m.opts.Host,
		starting: make(chan struct{}, 1),
	}
	for _, name := range cfg.Env {
		if v, ok := os.LookupEnv(name); ok && SecretEnv(name, v) {
			b.envSecrets = append(b.envSecrets, v)
		}
	}
	b.setSecrets(nil)
	return b
}

// SecretEnv reports whether the value of an environment variable passed to
// a bridge is taken as a secret, kept out of everything the bridge sends to
// the sandbox: when its name says it is a credential (sdk.SecretName), or
// when it is at least 8 characters long and the variable is none of the
// usual settings (PATH, HOME, LANG, LC_*, TZ, ...). Short values of other
// names ("1", "true", "eu") would blank out ordinary text.
func SecretEnv(name, value string) bool {
	if sdk.SecretName(name) {
		return true
	}
	switch name {
	case "PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LANGUAGE", "TZ", "TERM", "TMPDIR", "PWD", "NODE_ENV", "GORACE":
		return false
	}
	return !strings.HasPrefix(name, "LC_") && len(strings.TrimSpace(value)) >= 8
}

// setSecrets makes the bridge's redactor: the configuration's secrets, the
// values passed in its environment, and reported (by the plugin's
// Configure).
func (b *bridge) setSecrets(reported []string) {
	all := slices.Concat(b.cfg.Secrets, b.envSecrets, reported)
	b.redactor.Store(sdk.NewRedactor(all...))
}

// Redactor returns the redactor of the bridge's secrets: the host's router
// removes them from everything the bridge sends to the sandbox
// (router.Secrets).
func (b *bridge) Redactor() *sdk.Redactor { return b.redactor.Load() }

// Pid returns the process id of the bridge's current plugin process; 0 when
// there is none.
func (b *bridge) Pid() int {
	b.mu.Lock()
	in := b.inst
	b.mu.Unlock()
	if in == nil || !in.alive() {
		return 0
	}
	return in.proc.Pid()
}

// install makes in the current instance, unless the bridge was closed.
func (b *bridge) install(in *instance) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.m.mu.Lock()
	defer b.m.mu.Unlock()
	if b.closed || b.m.closed {
		return false
	}
	b.inst = in
	return true
}

// Describe implements sdk.BridgeServer.
func (b *bridge) Describe(ctx context.Context) (*sdk.Description, error) {
	in, err := b.current(ctx)
	if err != nil {
		return nil, err
	}
	d, err := in.rpc.Describe(ctx)
	if errors.Is(err, wire.ErrUnavailable) {
		return nil, b.lost(in, "while describing itself", err)
	}
	if err != nil {
		return nil, fmt.Errorf("bridge %q: %w", b.name, err)
	}
	return d, nil
}

// Configure implements sdk.BridgeServer: it configures the running plugin
// and keeps the configuration for restarts. req.Host nil means the
// manager's Options.Host.
func (b *bridge) Configure(ctx context.Context, req *sdk.ConfigureRequest) error {
	in, err := b.current(ctx)
	if err != nil {
		return err
	}
	cfg := req.Config
	if len(cfg) == 0 {
		cfg = json.RawMessage(`{}`)
	}
	host := cmp.Or(req.Host, b.m.opts.Host)
	creq := &sdk.ConfigureRequest{Config: cfg, Host: host}
	err = in.rpc.Configure(ctx, creq)
	if errors.Is(err, wire.ErrUnavailable) {
		return b.lost(in, "while being configured", err)
	}
	if err != nil {
		return fmt.Errorf("bridge %q: %w: %w", b.name, ErrInvalidConfig, configError(err))
	}
	b.mu.Lock()
	b.config, b.host = cfg, host
	b.mu.Unlock()
	b.setSecrets(creq.Secrets())
	req.AddSecrets(creq.Secrets()...)
	return nil
}

// CallTool implements sdk.BridgeServer. If the plugin's process is gone, it
// is restarted first; when it keeps failing, restarts are spaced out by a
// capped exponential backoff, and calls before the next restart is due fail
// at once. A call in
// flight when the process dies fails with an error that wraps
// ErrBridgeShutdown and is a *sdk.ToolError with sdk.CodeUnavailable.
func (b *bridge) CallTool(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
	in, err := b.current(ctx)
	if err != nil {
		return nil, err
	}
	res, err := in.rpc.CallTool(ctx, req)
	if errors.Is(err, wire.ErrUnavailable) {
		return nil, b.lost(in, fmt.Sprintf("while running tool %q", req.Name), err)
	}
	if err == nil {
		b.backoff.reset()
	}
	return res, err
}

// Shutdown implements sdk.Shutdowner: it runs the bridge's own Shutdown.
// The process keeps running; Manager.Close stops it.
func (b *bridge) Shutdown(ctx context.Context) error {
	b.mu.Lock()
	in := b.inst
	b.mu.Unlock()
	if in == nil || !in.alive() {
		return nil
	}
	// ErrUnavailable: gone already.
	if err := in.rpc.Shutdown(ctx); err != nil && !errors.Is(err, wire.ErrUnavailable) {
		return fmt.Errorf("bridge %q: shutting down: %w", b.name, err)
	}
	return nil
}

// current returns a live instance, starting a new process if the last one
// is gone.
func (b *bridge) current(ctx context.Context) (*instance, error) {
	if in, err := b.live(); in != nil || err != nil {
		return in, err
	}
	select {
	case b.starting <- struct{}{}:
		defer func() { <-b.starting }()
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	// Another caller may have restarted it while this one waited.
	if in, err := b.live(); in != nil || err != nil {
		return in, err
	}
	b.mu.Lock()
	old, last := b.inst, b.lastErr
	b.mu.Unlock()
	if old != nil {
		b.markDead(old)
		old.kill()
	}
	if d := b.backoff.remaining(); d > 0 {
		return nil, &unavailableError{
			msg:   fmt.Sprintf("bridge %q is down after %d failures in a row; the next restart is due in %s (last failure: %v)", b.name, b.backoff.attempts(), d.Round(time.Millisecond), last),
			cause: last,
		}
	}
	b.log.Info("restarting bridge", logKeyAttempt, b.backoff.attempts())
	in, err := b.launch(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return nil, err
		}
		d := b.backoff.fail()
		b.mu.Lock()
		b.lastErr = err
		b.mu.Unlock()
		b.log.Error("restarting bridge failed", logKeyError, err, logKeyDelay, d)
		return nil, &unavailableError{msg: fmt.Sprintf("bridge %q is down and could not be restarted: %v", b.name, err), cause: err}
	}
	if !b.install(in) {
		in.kill()
		return nil, b.closedError()
	}
	return in, nil
}

// live returns the current instance if it is alive, an error if the bridge
// is closed, and neither if it needs a restart.
func (b *bridge) live() (*instance, error) {
	b.mu.Lock()
	in, closed := b.inst, b.closed
	b.mu.Unlock()
	if closed {
		return nil, b.closedError()
	}
	if in != nil && in.alive() {
		return in, nil
	}
	return nil, nil
}

func (b *bridge) closedError() error {
	return &unavailableError{msg: fmt.Sprintf("bridge %q is shut down", b.name), cause: ErrClosed}
}

// markDead records that in's process is gone, counting the failure once.
func (b *bridge) markDead(in *instance) {
	if in.dead.CompareAndSwap(false, true) {
		d := b.backoff.fail()
		b.log.Warn("bridge process lost", logKeyPid, in.proc.Pid(), logKeyDelay, d)
	}
}

// lost is the error of a call whose connection to in broke: it names the
// bridge and, when it is known in time, how the process ended.
func (b *bridge) lost(in *instance, during string, err error) error {
	b.mu.Lock()
	closed := b.closed
	if !closed {
		b.lastErr = err
	}
	b.mu.Unlock()
	if closed {
		return b.closedError()
	}
	b.markDead(in)
	// The process is usually reaped within milliseconds of the broken
	// connection; say how it ended if it is known soon.
	how := "its connection was lost"
	select {
	case <-in.proc.exited:
		how = in.proc.state
	case <-time.After(100 * time.Millisecond):
	}
	return &unavailableError{
		msg:   fmt.Sprintf("bridge %q crashed %s (%s); it is restarted on the next call", b.name, during, how),
		cause: err,
	}
}

// launch starts a plugin process and configures it. Its errors do not name
// the bridge: the callers do.
func (b *bridge) launch(ctx context.Context) (*instance, error) {
	started := time.Now()
	path, err := b.m.Find(b.cfg.Plugin)
	if err != nil {
		return nil, err
	}
	if b.cfg.SHA256 != "" {
		if err := checkSHA256(path, b.cfg.SHA256); err != nil {
			return nil, err
		}
	}
	opts := b.m.opts
	proc := newProcess(b.log, path, b.cfg.Dir)
	stdio := b.log.StandardWriter(&hclog.StandardLoggerOptions{InferLevels: true})
	client := plugin.NewClient(&plugin.ClientConfig{
		HandshakeConfig: sdk.Handshake,
		Plugins:         wire.PluginSet(wire.ClientOptions{CancelGrace: opts.CancelGrace}),
		// With a RunnerFunc (unlike with Cmd), go-plugin makes a private
		// (0700) socket directory for the plugin, passes it to the plugin as
		// PLUGIN_UNIX_SOCKET_DIR, and puts the host's own broker sockets (the
		// Host callback service) there too.
		RunnerFunc: func(_ hclog.Logger, cmd *exec.Cmd, _ string) (runner.Runner, error) {
			return proc.prepare(b.env(cmd.Env))
		},
		UnixSocketConfig: &plugin.UnixSocketConfig{TempDir: opts.SocketDir},
		SkipHostEnv:      true,
		AllowedProtocols: []plugin.Protocol{plugin.ProtocolGRPC},
		GRPCDialOptions:  wire.DialOptions(),
		AutoMTLS:         opts.AutoMTLS,
		StartTimeout:     opts.StartTimeout,
		Logger:           b.log,
		SyncStdout:       stdio,
		SyncStderr:       stdio,
	})

	// go-plugin's handshake; killing the process ends it at once.
	var conn plugin.ClientProtocol
	err = untilDone(ctx, proc, func() (err error) {
		conn, err = client.Client()
		return err
	})
	if err != nil {
		client.Kill()
		if strings.Contains(err.Error(), "incompatible API version") || strings.Contains(err.Error(), "incompatible core API version") {
			return nil, fmt.Errorf("%w: %s was built for another version of the bridge protocol "+
				"(this host speaks version %d): rebuild it with a matching parselbox sdk (%v)",
				ErrIncompatible, path, sdk.Handshake.ProtocolVersion, err)
		}
		return nil, fmt.Errorf("starting plugin %s: %w", path, err)
	}
	raw, err := conn.Dispense(sdk.PluginName)
	if err != nil {
		client.Kill()
		return nil, fmt.Errorf("dispensing plugin %s: %w", path, err)
	}
	in := &instance{client: client, rpc: raw.(*wire.Client), proc: proc}

	b.mu.Lock()
	config, host := b.config, b.host
	b.mu.Unlock()
	creq := &sdk.ConfigureRequest{Config: config, Host: host}
	if err := in.rpc.Configure(ctx, creq); err != nil {
		in.kill()
		if errors.Is(err, wire.ErrUnavailable) {
			return nil, fmt.Errorf("plugin %s exited while being configured: %w", path, err)
		}
		if de, ok := errors.AsType[*sdk.DeclineError](err); ok {
			return nil, de // no mistake of the configuration's
		}
		return nil, fmt.Errorf("%w: %w", ErrInvalidConfig, configError(err))
	}
	b.setSecrets(creq.Secrets())
	b.log.Info("bridge started", logKeyPath, path, logKeyPid, proc.Pid(), logKeyDuration, time.Since(started))
	return in, nil
}

// configError is the error of a bridge that rejects its configuration, as
// a *sdk.ConfigError: the bridge's own (naming the key), or one for the
// whole block with the message of any other failure.
func configError(err error) error {
	if ce, ok := errors.AsType[*sdk.ConfigError](err); ok {
		return ce
	}
	if te, ok := errors.AsType[*sdk.ToolError](err); ok {
		return &sdk.ConfigError{Message: te.Message}
	}
	return err
}

// env returns the plugin's environment: go-plugin's variables (base), the
// host variables that the configuration names (those that are set), and the
// host's log level. Nothing else of the host's environment.
func (b *bridge) env(base []string) []string {
	env := slices.Clone(base)
	for _, name := range b.cfg.Env {
		if v, ok := os.LookupEnv(name); ok {
			env = append(env, name+"="+v)
		}
	}
	level := b.m.log.GetLevel()
	if level == hclog.NoLevel {
		level = hclog.Info
	}
	return append(env, sdk.LogLevelEnv+"="+level.String())
}

// stop shuts the bridge down for good: its Shutdown, bounded by
// Options.ShutdownTimeout, then its process.
func (b *bridge) stop(ctx context.Context) error {
	b.mu.Lock()
	b.closed = true
	in := b.inst
	b.mu.Unlock()
	if in == nil {
		return nil
	}
	if in.alive() {
		sctx, cancel := context.WithTimeout(ctx, b.m.opts.ShutdownTimeout)
		err := in.rpc.Shutdown(sctx)
		cancel()
		if err != nil {
			b.log.Warn("bridge shutdown failed; stopping it anyway", logKeyError, err)
		}
	}
	// go-plugin's Kill closes the connection, which ends the plugin's
	// server, and kills the process after 2s; ctx done kills it at once.
	err := untilDone(ctx, in.proc, func() error {
		in.client.Kill()
		return nil
	})
	if err != nil {
		return fmt.Errorf("bridge %q: stopping: %w", b.name, err)
	}
	return nil
}

var (
	_ sdk.BridgeServer = (*bridge)(nil)
	_ sdk.Shutdowner   = (*bridge)(nil)
	_ interface {
		Redactor() *sdk.Redactor
	} = (*bridge)(nil)
)
