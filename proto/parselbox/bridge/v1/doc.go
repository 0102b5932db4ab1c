// Package bridgev1 holds the protocol between the parselbox host and bridge
// plugins (bridge.proto) and its generated Go code.
//
// Nothing outside package internal/wire uses these types: bridges are built
// with package sdk, and the host works with the Go types of package
// internal/protocol; internal/wire converts between them, on both sides of
// the connection.
//
// Regenerate with `make proto` (proto/generate.sh); the generated files are
// committed.
package bridgev1

//go:generate sh ../../../generate.sh
