package host

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/parselbox/parselbox/host/bridges"
	"github.com/parselbox/parselbox/host/inproc"
	"github.com/parselbox/parselbox/sdk"
)

// addBridges makes the configured bridges namespaces of the router: the Go
// values of Config.Context in-process, then the plugins (Config.Bridges and
// one mcpproxy per MCP server, of kind "mcp"), started concurrently.
func (s *Sandbox) addBridges(ctx context.Context) error {
	configs, mcp, err := s.pluginBridges()
	if err != nil {
		return err
	}
	for name, b := range configs {
		source := entry("bridge", name)
		if _, ok := mcp[name]; ok {
			server, _ := b.Config["name"].(string)
			source = entry("mcp_server", server)
		}
		s.router.SetPolicy(name, b.ToolPolicy.routerPolicy(source))
	}
	for name, p := range s.cfg.ContextPolicies {
		s.router.SetPolicy(name, p.routerPolicy(entry("context", name)))
	}
	for _, name := range slices.Sorted(maps.Keys(s.cfg.Context)) {
		if _, dup := configs[name]; dup {
			return configErrorf("%q is both a context value and a bridge", name)
		}
		b, err := inproc.New(name, s.cfg.Context[name])
		if err == nil {
			err = s.router.Add(ctx, name, "go", b)
		}
		if err != nil {
			return configErrorf("context %q: %w", name, err)
		}
	}
	if len(configs) == 0 {
		return nil
	}
	mgr := bridges.NewManager(bridges.Options{
		Logger:     s.log,
		PluginDirs: s.cfg.PluginDirs,
		Host:       s.router,
	})
	s.closers = append(s.closers, func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		return mgr.Close(ctx)
	})
	names := slices.Sorted(maps.Keys(configs))
	started := make([]sdk.BridgeServer, len(names))
	errs := make([]error, len(names))
	var wg sync.WaitGroup
	pending := make([]atomic.Bool, len(names))
	for i, name := range names {
		pending[i].Store(true)
		bc := configs[name]
		cfg := bridges.Config{Plugin: bc.Plugin, SHA256: bc.SHA256, Env: bc.Env, Config: bc.Config, Dir: bc.Dir}
		if _, ok := mcp[name]; ok {
			cfg.Secrets = mcpSecrets(cfg.Config)
		}
		wg.Go(func() {
			started[i], errs[i] = mgr.Start(ctx, name, cfg)
			pending[i].Store(false)
		})
	}
	s.waitNoting(&wg, slowAfter, "starting bridges", func() []string {
		var slow []string
		for i, name := range names {
			if pending[i].Load() {
				slow = append(slow, name)
			}
		}
		return slow
	})
	for i, err := range errs {
		if de, ok := errors.AsType[*sdk.DeclineError](err); ok {
			// The bridge will not serve here (an MCP server that is this
			// Parselbox): its namespace is left out.
			s.log.Info("bridge left out: it declined to serve", "bridge", names[i], "reason", de.Reason)
			errs[i], started[i] = nil, nil
		}
	}
	if err := errors.Join(errs...); err != nil {
		if errors.Is(err, bridges.ErrInvalidConfig) || errors.Is(err, bridges.ErrPluginNotFound) ||
			errors.Is(err, bridges.ErrChecksumMismatch) || errors.Is(err, bridges.ErrIncompatible) {
			return &ConfigError{err}
		}
		return fmt.Errorf("starting bridges: %w", err)
	}
	for i, name := range names {
		if started[i] == nil {
			continue
		}
		kind := "plugin"
		if _, ok := mcp[name]; ok {
			kind = "mcp"
		}
		if err := s.router.Add(ctx, name, kind, started[i]); err != nil {
			return err
		}
	}
	return nil
}

// mcpSecrets are the credentials of an MCP server's entry (the mcpproxy
// bridge's configuration): the values of its env and of its headers (with
// a header's part after a scheme, "Bearer ..."), as for the variables
// passed to any bridge (bridges.SecretEnv: whatever their names, but for
// short values and the usual settings). The router keeps them out of
// everything the server's namespace sends to the sandbox, whatever the
// server echoes.
func mcpSecrets(entry map[string]any) []string {
	var out []string
	env, _ := entry["env"].(map[string]any)
	for name, v := range env {
		if s, ok := v.(string); ok && bridges.SecretEnv(name, s) {
			out = append(out, s)
		}
	}
	headers, _ := entry["headers"].(map[string]any)
	for name, v := range headers {
		s, ok := v.(string)
		if !ok || !bridges.SecretEnv(name, s) || slices.Contains(plainHeaders, strings.ToLower(name)) {
			continue
		}
		out = append(out, s)
		if _, cred, ok := strings.Cut(strings.TrimSpace(s), " "); ok {
			out = append(out, strings.TrimSpace(cred))
		}
	}
	return out
}

