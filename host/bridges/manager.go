package bridges

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/parselbox/parselbox/sdk"
)

// Defaults for the zero values of Options.
const (
	DefaultStartTimeout    = 20 * time.Second
	DefaultShutdownTimeout = 5 * time.Second
	DefaultRestartDelay    = 250 * time.Millisecond
	DefaultMaxRestartDelay = 30 * time.Second
)

// Options configure a Manager. The zero value works: no logs, no callbacks,
// plugins found next to the running executable only.
type Options struct {
	// Logger receives the manager's logs and, re-levelled, each plugin's
	// stderr (hclog JSON). nil discards them.
	Logger hclog.Logger
	// ExecutableDir is searched first for plugin binaries. Empty: the
	// directory of the running executable.
	ExecutableDir string
	// PluginDirs are searched, after ExecutableDir, for plugin binaries.
	PluginDirs []string
	// Host serves bridges' callbacks into the host (sdk.ConfigureRequest.Host
	// in the bridge). nil: bridges get no callbacks.
	Host sdk.HostClient

	// AutoMTLS has go-plugin set up mutual TLS between host and plugin. It
	// costs about 50 ms per plugin start (two RSA keys), and is off by
	// default: the plugin's sockets live in a private (0700) directory, so
	// only the host's user can reach them, and that user can read the
	// plugin's memory anyway.
	AutoMTLS bool
	// SocketDir is where the private socket directory of each plugin is
	// created. Empty: os.TempDir().
	SocketDir string

	// StartTimeout bounds a plugin's start (the handshake). Zero means
	// DefaultStartTimeout.
	StartTimeout time.Duration
	// ShutdownTimeout bounds a bridge's graceful Shutdown on Close; after it
	// the process is killed. Zero means DefaultShutdownTimeout.
	ShutdownTimeout time.Duration
	// CancelGrace is how long a cancelled call waits for the bridge's answer
	// to the cancel. Zero means 5s (wire.DefaultCancelGrace).
	CancelGrace time.Duration
	// RestartDelay and MaxRestartDelay shape the backoff between restarts of
	// a bridge that keeps crashing: the first restart is immediate, then
	// RestartDelay, doubling up to MaxRestartDelay. Zero means the defaults.
	RestartDelay    time.Duration
	MaxRestartDelay time.Duration
}

// Config declares one bridge: the fields of host.BridgeConfig, and the
// secrets the host knows in its configuration.
type Config struct {
	// Plugin names the plugin: "greeter" is the binary
	// parselbox-bridge-greeter in the plugin directories; a value containing
	// a slash is a path to the binary.
	Plugin string
	// SHA256, if set, pins the binary (hex): a mismatch refuses to start it.
	SHA256 string
	// Env names host environment variables passed to the plugin; nothing
	// else of the host's environment is.
	Env []string
	// Config is the bridge's own configuration, handed to it as JSON.
	Config map[string]any
	// Dir is the plugin's working directory, against which relative paths in
	// its configuration resolve. Empty: the host's.
	Dir string
	// Secrets are values in Config that the host knows to be credentials
	// (an MCP server's env and headers). The bridge's Redactor removes
	// them, the values of the Env variables passed to the plugin, and what
	// the plugin reports from Configure.
	Secrets []string
}

// Manager starts bridge plugins and keeps them running: it restarts a
// crashed plugin on the next call, and stops them all on Close. It is safe
// for concurrent use.
type Manager struct {
	opts Options
	log  hclog.Logger

	mu      sync.Mutex
	bridges map[string]*bridge
	closed  bool
}

// NewManager returns a manager with no bridges.
func NewManager(opts Options) *Manager {
	if opts.Logger == nil {
		opts.Logger = hclog.NewNullLogger()
	}
	if opts.ExecutableDir == "" {
		opts.ExecutableDir = executableDir()
	}
	for d, def := range map[*time.Duration]time.Duration{
		&opts.StartTimeout:    DefaultStartTimeout,
		&opts.ShutdownTimeout: DefaultShutdownTimeout,
		&opts.RestartDelay:    DefaultRestartDelay,
		&opts.MaxRestartDelay: DefaultMaxRestartDelay,
	} {
		if *d <= 0 {
			*d = def
		}
	}
	return &Manager{
		opts:    opts,
		log:     opts.Logger.Named("bridges"),
		bridges: make(map[string]*bridge),
	}
}

