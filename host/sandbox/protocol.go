package sandbox

import "encoding/json"

// message is one line of the host ↔ sandbox protocol: a request (ID and
// Method), a notification (Method only) or a response (ID with Result or
// Error).
type message struct {
	ID     *int64          `json:"id,omitempty"`
	Method string          `json:"method,omitempty"`
	Params json.RawMessage `json:"params,omitempty"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  *Error          `json:"error,omitempty"`
}

// initParams configures the runner; it is the first line the host sends.
type initParams struct {
	IndexURL     string            `json:"indexURL"`
	Bootstrap    string            `json:"bootstrap"`
	Snapshot     string            `json:"snapshot,omitempty"`
	MakeSnapshot bool              `json:"make_snapshot,omitempty"`
	Workspace    string            `json:"workspace,omitempty"`
	Files        string            `json:"files,omitempty"`
	Mounts       []initMount       `json:"mounts,omitempty"`
	Env          map[string]string `json:"env,omitempty"`
	Globals      map[string]any    `json:"globals,omitempty"`
	Namespaces   json.RawMessage   `json:"namespaces,omitempty"`
}

type initMount struct {
	Target   string `json:"target"`
	Source   string `json:"source"`
	ReadOnly bool   `json:"readonly"`
}

// ReadyInfo is what the sandbox reports when it has booted.
type ReadyInfo struct {
	Pyodide string `json:"pyodide"`
	Python  string `json:"python"`
	// Snapshot reports that the interpreter was restored from the memory
	// snapshot rather than booted cold.
	Snapshot bool `json:"snapshot"`
	// BootMS is the time from the runner's start to ready, as it measured it.
	BootMS int `json:"boot_ms"`
}

type execParams struct {
	Code    string  `json:"code"`
	Timeout float64 `json:"timeout,omitempty"` // seconds; 0: none
}
