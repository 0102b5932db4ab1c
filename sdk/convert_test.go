package sdk

import (
	"errors"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	bridgev1 "github.com/parselbox/parselbox/proto/parselbox/bridge/v1"
)

// TestErrorCodesCrossTheWire checks that every ErrorCode has a protocol
// counterpart and survives the round trip.
func TestErrorCodesCrossTheWire(t *testing.T) {
	t.Parallel()
	all := []ErrorCode{CodeInternal, CodeInvalidArgument, CodePermission, CodeTimeout, CodeNotFound, CodeCancelled, CodeUnavailable}
	seen := map[bridgev1.ErrorCode]bool{}
	for _, c := range all {
		pb := bridgev1.CodeFromSlug(string(c))
		if pb == bridgev1.ErrorCode_ERROR_CODE_UNSPECIFIED || (pb == bridgev1.ErrorCode_ERROR_CODE_INTERNAL && c != CodeInternal) {
			t.Errorf("%s has no protocol code", c)
		}
		if seen[pb] {
			t.Errorf("%s shares protocol code %v", c, pb)
		}
		seen[pb] = true
		if got := ErrorCode(pb.Slug()); got != c {
			t.Errorf("%s → %v → %s", c, pb, got)
		}
		res := resultFromPB(resultToPB(ErrorResult(Errorf(c, "m"))))
		if res.Error.Code != c || res.Error.Message != "m" || !res.IsError {
			t.Errorf("result with %s → %+v", c, res.Error)
		}
	}
	if len(seen) != len(bridgev1.ErrorCode_name)-1 {
		t.Errorf("the protocol has %d codes, the SDK %d", len(bridgev1.ErrorCode_name)-1, len(seen))
	}
	if got := bridgev1.CodeFromSlug("no_such_code").Slug(); got != "internal" {
		t.Errorf("unknown code → %s, want internal", got)
	}
}

func TestStatusCarriesToolError(t *testing.T) {
	t.Parallel()
	err := toStatus(Errorf(CodePermission, "no"))
	if status.Code(err) != codes.Unknown {
		t.Errorf("gRPC code = %v, want Unknown (never Unavailable or Canceled)", status.Code(err))
	}
	var te *ToolError
	if !errors.As(fromStatus(err), &te) || te.Code != CodePermission || te.Message != "no" {
		t.Errorf("fromStatus = %v", fromStatus(err))
	}
	plain := status.Error(codes.Unavailable, "gone")
	if got := fromStatus(plain); got != plain {
		t.Errorf("fromStatus(plain) = %v", got)
	}
}
