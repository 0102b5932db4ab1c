package wire

import (
	"errors"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/parselbox/parselbox/internal/protocol"
)

// TestErrorCodesCrossTheWire checks that every code of the table survives
// a result's round trip through the protocol.
func TestErrorCodesCrossTheWire(t *testing.T) {
	t.Parallel()
	for _, ci := range protocol.Codes {
		res := resultFromPB(resultToPB(protocol.ErrorResult(protocol.Errorf(ci.Code, "m"))))
		if res.Error.Code != ci.Code || res.Error.Message != "m" || !res.IsError {
			t.Errorf("result with %s → %+v", ci.Code, res.Error)
		}
	}
	if res := resultFromPB(resultToPB(protocol.ErrorResult(protocol.Errorf("no_such_code", "m")))); res.Error.Code != protocol.CodeInternal {
		t.Errorf("unknown code → %s, want internal", res.Error.Code)
	}
}

func TestStatusCarriesTypedErrors(t *testing.T) {
	t.Parallel()
	err := errorStatus(protocol.Errorf(protocol.CodePermission, "no"))
	if status.Code(err) != codes.Unknown {
		t.Errorf("gRPC code = %v, want Unknown (never Unavailable or Canceled)", status.Code(err))
	}
	got, ok := typedError(err)
	var te *protocol.ToolError
	if !ok || !errors.As(got, &te) || te.Code != protocol.CodePermission || te.Message != "no" {
		t.Errorf("typedError = %v, %v", got, ok)
	}
	err = errorStatus(&protocol.ConfigError{Key: "a.b", Message: "bad"})
	got, ok = typedError(err)
	var ce *protocol.ConfigError
	if !ok || !errors.As(got, &ce) || *ce != (protocol.ConfigError{Key: "a.b", Message: "bad"}) {
		t.Errorf("typedError(ConfigError) = %v, %v", got, ok)
	}
	if got, ok := typedError(status.Error(codes.Unavailable, "gone")); ok {
		t.Errorf("typedError(plain) = %v", got)
	}
}
