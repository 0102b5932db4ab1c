package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/parselbox/parselbox/host/sandbox"
)

// floorScript is a bare Deno + Pyodide program with no Parselbox code: it
// boots Pyodide (from its own memory snapshot when given one), then runs
// each line of stdin as Python and answers with one line of JSON. It is the
// floor our sandbox is measured against.
const floorScript = `
import { loadPyodide } from %q;
import createPyodideModule from %q;
const [mode, snap] = Deno.args;
const opts = { indexURL: %q, createPyodideModule };
if (mode === "make") opts._makeSnapshot = true;
if (mode === "load") opts._loadSnapshot = Deno.readFileSync(snap);
const py = await loadPyodide(opts);
if (mode === "make") { Deno.writeFileSync(snap, py.makeMemorySnapshot()); Deno.exit(0); }
const enc = new TextEncoder();
const out = (s) => { const b = enc.encode(s + "\n"); let o = 0; while (o < b.length) o += Deno.stdout.writeSync(b.subarray(o)); };
out("ready");
const dec = new TextDecoder();
let buf = "";
for await (const chunk of Deno.stdin.readable) {
  buf += dec.decode(chunk, { stream: true });
  let i;
  while ((i = buf.indexOf("\n")) >= 0) {
    const msg = JSON.parse(buf.slice(0, i)); buf = buf.slice(i + 1);
    const r = await py.runPythonAsync(msg.code);
    out(JSON.stringify({ id: msg.id, result: r }));
  }
}
`

// floor runs the bare script, as the sandbox runs its runner: with the
// same V8 flags and environment (newFloor reads them from a running
// sandbox), and its V8 helper threads at the same priority (copyNice).
type floor struct {
	rt   *sandbox.Runtime
	dir  string
	snap string
	// v8Flags and env are the sandbox's (its --v8-flags, its environment
	// without DENO_DIR).
	v8Flags string
	env     []string
}

// newFloor prepares the floor with the V8 flags and the environment of
// the running sandbox process like (its PID), so that the two differ only
// in the code they run: a V8 flag (--no-wasm-deopt: without it V8
// recompiles Pyodide after every execution) or a malloc setting of the
// sandbox's would otherwise count as our machinery, for or against it.
func newFloor(rt *sandbox.Runtime, like int) (*floor, error) {
	flags, env, err := denoSettings(like)
	if err != nil {
		return nil, fmt.Errorf("reading the sandbox's Deno settings: %w", err)
	}
	dir, err := os.MkdirTemp("", "parselbox-floor-")
	if err != nil {
		return nil, err
	}
	p := rt.Pyodide
	src := fmt.Sprintf(floorScript, "file://"+filepath.Join(p, "pyodide.mjs"), "file://"+filepath.Join(p, "pyodide.asm.mjs"), p+"/")
	if err := os.WriteFile(filepath.Join(dir, "floor.mjs"), []byte(src), 0o600); err != nil {
		return nil, err
	}
	f := &floor{rt: rt, dir: dir, snap: filepath.Join(dir, "floor.snap"), v8Flags: flags, env: env}
	// Its own snapshot, made the same way ours is.
	cmd := f.cmd("make")
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("making the floor's snapshot: %w", err)
	}
	return f, nil
}

// denoSettings are the --v8-flags argument and the environment (but
// DENO_DIR) of Deno process pid, read from /proc.
func denoSettings(pid int) (v8Flags string, env []string, err error) {
	proc := filepath.Join("/proc", strconv.Itoa(pid))
	cmdline, err := os.ReadFile(filepath.Join(proc, "cmdline"))
	if err != nil {
		return "", nil, err
	}
	for _, a := range strings.Split(string(cmdline), "\x00") {
		if strings.HasPrefix(a, "--v8-flags=") {
			v8Flags = a
		}
	}
	if v8Flags == "" {
		return "", nil, fmt.Errorf("process %d has no --v8-flags", pid)
	}
	environ, err := os.ReadFile(filepath.Join(proc, "environ"))
	if err != nil {
		return "", nil, err
	}
	for _, kv := range strings.Split(string(environ), "\x00") {
		if kv != "" && !strings.HasPrefix(kv, "DENO_DIR=") {
			env = append(env, kv)
		}
	}
	return v8Flags, env, nil
}

