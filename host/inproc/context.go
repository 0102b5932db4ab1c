package inproc

import (
	"context"

	"github.com/parselbox/parselbox/sdk"
)

// WithRequest returns a copy of ctx that carries req. CallTool does this for
// every call of a method that takes a context; it is exported so that a
// method can be tested on its own. It is sdk.WithRequest.
func WithRequest(ctx context.Context, req *sdk.CallToolRequest) context.Context {
	return sdk.WithRequest(ctx, req)
}

// Request returns the call that ctx belongs to, so that a method that takes
// a context.Context can write to its task's log, report progress and read
// messages sent into it:
//
//	func (s *Svc) Build(ctx context.Context, target string) error {
//		inproc.Request(ctx).Log("building " + target)
//		...
//	}
//
// It returns nil outside a call; the methods of *sdk.CallToolRequest are
// no-ops on nil, so the example above needs no check. It is
// sdk.RequestFromContext.
func Request(ctx context.Context) *sdk.CallToolRequest {
	return sdk.RequestFromContext(ctx)
}
