package sandbox

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
)

// fakeRunnerEnv makes the test binary a stand-in for the runner. Its
// value is the stand-in's part:
//   - "busy": it answers every execution with the result of 1+1 after 1 ms
//     of busy CPU, as Deno is busy running it, and every other request (the
//     bench's floor script's) the same way. With the same stand-in behind
//     both drivers, what separates an execution's latency from the floor's
//     is the host's own work (BenchmarkHostExec).
//   - "call": every execution makes one request to the host (as a tool call
//     from Python does) and answers with the host's reply
//     (TestServeReusesGoroutines, BenchmarkHostServe).
const fakeRunnerEnv = "PARSELBOX_FAKE_RUNNER"

// callParams are the params of the "call" stand-in's request, shaped as a
// tool call's: the host's handler decodes them.
const callParams = `{"name":"inv.search","args":{"query":"blue widgets","filters":{"price":{"min":1,"max":50},"tags":["a","b","c"],"in_stock":true},"page":{"size":20,"after":null}}}`

func init() {
	part := os.Getenv(fakeRunnerEnv)
	if part == "" {
		return
	}
	in := bufio.NewReader(os.Stdin)
	out := os.Stdout
	var key string
	for next := int64(1); ; next++ {
		line, err := in.ReadBytes('\n')
		if err != nil {
			os.Exit(0)
		}
		var m struct {
			ID     int64           `json:"id"`
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
		}
		if json.Unmarshal(line, &m) != nil {
			os.Exit(3)
		}
		if part == "busy" && m.Method != "init" {
			// Busy, as Deno running 1+1 is.
			for t0 := time.Now(); time.Since(t0) < time.Millisecond; {
			}
		}
		output := "2"
		switch {
		case m.Method == "init":
			var p initParams
			_ = json.Unmarshal(m.Params, &p)
			key = p.ChannelKey
			out.WriteString("\n" + key + `{"method":"ready","params":{"pyodide":"x","python":"y","snapshot":true,"boot_ms":1}}` + "\n")
			continue
		case m.Method == "exec" && part == "call":
			out.WriteString(key + `{"id":` + strconv.FormatInt(next, 10) + `,"method":"call","params":` + callParams + "}\n")
			reply, err := in.ReadBytes('\n')
			if err != nil {
				os.Exit(0)
			}
			var r struct {
				Result json.RawMessage `json:"result"`
			}
			if json.Unmarshal(reply, &r) != nil || len(r.Result) == 0 {
				os.Exit(4)
			}
			output = string(r.Result)
		case m.Method != "exec": // the floor's
			out.WriteString(`{"id":` + strconv.FormatInt(m.ID, 10) + `,"result":2}` + "\n")
			continue
		}
		out.WriteString("\n" + key + `{"id":` + strconv.FormatInt(m.ID, 10) + `,"result":{"output":` + output + `,"stdout":"","stderr":"","error":null,"files":[]}}` + "\n")
	}
}

// fakeRunner is a Supervisor of one stand-in runner process playing part
// (see fakeRunnerEnv), whose requests to the host h serves (nil: none).
func fakeRunner(tb testing.TB, part string, h Handler) *Supervisor {
	exe, err := os.Executable()
	if err != nil {
		tb.Fatal(err)
	}
	p, err := spawn(spawnSpec{
		args:    []string{exe},
		env:     []string{fakeRunnerEnv + "=" + part},
		log:     hclog.NewNullLogger(),
		handler: h,
		limits:  protocolLimits{maxMessage: DefaultMaxMessageBytes},
	})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { p.stop(time.Second) })
	if _, err := p.waitReady(tb.Context()); err != nil {
		tb.Fatal(err)
	}
	return &Supervisor{opts: Options{Grace: 5 * time.Second}, log: hclog.NewNullLogger(), proc: p}
}

// floorDriver drives a stand-in runner as the bench's floor driver
// (bench/floor.go) drives the floor script: write a line, read a line.
type floorDriver struct {
	stdin  io.WriteCloser
	out    *bufio.Reader
	lines  chan string // with a reader goroutine (handoff)
	nextID int
}

func newFloorDriver(b *testing.B, handoff bool) *floorDriver {
	exe, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	cmd := exec.Command(exe)
	cmd.Env = []string{fakeRunnerEnv + "=busy"}
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { stdin.Close(); cmd.Wait() })
	f := &floorDriver{stdin: stdin, out: bufio.NewReader(stdout)}
	if handoff {
		f.lines = make(chan string, 1)
		go func() {
			for {
				reply, err := f.out.ReadString('\n')
				if err != nil {
					close(f.lines)
					return
				}
				f.lines <- reply
			}
		}()
	}
	return f
}

func (f *floorDriver) exec() error {
	f.nextID++
	line, _ := json.Marshal(map[string]any{"id": f.nextID, "code": "1+1"})
	if _, err := f.stdin.Write(append(line, '\n')); err != nil {
		return err
	}
	var reply string
	if f.lines != nil {
		reply = <-f.lines
	} else {
		var err error
		if reply, err = f.out.ReadString('\n'); err != nil {
			return err
		}
	}
	var r struct {
		ID     int             `json:"id"`
		Result json.RawMessage `json:"result"`
	}
	if err := json.Unmarshal([]byte(reply), &r); err != nil || r.ID != f.nextID || string(r.Result) != "2" {
		return fmt.Errorf("floor: %q", reply)
	}
	return nil
}

// BenchmarkHostExec measures the host's side of one execution: Exec against
// a stand-in runner, paired with the bench's floor driver against the same
// stand-in, directly ("floor") and with its reads on a reader goroutine that
// hands each line over on a channel ("handoff", as process.readStdout
// does), in rounds of one of each in a random order. It reports each one's
// median latency and the medians of the paired differences.
//
//	go test ./host/sandbox -run '^$' -bench HostExec -benchtime 3000x
func BenchmarkHostExec(b *testing.B) {
	s := fakeRunner(b, "busy", nil)
	ctx := context.Background()
	floor, handoff := newFloorDriver(b, false), newFloorDriver(b, true)
	names := []string{"exec", "floor", "handoff"}
	runs := []func() error{
		func() error {
			r, err := s.Exec(ctx, "1+1", time.Minute)
			if err == nil && string(r.Output) != "2" {
				err = fmt.Errorf("exec: %+v", r)
			}
			return err
		},
		floor.exec, handoff.exec,
	}
	samples := make([][]float64, len(runs))
	for b.Loop() {
		for _, i := range rand.Perm(len(runs)) {
			t0 := time.Now()
			if err := runs[i](); err != nil {
				b.Fatal(err)
			}
			samples[i] = append(samples[i], float64(time.Since(t0).Nanoseconds())/1e3)
		}
	}
	for i := 1; i < len(samples); i++ {
		d := make([]float64, len(samples[0]))
		for j := range d {
			d[j] = samples[0][j] - samples[i][j]
		}
		slices.Sort(d)
		b.ReportMetric(d[len(d)/2], "exec-minus-"+names[i]+"-µs")
	}
	for i, ss := range samples {
		slices.Sort(ss)
		b.ReportMetric(ss[len(ss)/2], names[i]+"-p50-µs")
	}
}
