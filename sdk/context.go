package sdk

import "context"

type requestKey struct{}

// WithRequest returns a copy of ctx that carries req. A tool added with
// AddFunc gets such a context for every call; it is exported so that a
// function can be tested on its own.
func WithRequest(ctx context.Context, req *CallToolRequest) context.Context {
	return context.WithValue(ctx, requestKey{}, req)
}

// RequestFromContext returns the call that ctx belongs to (see
// WithRequest), so that a function that takes only a context.Context can
// write to its task's log, report progress and read messages sent into it:
//
//	func (s *Svc) Build(ctx context.Context, target string) error {
//		sdk.RequestFromContext(ctx).Log("building " + target)
//		...
//	}
//
// It returns nil outside a call; the methods of *CallToolRequest are no-ops
// on nil, so the example above needs no check.
func RequestFromContext(ctx context.Context) *CallToolRequest {
	req, _ := ctx.Value(requestKey{}).(*CallToolRequest)
	return req
}
