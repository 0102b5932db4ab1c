package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
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
let buf = "";
for await (const chunk of Deno.stdin.readable) {
  buf += new TextDecoder().decode(chunk);
  let i;
  while ((i = buf.indexOf("\n")) >= 0) {
    const msg = JSON.parse(buf.slice(0, i)); buf = buf.slice(i + 1);
    const r = await py.runPythonAsync(msg.code);
    out(JSON.stringify({ id: msg.id, result: r }));
  }
}
`

// floor runs the bare script.
type floor struct {
	rt   *sandbox.Runtime
	dir  string
	snap string
}

func newFloor(rt *sandbox.Runtime) (*floor, error) {
	dir, err := os.MkdirTemp("", "parselbox-floor-")
	if err != nil {
		return nil, err
	}
	p := rt.Pyodide
	src := fmt.Sprintf(floorScript, "file://"+filepath.Join(p, "pyodide.mjs"), "file://"+filepath.Join(p, "pyodide.asm.mjs"), p+"/")
	if err := os.WriteFile(filepath.Join(dir, "floor.mjs"), []byte(src), 0o600); err != nil {
		return nil, err
	}
	f := &floor{rt: rt, dir: dir, snap: filepath.Join(dir, "floor.snap")}
	// Its own snapshot, made the same way ours is.
	cmd := f.cmd("make")
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("making the floor's snapshot: %w", err)
	}
	return f, nil
}

func (f *floor) close() { os.RemoveAll(f.dir) }

func (f *floor) cmd(mode string) *exec.Cmd {
	p := f.rt.Pyodide
	read := filepath.Join(p, "pyodide.asm.wasm") + "," + filepath.Join(p, "python_stdlib.zip") + "," +
		filepath.Join(p, "pyodide-lock.json") + "," + f.dir
	// The one V8 flag of the sandbox's that changes how fast Python runs
	// (host/sandbox, denoArgs): without it, V8 recompiles Pyodide in the
	// background after every execution, and the floor would be slower
	// than a bare Deno + Pyodide run as well as it can be.
	cmd := exec.Command(f.rt.Deno, "run", "--no-prompt", "--no-config", "--no-lock", "--no-remote", "--no-check",
		"--v8-flags=--no-wasm-deopt",
		"--allow-read="+read, "--allow-write="+f.snap, filepath.Join(f.dir, "floor.mjs"), mode, f.snap)
	cmd.Env = []string{"DENO_DIR=" + filepath.Join(f.dir, "deno"), "NO_COLOR=1", "DENO_NO_UPDATE_CHECK=1"}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	return cmd
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
