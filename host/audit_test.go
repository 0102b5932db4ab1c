package host_test

import (
	"bufio"
	"compress/gzip"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/parselbox/parselbox/host"
	"github.com/parselbox/parselbox/host/audit"
)

// fanOut runs four tasks at once, a call whose argument is the plugin's
// secret, and a call the policy refuses.
var fanOut = `import asyncio
rs = await asyncio.gather(*[tp.echo.task(str(i)) for i in range(4)])
tp.echo("` + configToken + `")
try:
    tp.files.label()
except PermissionError:
    pass
rs`

func auditSandbox(t *testing.T, cfg host.Config) *host.Sandbox {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	tp := host.BridgeConfig{Plugin: exe, Config: map[string]any{"marker": filepath.Join(t.TempDir(), "m"), "label": "x", "token": configToken}}
	tp.Deny = []string{"files.*"}
	cfg.Bridges = map[string]host.BridgeConfig{"tp": tp}
	return newSandbox(t, cfg)
}

func readLines(t *testing.T, path string) (execs []audit.Execution, calls []audit.ToolCall, raw string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(strings.NewReader(string(b)))
	for sc.Scan() {
		var kind struct{ Type string }
		if err := json.Unmarshal(sc.Bytes(), &kind); err != nil {
			t.Fatalf("not a JSON line: %s", sc.Text())
		}
		switch kind.Type {
		case "execution":
			var e audit.Execution
			json.Unmarshal(sc.Bytes(), &e)
			execs = append(execs, e)
		case "tool_call":
			var c audit.ToolCall
			json.Unmarshal(sc.Bytes(), &c)
			calls = append(calls, c)
		default:
			t.Errorf("line of unknown type: %s", sc.Text())
		}
	}
	return execs, calls, string(b)
}

// The audit trail of one execution with a fan-out of tasks, read back from
// the JSON-lines file and from the spans: every call is under the
// execution, with its bridge, tool, task, outcome and redacted arguments.
func TestAuditTrail(t *testing.T) {
	t.Parallel()
	logPath := filepath.Join(t.TempDir(), "audit.jsonl")
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	sb := auditSandbox(t, host.Config{AuditLog: logPath, TracerProvider: tp})

	r := exec(t, sb, fanOut)
	if diff := cmp.Diff([]any{"0", "1", "2", "3"}, value(t, r)); diff != "" {
		t.Fatalf("tasks (-want +got):\n%s", diff)
	}
	exec(t, sb, "sbx.search('echo')") // discovery: not recorded
	failed, err := sb.Execute(host.WithSession(t.Context(), "mcp-session-1"), "tp.echo(text=5)")
	if err != nil {
		t.Fatal(err)
	}
	if failed.Error == nil || r.ExecutionID == "" || failed.ExecutionID == r.ExecutionID {
		t.Fatalf("execution ids: %q, %q", r.ExecutionID, failed.ExecutionID)
	}

	execs, calls, raw := readLines(t, logPath)
	if strings.Contains(raw, configToken) {
		t.Errorf("the audit log holds the bridge's secret:\n%s", raw)
	}
	if len(execs) != 3 {
		t.Fatalf("execution lines: %+v", execs)
	}
	first := execs[0]
	if first.ExecutionID != r.ExecutionID || first.Outcome != "ok" || first.ToolCalls != 6 {
		t.Errorf("first execution: %+v", first)
	}
	if e := execs[2]; e.ExecutionID != failed.ExecutionID || e.Session != "mcp-session-1" || e.Outcome != "error" || e.ErrorType != "ValueError" || e.ToolCalls != 1 {
		t.Errorf("failed execution: %+v", e)
	}
	if c := calls[len(calls)-1]; c.ExecutionID != failed.ExecutionID || c.Session != "mcp-session-1" || c.Outcome != "error" || c.ErrorType != "ValueError" {
		t.Errorf("failed call: %+v", c)
	}
	type row struct{ Tool, Task, Outcome, ErrorType, Args string }
	var got []row
	var seqs []int
	for _, c := range calls {
		if c.ExecutionID != first.ExecutionID {
			continue
		}
		if c.Bridge != "tp" || c.DurationMS < 0 || c.Time == "" {
			t.Errorf("call line: %+v", c)
		}
		task := ""
		if c.TaskID != "" {
			task = "task"
		}
		got = append(got, row{c.Tool, task, c.Outcome, c.ErrorType, string(c.Arguments)})
		seqs = append(seqs, c.Seq)
	}
	slices.SortFunc(got, func(a, b row) int { return strings.Compare(a.Args+a.Tool, b.Args+b.Tool) })
	want := []row{
		{"tp.files.label", "", "refused", "PermissionError", ""},
		{"tp.echo", "task", "ok", "", `{"text":"0"}`},
		{"tp.echo", "task", "ok", "", `{"text":"1"}`},
		{"tp.echo", "task", "ok", "", `{"text":"2"}`},
		{"tp.echo", "task", "ok", "", `{"text":"3"}`},
		{"tp.echo", "", "ok", "", `{"text":"[REDACTED]"}`},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the execution's calls (-want +got):\n%s", diff)
	}
	slices.Sort(seqs)
	if diff := cmp.Diff([]int{1, 2, 3, 4, 5, 6}, seqs); diff != "" {
		t.Errorf("seq (-want +got):\n%s", diff)
	}

	// The spans: the execution is the parent of its six calls, in one trace.
	var root sdktrace.ReadOnlySpan
	children := map[string]int{}
	for _, s := range spans.Ended() {
		if s.Name() == "parselbox.execute" && attr(s, "parselbox.execution_id") == first.ExecutionID {
			root = s
		}
	}
	if root == nil {
		t.Fatalf("no span for execution %s", first.ExecutionID)
	}
	if root.SpanContext().TraceID().String() != first.TraceID {
		t.Errorf("trace id: span %s, line %s", root.SpanContext().TraceID(), first.TraceID)
	}
	for _, s := range spans.Ended() {
		if s.Parent().SpanID() == root.SpanContext().SpanID() {
			if s.SpanContext().TraceID() != root.SpanContext().TraceID() || attr(s, "parselbox.execution_id") != first.ExecutionID {
				t.Errorf("child span %s is not in the execution's trace", s.Name())
			}
			children[s.Name()+" "+attr(s, "parselbox.outcome")]++
		}
	}
	if diff := cmp.Diff(map[string]int{"tp.echo ok": 5, "tp.files.label refused": 1}, children); diff != "" {
		t.Errorf("child spans (-want +got):\n%s", diff)
	}
}

