package bridges

import (
	"context"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin/runner"

	"github.com/parselbox/parselbox/sdk/procgroup"
)

// process runs a plugin binary for go-plugin (it is the runner.Runner of a
// plugin.ClientConfig.RunnerFunc). Compared with go-plugin's own runner for a
// ClientConfig.Cmd:
//   - the plugin gets exactly the environment it is given (go-plugin's
//     variables, among them PLUGIN_UNIX_SOCKET_DIR naming the private socket
//     directory go-plugin made for it, plus what the bridge's config names);
//   - its stdin is /dev/null, not the host's stdin (which may carry MCP);
//   - it runs in its own process group with Pdeathsig (sdk/procgroup), Kill
//     kills the whole group, and Wait kills the group's leftovers before
//     the plugin is reaped.
type process struct {
	path   string
	dir    string // working directory; "" is the host's
	logger hclog.Logger

	mu     sync.Mutex
	cmd    *exec.Cmd
	pg     *procgroup.Process // nil until started
	stdout io.ReadCloser
	stderr io.ReadCloser
	exited chan struct{} // closed once the process has exited and is reaped
	state  string        // how it exited ("signal: killed", "exit status 2"), set before exited is closed
	killed atomic.Bool   // the host killed it (Kill): its end is no error
}

func newProcess(logger hclog.Logger, path, dir string) *process {
	return &process{path: path, dir: dir, logger: logger, exited: make(chan struct{})}
}

// prepare builds the command with env; go-plugin calls it through
// RunnerFunc before Start.
func (p *process) prepare(env []string) (*process, error) {
	cmd := exec.Command(p.path)
	cmd.Env = env
	cmd.Dir = p.dir
	procgroup.Prepare(cmd)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	p.mu.Lock()
	p.cmd, p.stdout, p.stderr = cmd, stdout, stderr
	p.mu.Unlock()
	return p, nil
}

// Start implements runner.Runner.
func (p *process) Start(context.Context) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.cmd.Start(); err != nil {
		return err
	}
	p.pg = procgroup.Track(p.cmd)
	p.logger.Debug("plugin process started", logKeyPath, p.path, logKeyPid, p.pg.Pid())
	return nil
}

// Wait implements runner.Runner: once the plugin has exited, and before its
// pid can be reused, what is left of its process group is killed; then it
// is reaped.
func (p *process) Wait(context.Context) error {
	p.mu.Lock()
	pg := p.pg
	p.mu.Unlock()
	err := pg.Wait()
	if ps := p.cmd.ProcessState; ps != nil {
		p.state = ps.String()
	}
	close(p.exited)
	if err != nil && p.killed.Load() {
		// Stopped on purpose (it refused its configuration, the host
		// closes): go-plugin would log an ERROR for it.
		p.logger.Debug("plugin process stopped", logKeyPath, p.path, "state", p.state)
		return nil
	}
	return err
}

// Kill implements runner.Runner: SIGKILL to the plugin's process group
// (nothing once the plugin is reaped).
func (p *process) Kill(context.Context) error {
	p.mu.Lock()
	pg := p.pg
	p.mu.Unlock()
	if pg != nil {
		p.killed.Store(true)
		pg.Kill()
	}
	return nil
}

// Stdout implements runner.Runner.
func (p *process) Stdout() io.ReadCloser { return p.stdout }

// Stderr implements runner.Runner.
func (p *process) Stderr() io.ReadCloser { return p.stderr }

// Name implements runner.Runner.
func (p *process) Name() string { return p.path }

// ID implements runner.Runner.
func (p *process) ID() string {
	if pid := p.Pid(); pid != 0 {
		return strconv.Itoa(pid)
	}
	return ""
}

// Pid returns the process id, 0 before Start.
func (p *process) Pid() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.pg == nil {
		return 0
	}
	return p.pg.Pid()
}

// Diagnose implements runner.Runner.
func (p *process) Diagnose(context.Context) string {
	return fmt.Sprintf("%s did not complete the plugin handshake: is it a parselbox bridge "+
		"(built with the sdk, calling sdk.Serve and printing nothing to stdout), built for this OS and architecture?", p.path)
}

// PluginToHost implements runner.AddrTranslator: host and plugin share the
// file system.
func (p *process) PluginToHost(network, addr string) (string, string, error) {
	return network, addr, nil
}

// HostToPlugin implements runner.AddrTranslator.
func (p *process) HostToPlugin(network, addr string) (string, string, error) {
	return network, addr, nil
}

var _ runner.Runner = (*process)(nil)
