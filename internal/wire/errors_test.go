package wire

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/parselbox/parselbox/internal/protocol"
	bridgev1 "github.com/parselbox/parselbox/proto/parselbox/bridge/v1"
)

// errorSample is an error a bridge returns, and the error the host gets
// back for it.
type errorSample struct {
	err, want error
}

// errorSamples has an error of every failed outcome of a call, and a ToolError
// of every code of protocol.Codes.
func errorSamples() []errorSample {
	same := func(err error) errorSample { return errorSample{err, err} }
	samples := []errorSample{
		same(&protocol.DeclineError{Reason: "this MCP server is this very Parselbox"}),
		same(&protocol.ConfigError{Key: "servers[2].url", Message: "expected a string, got number"}),
		same(&protocol.ConfigError{Message: "expected an object, got a list"}),
		// Only the typed error crosses, not what wraps it.
		{fmt.Errorf("configuring: %w", &protocol.ConfigError{Key: "k", Message: "m"}), &protocol.ConfigError{Key: "k", Message: "m"}},
		{fmt.Errorf("declining: %w", &protocol.DeclineError{Reason: "r"}), &protocol.DeclineError{Reason: "r"}},
		// Any other error is a ToolError (protocol.AsToolError).
		{errors.New("plain"), &protocol.ToolError{Code: protocol.CodeInternal, Message: "plain"}},
		{fmt.Errorf("waiting: %w", context.DeadlineExceeded), &protocol.ToolError{Code: protocol.CodeTimeout, Message: "waiting: context deadline exceeded"}},
		same(&protocol.ToolError{Code: protocol.CodeInternal, Message: "not valid UTF-8: \uFFFD"}),
	}
	for _, ci := range protocol.Codes {
		samples = append(samples, same(protocol.Errorf(ci.Code, "the bridge says %s", ci.Code)))
	}
	return samples
}

// TestErrorKinds walks the errors that cross the protocol typed: every
// failed outcome that bridge.proto defines has a sample, and every sample comes back as it went through each encoding —
// directly, and over a real gRPC connection as a Calls outcome, a Run
// status, a Call stream's status and Configure's status.
func TestErrorKinds(t *testing.T) {
	t.Parallel()
	samples := errorSamples()

	// There is a sample of each failed outcome bridge.proto defines.
	outcomes := map[string]bool{}
	oneof := (&bridgev1.CallsResponse{}).ProtoReflect().Descriptor().Oneofs().ByName("outcome")
	for _, s := range samples {
		out := outcomeToPB(1, nil, s.err)
		outcomes[string(out.ProtoReflect().WhichOneof(oneof).Name())] = true
	}
	fields := oneof.Fields()
	for i := range fields.Len() {
		if name := string(fields.Get(i).Name()); name != "result" && !outcomes[name] {
			t.Errorf("no sample of the Calls outcome %q", name)
		}
	}

	// Each encoding, directly.
	for _, s := range samples {
		st := errorStatus(s.err)
		if c := status.Code(st); c != codes.Unknown && c != codes.FailedPrecondition {
			t.Errorf("%v: status code %v (never one of a transport failure)", s.err, c)
		}
		got, ok := typedError(st)
		if !ok || !reflect.DeepEqual(got, s.want) {
			t.Errorf("%v through a status: %#v, %v; want %#v", s.err, got, ok, s.want)
		}
		out := outcomeToPB(42, nil, s.err)
		res, got := outcomeFromPB(out)
		if out.GetId() != 42 || res != nil || !reflect.DeepEqual(got, s.want) {
			t.Errorf("%v through an outcome: id %d, %+v, %#v; want %#v", s.err, out.GetId(), res, got, s.want)
		}
	}
	if got, ok := typedError(status.Error(codes.Unavailable, "gone")); ok {
		t.Errorf("typedError(a transport failure) = %v", got)
	}

	// Each encoding over gRPC: the bridge fails call (or configuration) i
	// with sample i.
	fail := func(args json.RawMessage) error {
		var in struct{ I int }
		if err := json.Unmarshal(args, &in); err != nil {
			return err
		}
		return samples[in.I].err
	}
	b := &failingBridge{fail: fail}
	for _, tc := range []struct {
		name   string
		srv    *countingServer
		events protocol.EventSink
	}{
		{"Calls", &countingServer{}, nil},
		{"Run", &countingServer{noCalls: true}, nil},
		{"Call", &countingServer{}, nopEvents{}},
	} {
		c, _ := connectCounting(t, b, tc.srv)
		for i, s := range samples {
			args := json.RawMessage(`{"I":` + strconv.Itoa(i) + `}`)
			res, err := c.CallTool(t.Context(), &protocol.CallToolRequest{Name: "fail", Arguments: args, Events: tc.events})
			if res != nil || !reflect.DeepEqual(err, s.want) {
				t.Errorf("%s: %v came back as %+v, %#v; want %#v", tc.name, s.err, res, err, s.want)
			}
		}
		runs, streams := tc.srv.runs.Load(), tc.srv.streams.Load()
		switch {
		case tc.name == "Calls" && (runs != 0 || streams != 1),
			tc.name == "Run" && runs != int32(len(samples)),
			tc.name == "Call" && (runs != 0 || streams != 0):
			t.Errorf("%s: %d Run RPCs, %d Calls streams", tc.name, runs, streams)
		}
		if tc.name == "Calls" {
			for i, s := range samples {
				err := c.Configure(t.Context(), &protocol.ConfigureRequest{Config: json.RawMessage(`{"I":` + strconv.Itoa(i) + `}`)})
				if !reflect.DeepEqual(err, s.want) {
					t.Errorf("Configure: %v came back as %#v; want %#v", s.err, err, s.want)
				}
			}
		}
	}
}

// failingBridge fails Configure and every call with fail's error for
// their arguments.
type failingBridge struct {
	fail func(args json.RawMessage) error
}

func (*failingBridge) Describe(context.Context) (*protocol.Description, error) {
	return &protocol.Description{}, nil
}

func (b *failingBridge) Configure(_ context.Context, req *protocol.ConfigureRequest) error {
	return b.fail(req.Config)
}

func (b *failingBridge) CallTool(_ context.Context, req *protocol.CallToolRequest) (*protocol.CallToolResult, error) {
	return nil, b.fail(req.Arguments)
}

// nopEvents makes a call a Call stream.
type nopEvents struct{}

func (nopEvents) Log(string)                        {}
func (nopEvents) Progress(float64, float64, string) {}