func attr(s sdktrace.ReadOnlySpan, key string) string {
	for _, kv := range s.Attributes() {
		if string(kv.Key) == key {
			return kv.Value.Emit()
		}
	}
	return ""
}

// With otlp_endpoint, the spans reach a real OTLP/HTTP receiver (on
// loopback) by the time the sandbox is closed.
func TestAuditOTLP(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var got []*tracepb.Span
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/traces" {
			http.NotFound(w, r)
			return
		}
		var body io.Reader = r.Body
		if r.Header.Get("Content-Encoding") == "gzip" {
			zr, err := gzip.NewReader(r.Body)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			body = zr
		}
		b, _ := io.ReadAll(body)
		var req collectortrace.ExportTraceServiceRequest
		if err := proto.Unmarshal(b, &req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		mu.Lock()
		for _, rs := range req.GetResourceSpans() {
			for _, ss := range rs.GetScopeSpans() {
				got = append(got, ss.GetSpans()...)
			}
		}
		mu.Unlock()
		out, _ := proto.Marshal(&collectortrace.ExportTraceServiceResponse{})
		w.Header().Set("Content-Type", "application/x-protobuf")
		w.Write(out)
	}))
	t.Cleanup(srv.Close)
	sb := auditSandbox(t, host.Config{OTLPEndpoint: srv.URL})
	r := exec(t, sb, fanOut)
	if r.Error != nil {
		t.Fatalf("%+v", r.Error)
	}
	if err := sb.Close(); err != nil { // flushes the spans
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	var root *tracepb.Span
	for _, s := range got {
		if s.GetName() == "parselbox.execute" {
			root = s
		}
	}
	if root == nil {
		t.Fatalf("no execution span among %d", len(got))
	}
	n := 0
	for _, s := range got {
		if string(s.GetParentSpanId()) == string(root.GetSpanId()) && string(s.GetTraceId()) == string(root.GetTraceId()) {
			n++
		}
	}
	if n != 6 {
		t.Errorf("the execution span has %d children, want 6", n)
	}
}
