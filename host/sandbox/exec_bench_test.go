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

// fakeRunnerEnv makes the test binary a stand-in for the runner (and for
// the bench's floor script): it answers every request with the result of
// 1+1 after 1 ms of busy CPU, as Deno is busy running it. With the same
// stand-in behind both drivers, what separates an execution's latency from
// the floor's is the host's own work (BenchmarkHostExec).
const fakeRunnerEnv = "PARSELBOX_FAKE_RUNNER"

func init() {
	if os.Getenv(fakeRunnerEnv) == "" {
		return
	}
	in := bufio.NewReader(os.Stdin)
	out := os.Stdout
	var key string
	for {
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
		if m.Method != "init" {
			// Busy, as Deno running 1+1 is.
			for t0 := time.Now(); time.Since(t0) < time.Millisecond; {
			}
		}
		switch m.Method {
		case "init":
			var p initParams
			_ = json.Unmarshal(m.Params, &p)
			key = p.ChannelKey
			out.WriteString("\n" + key + `{"method":"ready","params":{"pyodide":"x","python":"y","snapshot":true,"boot_ms":1}}` + "\n")
		case "exec":
			out.WriteString("\n" + key + `{"id":` + strconv.FormatInt(m.ID, 10) + `,"result":{"output":2,"stdout":"","stderr":"","error":null,"files":[]}}` + "\n")
		default: // the floor's
			out.WriteString(`{"id":` + strconv.FormatInt(m.ID, 10) + `,"result":2}` + "\n")
		}
	}
}

// fakeRunner is a Supervisor of one stand-in runner process.
func fakeRunner(b *testing.B) *Supervisor {
	exe, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	p, err := spawn(spawnSpec{
		args:   []string{exe},
		env:    []string{fakeRunnerEnv + "=1"},
		log:    hclog.NewNullLogger(),
		limits: protocolLimits{maxMessage: DefaultMaxMessageBytes},
	})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := p.waitReady(b.Context()); err != nil {
		b.Fatal(err)
	}
	s := &Supervisor{opts: Options{Grace: 5 * time.Second}, log: hclog.NewNullLogger(), proc: p}
	b.Cleanup(func() { p.stop(time.Second) })
	return s
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
	cmd.Env = []string{fakeRunnerEnv + "=1"}
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
	s := fakeRunner(b)
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
