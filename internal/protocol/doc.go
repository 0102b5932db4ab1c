// Package protocol holds the Go types of the bridge protocol: what a host
// and a bridge say to each other (Description, CallToolRequest,
// CallToolResult, ToolError, ConfigError, ...), the BridgeServer interface
// that both a bridge and the host's proxy of a plugin implement, and the one
// table of error codes (code ↔ protocol enum ↔ Python exception).
//
// Bridge authors never import it: package sdk re-exports these names with
// type aliases. Package internal/wire carries them over gRPC; the host
// (host/router, host/bridges, host/inproc) works with them directly.
//
// # What may import what
//
// Dependencies point inward; nothing imports back out:
//
//	proto/...            imports nothing of parselbox
//	internal/protocol    proto/... only
//	internal/wire        internal/protocol, internal/workers, proto/...
//	internal/testenv     nothing of parselbox
//	internal/workers     nothing of parselbox
//	sdk, sdk/...         internal/..., proto/...; never host/...
//	plugins/...          sdk, sdk/... only (and their own internal packages)
//	host/...             anything above
//	cmd/..., bench       anything
//
// `make lint` checks it with `go list -deps`.
package protocol
