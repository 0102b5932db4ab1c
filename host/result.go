package host

import "github.com/parselbox/parselbox/host/sandbox"

// Result is the outcome of one execution: see sandbox.Result.
type Result = sandbox.Result

// Error is a Python exception, or a failure of the sandbox reported the same way.
type Error = sandbox.Error
