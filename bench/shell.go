package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/parselbox/parselbox/host/sandbox"
)

// shellTargets are the lines of bash() and WASI: an execution of
// bash("echo hi"), and of a WASI hello-world command, each within twice an
// execution of 1+1.
var shellTargets = []target{
	{"bash_echo_p50_ms", "exec_p50_ms", "≤ 2 × exec", func(r results) bool {
		return r.v("bash_echo_p50_ms") <= 2*r.v("exec_p50_ms")
	}},
	{"wasi_hello_p50_ms", "exec_p50_ms", "≤ 2 × exec", func(r results) bool {
		return r.v("wasi_hello_p50_ms") <= 2*r.v("exec_p50_ms")
	}},
}

// runShell measures, in each run, executions of bash("echo hi") and of a
// WASI command (tests/fixtures/wasm/hello.wat, assembled by the pinned
// wabt that `make fixtures` installs), on a fresh snapshot-booted sandbox.
// Every answer is checked. With -only shell, executions of 1+1 interleaved
// with them give exec_p50_ms.
func (b *bench) runShell(ctx context.Context) error {
	wasm, err := assemble("hello")
	if err != nil {
		return err
	}
	for run := range b.runs {
		fmt.Printf("bash() and WASI, run %d of %d ...\n", run+1, b.runs)
		ws, err := os.MkdirTemp(b.cacheDir, "ws-")
		if err == nil {
			err = os.MkdirAll(filepath.Join(ws, "bin"), 0o755)
		}
		if err == nil {
			err = os.WriteFile(filepath.Join(ws, "bin", "hello.wasm"), wasm, 0o644)
		}
		if err != nil {
			return err
		}
		sb, err := sandbox.Start(ctx, sandbox.Options{Runtime: b.rt, CacheDir: b.cacheDir, Workspace: ws})
		if err != nil {
			return err
		}
		if r, err := sb.Exec(ctx, "from _parselbox.wasm import load_wasm; hello = load_wasm('bin/hello.wasm')", time.Minute); err != nil || r.Error != nil {
			sb.Close()
			return fmt.Errorf("loading hello.wasm: %v %+v", err, r)
		}
		var bash, wasi, plain []float64
		for i := range b.execs + 20 {
			t0 := time.Now()
			r, err := sb.Exec(ctx, "1+1", time.Minute)
			d0 := time.Since(t0)
			if err != nil || r.Error != nil || string(r.Output) != "2" {
				sb.Close()
				return fmt.Errorf("exec 1+1: %s %v %+v", r.Output, err, r.Error)
			}
			t0 = time.Now()
			r, err = sb.Exec(ctx, `bash("echo hi")`, time.Minute)
			d1 := time.Since(t0)
			if err != nil || r.Error != nil || string(r.Output) != `"hi\n"` {
				sb.Close()
				return fmt.Errorf("bash echo: %s %v %+v", r.Output, err, r.Error)
			}
			t0 = time.Now()
			r, err = sb.Exec(ctx, `hello()["exit"]`, time.Minute)
			d2 := time.Since(t0)
			if err != nil || r.Error != nil || string(r.Output) != "0" {
				sb.Close()
				return fmt.Errorf("wasi hello: %s %v %+v", r.Output, err, r.Error)
			}
			if i >= 20 { // after a warm-up
				bash, wasi, plain = append(bash, ms(d1)), append(wasi, ms(d2)), append(plain, ms(d0))
			}
		}
		sb.Close()
		b.add("bash_echo_p50_ms", percentile(bash, 50))
		b.add("wasi_hello_p50_ms", percentile(wasi, 50))
		if !b.measures("exec") { // the baseline, measured alongside
			b.add("exec_p50_ms", percentile(plain, 50))
		}
	}
	return nil
}

// assemble builds tests/fixtures/wasm/<name>.wat with the pinned wabt.
func assemble(name string) ([]byte, error) {
	dir := filepath.Join("tests", "fixtures", "wasm")
	wat2wasm := filepath.Join(dir, "node_modules", "wabt", "bin", "wat2wasm")
	if _, err := os.Stat(wat2wasm); err != nil {
		return nil, fmt.Errorf("no WebAssembly assembler (run make fixtures): %w", err)
	}
	tmp, err := os.MkdirTemp("", "parselbox-bench-wasm-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	out := filepath.Join(tmp, name+".wasm")
	if b, err := exec.Command("node", wat2wasm, filepath.Join(dir, name+".wat"), "-o", out).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("wat2wasm %s.wat: %v: %s", name, err, b)
	}
	return os.ReadFile(out)
}
