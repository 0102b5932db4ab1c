// Package audit keeps the audit trail of a sandbox: every execution, with
// its id, and every tool call it makes (execution id, session, bridge,
// tool path, duration, outcome, and the arguments with the bridge's
// secrets redacted by the router), as lines of JSON in a file and as
// OpenTelemetry spans: the execution is the parent span, its tool calls
// (tasks included) its children.
//
//	trail, err := audit.Open(ctx, audit.Options{
//		Path:         "/var/log/parselbox/audit.jsonl",
//		OTLPEndpoint: "http://127.0.0.1:4318", // OTLP over HTTP
//	})
//	// host.Config{AuditLog: ..., OTLPEndpoint: ...} does this for a sandbox:
//	// the Trail is the router's Recorder.
//
// A line is {"type": "execution", ...} (written when the execution ends,
// after its calls) or {"type": "tool_call", ...}; see Execution and
// ToolCall for the fields. Calls made between executions (a bridge calling
// back into the host) have no execution id. Discovery (sbx.*) is not
// recorded.
package audit
