// Package bridgev1 holds the protocol between the parselbox host and bridge
// plugins (bridge.proto) and its generated Go code.
//
// Bridge authors do not use this package: they build bridges with package
// sdk, which hides these types. The SDK (bridge side) and package
// internal/wire (host side) convert between them and the sdk types.
//
// Regenerate with `make proto` (proto/generate.sh); the generated files are
// committed.
package bridgev1

//go:generate sh ../../../generate.sh
