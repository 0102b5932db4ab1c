package bridges

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"sync"
	"syscall"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin/runner"
)

// process runs a plugin binary for go-plugin (it is the runner.Runner of a
// plugin.ClientConfig.RunnerFunc). Compared with go-plugin's own runner for a
// ClientConfig.Cmd:
//   - the plugin gets exactly the environment it is given (go-plugin's
//     variables, among them PLUGIN_UNIX_SOCKET_DIR naming the private socket
//     directory go-plugin made for it, plus what the bridge's config names);
//   - its stdin is /dev/null, not the host's stdin (which may carry MCP);
//   - it runs in its own process group with Pdeathsig (sysProcAttr), and
//     Kill kills the whole group.
type process struct {
	path   string
	dir    string // working directory; "" is the host's
	logger hclog.Logger

	mu     sync.Mutex
	cmd    *exec.Cmd
	stdout io.ReadCloser
	stderr io.ReadCloser
	pid    int           // 0 until started
	reaped bool          // Wait has collected the exit status: pid may be reused
	exited chan struct{} // closed once the process has exited
	state  string        // how it exited ("signal: killed", "exit status 2")
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
	cmd.SysProcAttr = sysProcAttr()
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
	p.pid = p.cmd.Process.Pid
	p.logger.Debug("plugin process started", logKeyPath, p.path, logKeyPid, p.pid)
	return nil
}

// Wait implements runner.Runner. Once the plugin has exited, and before its
// pid can be reused, it kills what is left of the plugin's process group.
func (p *process) Wait(context.Context) error {
	waitExited(p.pid)
	p.mu.Lock()
	defer p.mu.Unlock()
	if groupKillAfterExit {
		_ = syscall.Kill(-p.pid, syscall.SIGKILL)
	}
	err := p.cmd.Wait()
	p.reaped = true
	if p.cmd.ProcessState != nil {
		p.state = p.cmd.ProcessState.String()
	}
	close(p.exited)
	return err
}

// Kill implements runner.Runner: SIGKILL to the plugin's process group.
func (p *process) Kill(context.Context) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.pid == 0 || p.reaped {
		return nil
	}
	err := syscall.Kill(-p.pid, syscall.SIGKILL)
	if errors.Is(err, syscall.ESRCH) {
		return nil
	}
	return err
}

// exitState returns how the process exited, once it has.
func (p *process) exitState() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.state
}

// Stdout implements runner.Runner.
func (p *process) Stdout() io.ReadCloser { return p.stdout }

// Stderr implements runner.Runner.
func (p *process) Stderr() io.ReadCloser { return p.stderr }

// Name implements runner.Runner.
func (p *process) Name() string { return p.path }

// ID implements runner.Runner.
func (p *process) ID() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.pid == 0 {
		return ""
	}
	return strconv.Itoa(p.pid)
}

// Pid returns the process id, 0 before Start.
func (p *process) Pid() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.pid
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
