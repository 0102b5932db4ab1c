package audit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/parselbox/parselbox/host/router"
)

// Options say where the trail goes. Both may be set; neither makes a Trail
// that records nothing.
type Options struct {
	// Path is the JSON-lines file records are appended to (created 0600).
	Path string
	// OTLPEndpoint is an OTLP/HTTP traces endpoint URL
	// ("http://127.0.0.1:4318", or with its path "/v1/traces").
	OTLPEndpoint string
	// TracerProvider, if set, is used instead of an OTLP exporter (Go API:
	// an application's own provider, or a test's).
	TracerProvider trace.TracerProvider
}

// Trail records executions and tool calls (it is a router.Recorder).
type Trail struct {
	mu     sync.Mutex
	file   *os.File
	enc    *json.Encoder
	tracer trace.Tracer
	owned  *sdktrace.TracerProvider // shut down on Close
}

// Open starts a trail: it opens the file and sets up the exporter.
func Open(ctx context.Context, opts Options) (*Trail, error) {
	t := &Trail{}
	if opts.Path != "" {
		f, err := os.OpenFile(opts.Path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			return nil, fmt.Errorf("audit_log: %w", err)
		}
		t.file, t.enc = f, json.NewEncoder(f)
		t.enc.SetEscapeHTML(false)
	}
	tp := opts.TracerProvider
	if tp == nil && opts.OTLPEndpoint != "" {
		exp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(endpointURL(opts.OTLPEndpoint)))
		if err != nil {
			t.Close()
			return nil, fmt.Errorf("otlp_endpoint: %w", err)
		}
		t.owned = sdktrace.NewTracerProvider(
			sdktrace.WithBatcher(exp),
			sdktrace.WithResource(resource.NewSchemaless(semconv.ServiceName("parselbox"))),
		)
		tp = t.owned
	}
	if tp != nil {
		t.tracer = tp.Tracer("github.com/parselbox/parselbox/host/audit")
	}
	return t, nil
}

// endpointURL adds the OTLP traces path to a bare endpoint.
func endpointURL(u string) string {
	if strings.HasSuffix(u, "/v1/traces") {
		return u
	}
	return strings.TrimRight(u, "/") + "/v1/traces"
}

// Close flushes the spans and closes the file.
func (t *Trail) Close() error {
	var errs []error
	if t.owned != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		errs = append(errs, t.owned.Shutdown(ctx))
		cancel()
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.file != nil {
		errs = append(errs, t.file.Close())
		t.file, t.enc = nil, nil
	}
	return errors.Join(errs...)
}

// Execution is an execution's line in the file.
type Execution struct {
	Type        string  `json:"type"` // "execution"
	Time        string  `json:"time"` // when it began, RFC 3339 with nanoseconds
	ExecutionID string  `json:"execution_id"`
	Session     string  `json:"session,omitempty"`
	DurationMS  float64 `json:"duration_ms"`
	Outcome     string  `json:"outcome"`
	ErrorType   string  `json:"error_type,omitempty"`
	Error       string  `json:"error,omitempty"`
	ToolCalls   int     `json:"tool_calls"`
	TraceID     string  `json:"trace_id,omitempty"`
}

// ToolCall is a tool call's line in the file.
type ToolCall struct {
	Type        string          `json:"type"` // "tool_call"
	Time        string          `json:"time"` // when it began
	ExecutionID string          `json:"execution_id,omitempty"`
	Session     string          `json:"session,omitempty"`
	Seq         int             `json:"seq,omitempty"`
	Bridge      string          `json:"bridge"`
	Tool        string          `json:"tool"`
	TaskID      string          `json:"task_id,omitempty"`
	DurationMS  float64         `json:"duration_ms"`
	Outcome     string          `json:"outcome"`
	ErrorType   string          `json:"error_type,omitempty"`
	Error       string          `json:"error,omitempty"`
	Arguments   json.RawMessage `json:"arguments,omitempty"`
	TraceID     string          `json:"trace_id,omitempty"`
	SpanID      string          `json:"span_id,omitempty"`
}

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

type spanKey struct{}

// BeginExecution implements router.Recorder: the execution's span starts.
func (t *Trail) BeginExecution(ctx context.Context, e *router.Execution) context.Context {
	if t.tracer == nil {
		return ctx
	}
	ctx, span := t.tracer.Start(ctx, "parselbox.execute", trace.WithTimestamp(e.Start),
		trace.WithAttributes(attribute.String("parselbox.execution_id", e.ID), attribute.String("parselbox.session", e.Session)))
	return context.WithValue(ctx, spanKey{}, span)
}

// ToolCall implements router.Recorder.
func (t *Trail) ToolCall(ctx context.Context, c *router.CallRecord) {
	line := &ToolCall{
		Type: "tool_call", Time: stamp(c.Start), ExecutionID: c.ExecutionID, Session: c.Session, Seq: c.Seq,
		Bridge: c.Bridge, Tool: c.Tool, TaskID: c.TaskID, DurationMS: ms(c.Duration),
		Outcome: c.Outcome, ErrorType: c.ErrorType, Error: c.Error, Arguments: c.Arguments,
	}
	if t.tracer != nil {
		_, span := t.tracer.Start(ctx, c.Tool, trace.WithTimestamp(c.Start), trace.WithAttributes(
			attribute.String("parselbox.execution_id", c.ExecutionID),
			attribute.String("parselbox.bridge", c.Bridge),
			attribute.String("parselbox.tool", c.Tool),
			attribute.String("parselbox.task_id", c.TaskID),
			attribute.Int("parselbox.seq", c.Seq),
			attribute.String("parselbox.outcome", c.Outcome),
			attribute.String("parselbox.arguments", string(c.Arguments)),
		))
		if c.Outcome != "ok" {
			span.SetStatus(codes.Error, c.ErrorType+": "+c.Error)
		}
		span.End(trace.WithTimestamp(c.Start.Add(c.Duration)))
		sc := span.SpanContext()
		line.TraceID, line.SpanID = sc.TraceID().String(), sc.SpanID().String()
	}
	t.write(line)
}

// EndExecution implements router.Recorder: the execution's line is
// written and its span ends.
func (t *Trail) EndExecution(ctx context.Context, e *router.ExecutionRecord) {
	line := &Execution{
		Type: "execution", Time: stamp(e.Start), ExecutionID: e.ExecutionID, Session: e.Session,
		DurationMS: ms(e.Duration), Outcome: e.Outcome, ErrorType: e.ErrorType, Error: e.Error, ToolCalls: e.ToolCalls,
	}
	if span, ok := ctx.Value(spanKey{}).(trace.Span); ok {
		span.SetAttributes(attribute.String("parselbox.outcome", e.Outcome), attribute.Int("parselbox.tool_calls", e.ToolCalls))
		if e.Outcome != "ok" {
			span.SetStatus(codes.Error, e.ErrorType+": "+e.Error)
		}
		span.End(trace.WithTimestamp(e.Start.Add(e.Duration)))
		line.TraceID = span.SpanContext().TraceID().String()
	}
	t.write(line)
}

func (t *Trail) write(v any) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.enc != nil {
		_ = t.enc.Encode(v) // one line; a full disk loses records, not the call
	}
}

var _ router.Recorder = (*Trail)(nil)