// Start starts the bridge name's plugin, configures it with cfg.Config, and
// returns the bridge. The returned value routes calls to the plugin process,
// restarting it (and configuring it again) on the next call after a crash.
// It also implements sdk.Shutdowner, router.Secrets (Redactor: the
// bridge's secrets) and Pid.
//
// Errors name the bridge: `bridge "NAME": invalid configuration: ...` for a
// configuration that the manager or the bridge rejects (ErrInvalidConfig;
// when the bridge rejects its config block, the error also is a
// *sdk.ConfigError naming the key, for errors.As), and ErrPluginNotFound,
// ErrChecksumMismatch and ErrIncompatible for plugins that cannot be used.
func (m *Manager) Start(ctx context.Context, name string, cfg Config) (sdk.BridgeServer, error) {
	config, err := checkConfig(name, cfg)
	if err != nil {
		return nil, fmt.Errorf("bridge %q: %w: %w", name, ErrInvalidConfig, err)
	}
	b := newBridge(m, name, cfg, config)

	m.mu.Lock()
	switch {
	case m.closed:
		m.mu.Unlock()
		return nil, fmt.Errorf("bridge %q: %w", name, ErrClosed)
	case m.bridges[name] != nil:
		m.mu.Unlock()
		return nil, fmt.Errorf("bridge %q: %w: started twice", name, ErrInvalidConfig)
	}
	m.bridges[name] = b
	m.mu.Unlock()

	in, err := b.launch(ctx)
	if err != nil {
		m.mu.Lock()
		delete(m.bridges, name)
		m.mu.Unlock()
		return nil, fmt.Errorf("bridge %q: %w", name, err)
	}
	if !b.install(in) {
		in.kill()
		return nil, fmt.Errorf("bridge %q: %w", name, ErrClosed)
	}
	return b, nil
}

// Pid returns the process id of the running plugin of bridge name, and
// whether there is one (a bridge between a crash and its restart has
// none). The bench reads the plugin's memory through it.
func (m *Manager) Pid(name string) (int, bool) {
	m.mu.Lock()
	b := m.bridges[name]
	m.mu.Unlock()
	if b == nil {
		return 0, false
	}
	pid := b.Pid()
	return pid, pid != 0
}

// Stop stops one bridge as Close stops them all, and forgets it: its name
// can be started again. Calls of the stopped bridge fail with
// ErrBridgeShutdown.
func (m *Manager) Stop(ctx context.Context, name string) error {
	m.mu.Lock()
	b := m.bridges[name]
	delete(m.bridges, name)
	m.mu.Unlock()
	if b == nil {
		return fmt.Errorf("bridge %q: not started", name)
	}
	return b.stop(ctx)
}

// Close stops every bridge: each gets its Shutdown (bounded by
// Options.ShutdownTimeout), then its process is stopped, and killed at once
// when ctx is done. Calls in flight fail with ErrBridgeShutdown. Close
// returns when all processes are gone.
func (m *Manager) Close(ctx context.Context) error {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil
	}
	m.closed = true
	all := slices.Collect(maps.Values(m.bridges))
	m.mu.Unlock()

	errs := make([]error, len(all))
	var wg sync.WaitGroup
	for i, b := range all {
		wg.Go(func() { errs[i] = b.stop(ctx) })
	}
	wg.Wait()
	return errors.Join(errs...)
}

// checkConfig checks a bridge's declaration and returns its configuration
// block as JSON.
func checkConfig(name string, cfg Config) (json.RawMessage, error) {
	switch {
	case name == "":
		return nil, errors.New("the bridge has no name")
	case strings.ContainsAny(name, ". \t\n"):
		return nil, errors.New("a bridge name is one namespace: no dots or spaces")
	case cfg.Plugin == "":
		return nil, errors.New("plugin is empty")
	}
	if cfg.SHA256 != "" {
		if b, err := hex.DecodeString(cfg.SHA256); err != nil || len(b) != 32 {
			return nil, fmt.Errorf("sha256 %q is not 64 hexadecimal digits", cfg.SHA256)
		}
	}
	for _, v := range cfg.Env {
		switch {
		case v == "" || strings.ContainsAny(v, "=\x00"):
			return nil, fmt.Errorf("env: %q is not a variable name", v)
		case strings.HasPrefix(v, "PLUGIN_") || v == sdk.Handshake.MagicCookieKey || v == sdk.LogLevelEnv:
			return nil, fmt.Errorf("env: %s is set by the plugin manager", v)
		}
	}
	if cfg.Config == nil {
		return json.RawMessage(`{}`), nil
	}
	config, err := json.Marshal(cfg.Config)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	return config, nil
}