// plainHeaders are the headers (in lower case) that hold no credential.
var plainHeaders = []string{"accept", "accept-language", "accept-encoding", "content-type", "user-agent", "cache-control"}

// BridgePid returns the process id of the plugin that serves namespace
// name, and whether there is one (no in-process bridge has one; a plugin
// has none between a crash and its restart). It is for measurements, such
// as the plugin's memory in `make bench`.
func (s *Sandbox) BridgePid(name string) (int, bool) {
	if s.router == nil {
		return 0, false
	}
	p, ok := s.router.Bridge(name).(interface{ Pid() int })
	if !ok {
		return 0, false
	}
	pid := p.Pid()
	return pid, pid != 0
}

// namespaceLines describes each namespace for the guide.
func (s *Sandbox) namespaceLines() []string {
	if s.router == nil {
		return nil
	}
	var out []string
	for _, n := range s.router.Namespaces() {
		out = append(out, fmt.Sprintf("`%s` (%s)", n.Name, n.Kind))
	}
	return out
}

// mountLines describe the mounts, by target: "/mnt/data (read-only)".
func (s *Sandbox) mountLines() []string {
	var out []string
	for _, t := range slices.Sorted(maps.Keys(s.cfg.Mounts)) {
		mode := "read-only"
		if !s.cfg.Mounts[t].ReadOnly() {
			mode = "read/write"
		}
		out = append(out, fmt.Sprintf("/mnt/%s (%s)", strings.Trim(t, "/"), mode))
	}
	return out
}

// info is what sbx.info() reports about the sandbox itself.
func (s *Sandbox) info() map[string]any {
	var globals []string
	for _, k := range slices.Sorted(maps.Keys(s.cfg.Globals)) {
		globals = append(globals, fmt.Sprintf("%s (%s)", k, pyTypeName(s.cfg.Globals[k])))
	}
	var network any = s.cfg.Network
	if !s.cfg.Network && len(s.cfg.AllowNet) > 0 {
		network = s.cfg.AllowNet
	}
	var files []string
	for _, f := range s.cfg.Files {
		files = append(files, filepath.Base(f))
	}
	return map[string]any{
		"context":     map[string]any{"globals": globals},
		"environment": map[string]any{"network": network},
		"mounts":      s.mountLines(),
		"files":       map[string]any{"path": "/files (read/write)", "items": files},
		"workspace":   "/workspace (read/write, the working directory)",
		"limits":      map[string]any{"timeout_seconds": s.timeout.Seconds(), "memory_mb": s.memoryMB()},
		"confinement": s.jail,
		"javascript":  s.npmInfo(),
		"shell":       s.shellInfo(),
	}
}

// shellInfo describes bash() and the WASI commands it finds now (every
// directory's bin/*.wasm; the sandbox looks again at each call).
func (s *Sandbox) shellInfo() string {
	var cmds []string
	for _, r := range s.files {
		matches, _ := filepath.Glob(filepath.Join(r.dir, "bin", "*.wasm"))
		for _, m := range matches {
			cmds = append(cmds, fmt.Sprintf("%s (%s/bin/%s)", strings.TrimSuffix(filepath.Base(m), ".wasm"), r.prefix, filepath.Base(m)))
		}
	}
	slices.Sort(cmds)
	info := "bash(command): an emulated shell (just-bash) over /workspace, /files and the mounts; returns stdout"
	if len(cmds) > 0 {
		info += "; WASI commands: " + strings.Join(cmds, ", ")
	}
	return info
}

// pyTypeName names the Python type a JSON value becomes.
func pyTypeName(v any) string {
	switch x := v.(type) {
	case nil:
		return "NoneType"
	case bool:
		return "bool"
	case int, int64, int32:
		return "int"
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1<<53 {
			return "int" // JSON has one number type; Python makes 3 an int
		}
		return "float"
	case string:
		return "str"
	case []any:
		return "list"
	case map[string]any:
		return "dict"
	default:
		return fmt.Sprintf("%T", v)
	}
}

// slowAfter is how long a preparation may take before Config.Notify hears
// about it, and then how often it hears again.
const slowAfter = 3 * time.Second

// waitNoting waits for wg; while it takes longer than every, it tells
// Config.Notify, every so often, what is still under way (which names).
func (s *Sandbox) waitNoting(wg *sync.WaitGroup, every time.Duration, what string, waiting func() []string) {
	if s.cfg.Notify == nil {
		wg.Wait()
		return
	}
	done := make(chan struct{})
	go func() {
		wg.Wait()
		close(done)
	}()
	start := time.Now()
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-done:
			return
		case <-tick.C:
			if names := waiting(); len(names) > 0 {
				s.cfg.Notify(fmt.Sprintf("%s: still waiting for %s (%s)", what, strings.Join(names, ", "), time.Since(start).Round(time.Second)))
			}
		}
	}
}
