package sandbox

import "encoding/json"

// Result is the outcome of one execution.
type Result struct {
	// Output is the value of the last expression, as JSON: bytes appear as
	// {"__b64__": base64}, values with no JSON form as
	// {"type": "not_serializable", "repr": ...}.
	Output json.RawMessage `json:"output"`
	// Stdout and Stderr are what the code printed.
	Stdout string `json:"stdout"`
	Stderr string `json:"stderr"`
	// Error is set when the code raised (or the sandbox failed).
	Error *Error `json:"error"`
	// Files are the sandbox paths (/workspace/..., /files/..., /mnt/...) of
	// regular files this execution created or modified.
	Files []string `json:"files"`
	// View is the HTML passed to display(), if any.
	View string `json:"view,omitempty"`
	// Note says what happened to the sandbox since the previous execution,
	// when the user should know: it was restarted (a crash, a callback that
	// ran away between executions) and its state was lost. Set by the host,
	// once.
	Note string `json:"note,omitempty"`
	// ExecutionID is the execution's id in the audit trail (set by the
	// host; not part of the result's JSON).
	ExecutionID string `json:"-"`
}

// Error is a Python exception, or a failure of the sandbox reported the same way.
type Error struct {
	Type      string `json:"type"`
	Message   string `json:"message"`
	Traceback string `json:"traceback,omitempty"`
}

func (e *Error) Error() string {
	if e.Message == "" {
		return e.Type
	}
	return e.Type + ": " + e.Message
}
