package host_test

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/parselbox/parselbox/host"
)

// An execution reports while it runs: sbx.progress from Python, a bridge
// task's log and progress lines (redacted), and what the code prints, in
// the order it happened, and nothing after it ended.
func TestLiveProgressAndOutput(t *testing.T) {
	t.Parallel()
	sb, _ := newPluginSandbox(t)
	if g := sb.Prompt(); !strings.Contains(g, "sbx.progress(done, total=None, message=None)") {
		t.Errorf("the guide does not mention sbx.progress:\n%s", g)
	}
	var (
		mu     sync.Mutex
		events []string
		bridge []host.Progress
		values []float64 // every report's, in order
	)
	add := func(s string) {
		mu.Lock()
		events = append(events, s)
		mu.Unlock()
	}
	ctx := host.WithProgress(t.Context(), func(p host.Progress) {
		mu.Lock()
		values = append(values, p.Progress)
		mu.Unlock()
		if p.Tool != "" {
			mu.Lock()
			bridge = append(bridge, p)
			mu.Unlock()
			return
		}
		add(fmt.Sprintf("progress %g/%g %s", p.Progress, p.Total, p.Message))
	})
	ctx = host.WithOutput(ctx, func(stream, text string) { add(stream + ": " + text) })
	r, err := sb.Execute(ctx, `import time, sys
print("first line")
sbx.progress(1, 3, "one")
time.sleep(0.15)
leaked = await tp.leak.task()
time.sleep(0.15)
print("to stderr", file=sys.stderr)
sbx.progress(2, message="two")
sbx.progress(3, 3, "done")
print("last", end="")
"ok"`)
	if err != nil {
		t.Fatal(err)
	}
	if v := value(t, r); v != "ok" {
		t.Fatalf("result %v", v)
	}
	mu.Lock()
	got := slices.Clone(events)
	fromBridge := slices.Clone(bridge)
	rising := slices.Clone(values)
	mu.Unlock()
	// "two" comes within the rate limit of nothing (a bridge line passed
	// 150 ms before): it passes; "done" always passes.
	want := []string{"stdout: first line\n", "progress 1/3 one", "stderr: to stderr\n", "progress 2/0 two", "progress 3/3 done", "stdout: last"}
	if !slices.Equal(got, want) {
		t.Errorf("events:\n%q\nwant\n%q", got, want)
	}
	if len(fromBridge) == 0 {
		t.Fatal("no line of the bridge's task was reported")
	}
	// MCP wants each notification's progress above the last one's: the
	// bridge's lines count up from sbx.progress's 1 of 3, below its 2.
	for i := 1; i < len(rising); i++ {
		if rising[i] <= rising[i-1] {
			t.Errorf("progress values do not rise: %v", rising)
			break
		}
	}
	for _, p := range fromBridge {
		if p.Tool != "tp.leak" || !strings.HasPrefix(p.Message, "tp.leak: ") || p.Progress <= 1 || p.Progress >= 2 || p.Total != 3 {
			t.Errorf("bridge line %+v", p)
		}
		if strings.Contains(p.Message, configToken) || strings.Contains(p.Message, envKey) {
			t.Errorf("a secret reached the progress: %q", p.Message)
		}
	}
	if r.Stdout != "first line\nlast" || r.Stderr != "to stderr\n" {
		t.Errorf("stdout %q, stderr %q", r.Stdout, r.Stderr)
	}

	// Without the context's functions: nothing is reported, and a report
	// after the end goes nowhere.
	mu.Lock()
	events, bridge = nil, nil
	mu.Unlock()
	r = exec(t, sb, `print("quiet"); sbx.progress(1, 1, "x"); js("await sbx.progress(1, 1, 'x'); return 1")`)
	if value(t, r) != 1.0 || r.Stdout != "quiet\n" {
		t.Errorf("without a listener: %s, %q", r.Output, r.Stdout)
	}
	// In js(), a bad argument rejects the promise with the host's error.
	r = exec(t, sb, `js("try { await sbx.progress('many') } catch (e) { return String(e.message) }")`)
	if v, _ := value(t, r).(string); v != `ValueError: argument "done": expected number, got string` {
		t.Errorf("js(): sbx.progress('many'): %v", v)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(events)+len(bridge) != 0 {
		t.Errorf("reported without a listener: %q %v", events, bridge)
	}
}

// describe_tools = "signatures": the guide (help() in the sandbox too)
// shows the Python signatures of the tools the sandbox may call; a denied
// tool is absent.
func TestDescribeToolsInGuide(t *testing.T) {
	t.Parallel()
	sb := newSandbox(t, host.Config{
		Context:         map[string]any{"mission": &mission{Nav: &nav{}}},
		ContextPolicies: map[string]host.ToolPolicy{"mission": {Deny: []string{"fail"}}},
		DescribeTools:   host.DescribeSignatures,
	})
	sig := "class mission:"
	for name, guide := range map[string]string{"Prompt": sb.Prompt(), "sbx.help()": value(t, exec(t, sb, "sbx.help()")).(string)} {
		if !strings.Contains(guide, sig) || !strings.Contains(guide, "    def add(a: int, b: int) -> int") || strings.Contains(guide, "def fail") {
			t.Errorf("%s:\n%s", name, guide)
		}
	}
	if g := sb.GuideWithoutSignatures(); strings.Contains(g, sig) {
		t.Errorf("GuideWithoutSignatures:\n%s", g)
	}
}