func (f *floor) close() { os.RemoveAll(f.dir) }

func (f *floor) cmd(mode string) *exec.Cmd {
	p := f.rt.Pyodide
	read := filepath.Join(p, "pyodide.asm.wasm") + "," + filepath.Join(p, "python_stdlib.zip") + "," +
		filepath.Join(p, "pyodide-lock.json") + "," + f.dir
	cmd := exec.Command(f.rt.Deno, "run", "--no-prompt", "--no-config", "--no-lock", "--no-remote", "--no-check",
		f.v8Flags, "--allow-read="+read, "--allow-write="+f.snap, filepath.Join(f.dir, "floor.mjs"), mode, f.snap)
	cmd.Env = append([]string{"DENO_DIR=" + filepath.Join(f.dir, "deno")}, f.env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	return cmd
}

// copyNice gives each thread of process to the nice value of the threads
// of process from that have its name (what the kernel keeps of it): the
// sandbox lowers the priority of V8's helper threads, which compile and
// collect garbage in the background, and the floor's get the same.
func copyNice(from, to int) error {
	nice := map[string]int{}
	if err := eachThread(from, func(_ int, name string, n int) { nice[name] = n }); err != nil {
		return err
	}
	var errs []error
	err := eachThread(to, func(tid int, name string, n int) {
		if want, ok := nice[name]; ok && want != n {
			errs = append(errs, syscall.Setpriority(syscall.PRIO_PROCESS, tid, want))
		}
	})
	return errors.Join(append(errs, err)...)
}

// eachThread calls fn with the id, name and nice value of each thread of
// process pid.
func eachThread(pid int, fn func(tid int, name string, nice int)) error {
	dir := filepath.Join("/proc", strconv.Itoa(pid), "task")
	tasks, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, t := range tasks {
		tid, err := strconv.Atoi(t.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, t.Name(), "stat"))
		if err != nil {
			continue // the thread ended
		}
		// "tid (name) state ...": nice is the 17th field after the name.
		open, end := bytes.IndexByte(b, '('), bytes.LastIndexByte(b, ')')
		f := strings.Fields(string(b[end+1:]))
		if open < 0 || len(f) < 17 {
			return fmt.Errorf("%s/%s/stat: unexpected format", dir, t.Name())
		}
		nice, err := strconv.Atoi(f[16])
		if err != nil {
			return err
		}
		fn(tid, string(b[open+1:end]), nice)
	}
	return nil
}

// floorProc is a running floor process.
type floorProc struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	out    *bufio.Reader
	nextID int
}

// start boots the floor from its snapshot and returns when it is ready,
// with the time from spawn to ready.
func (f *floor) start() (*floorProc, time.Duration, error) {
	cmd := f.cmd("load")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, 0, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, 0, err
	}
	began := time.Now()
	if err := cmd.Start(); err != nil {
		return nil, 0, err
	}
	p := &floorProc{cmd: cmd, stdin: stdin, out: bufio.NewReader(stdout)}
	line, err := p.out.ReadString('\n')
	if err != nil || line != "ready\n" {
		p.close()
		return nil, 0, fmt.Errorf("floor did not start: %q %v", line, err)
	}
	return p, time.Since(began), nil
}

// exec runs code, waits for its answer and checks that its result is the
// JSON want.
func (p *floorProc) exec(code, want string) error {
	p.nextID++
	b, _ := json.Marshal(map[string]any{"id": p.nextID, "code": code})
	if _, err := p.stdin.Write(append(b, '\n')); err != nil {
		return err
	}
	line, err := p.out.ReadString('\n')
	if err != nil {
		return err
	}
	var r struct {
		ID     int             `json:"id"`
		Result json.RawMessage `json:"result"`
	}
	if err := json.Unmarshal([]byte(line), &r); err != nil || r.ID != p.nextID || string(r.Result) != want {
		return fmt.Errorf("floor: %s = %q, want %s", code, line, want)
	}
	return nil
}

func (p *floorProc) pid() int { return p.cmd.Process.Pid }

func (p *floorProc) close() {
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	_ = p.cmd.Wait()
}
