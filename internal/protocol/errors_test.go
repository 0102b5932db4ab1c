package protocol

import (
	"context"
	"errors"
	"fmt"
	"testing"

	bridgev1 "github.com/parselbox/parselbox/proto/parselbox/bridge/v1"
)

// The table is the one place where a code meets its protocol value and its
// Python exception: every row converts both ways, every protocol value has
// a row, and what is unknown is internal.
func TestCodes(t *testing.T) {
	t.Parallel()
	seen := map[bridgev1.ErrorCode]bool{}
	for _, ci := range Codes {
		if got := CodeFromProto(ci.Code.Proto()); got != ci.Code {
			t.Errorf("%s → %v → %s", ci.Code, ci.Code.Proto(), got)
		}
		if got := CodeFromPython(ci.Code.Python()); got != ci.Code {
			t.Errorf("%s → %s → %s", ci.Code, ci.Code.Python(), got)
		}
		seen[ci.Proto] = true
	}
	for v := range bridgev1.ErrorCode_name {
		if p := bridgev1.ErrorCode(v); p != bridgev1.ErrorCode_ERROR_CODE_UNSPECIFIED && !seen[p] {
			t.Errorf("protocol value %v has no row in Codes", p)
		}
	}
	for _, tc := range []struct {
		got, want ErrorCode
	}{
		{CodeFromProto(bridgev1.ErrorCode_ERROR_CODE_UNSPECIFIED), CodeInternal},
		{CodeFromProto(bridgev1.ErrorCode(99)), CodeInternal},
		{CodeFromPython("KeyError"), CodeInternal},
		{CodeFromPython("TypeError"), CodeInvalidArgument},
	} {
		if tc.got != tc.want {
			t.Errorf("got %s, want %s", tc.got, tc.want)
		}
	}
	if got := ErrorCode("something-new").Python(); got != "RuntimeError" {
		t.Errorf("unknown code raises %s", got)
	}
	if got := ErrorCode("something-new").Proto(); got != bridgev1.ErrorCode_ERROR_CODE_INTERNAL {
		t.Errorf("unknown code is sent as %v", got)
	}
}

func TestAsToolError(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		err  error
		want ToolError
	}{
		{errors.New("plain"), ToolError{CodeInternal, "plain"}},
		{fmt.Errorf("wrapped: %w", Errorf(CodePermission, "no")), ToolError{CodePermission, "wrapped: no"}},
		{fmt.Errorf("waiting: %w", context.DeadlineExceeded), ToolError{CodeTimeout, "waiting: context deadline exceeded"}},
		{context.Canceled, ToolError{CodeCancelled, "context canceled"}},
		{&ToolError{Message: "no code"}, ToolError{CodeInternal, "no code"}},
	} {
		if got := AsToolError(tc.err); *got != tc.want {
			t.Errorf("AsToolError(%v) = %+v, want %+v", tc.err, *got, tc.want)
		}
	}
}

func TestConfigError(t *testing.T) {
	t.Parallel()
	if got := (&ConfigError{Key: "headers.X-Key", Message: "expected string, got number"}).Error(); got != "headers.X-Key: expected string, got number" {
		t.Errorf("Error() = %q", got)
	}
	if got := (&ConfigError{Message: "expected an object, got a list"}).Error(); got != "expected an object, got a list" {
		t.Errorf("Error() of the whole block = %q", got)
	}
}
