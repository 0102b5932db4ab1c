#!/bin/sh
# Regenerates the Go code of proto/parselbox/bridge/v1 (run from anywhere:
# `make proto`, `go generate ./proto/...` or `sh proto/generate.sh`).
#
# Pinned generators: protoc 3.21.12 (Debian bookworm's protobuf-compiler:
# `apt-get update && apt-get install -y protobuf-compiler`), and
# protoc-gen-go v1.36.12 and protoc-gen-go-grpc v1.6.2 as `tool` lines in
# go.mod (run through `go tool`, nothing to install). The versions are written
# into the headers of the generated files, so a different protoc shows up as
# a diff in CI.
set -eu

want="libprotoc 3.21.12"
cd "$(dirname "$0")/.."

if ! command -v protoc >/dev/null 2>&1; then
	echo "generate.sh: protoc not found; install it with: apt-get update && apt-get install -y protobuf-compiler" >&2
	exit 1
fi
got="$(protoc --version)"
if [ "$got" != "$want" ]; then
	echo "generate.sh: need $want, found $got (the version is written into the generated files)" >&2
	exit 1
fi

gen_go="$(go tool -n protoc-gen-go)"
gen_grpc="$(go tool -n protoc-gen-go-grpc)"

protoc -I proto \
	--plugin=protoc-gen-go="$gen_go" \
	--plugin=protoc-gen-go-grpc="$gen_grpc" \
	--go_out=proto --go_opt=paths=source_relative \
	--go-grpc_out=proto --go-grpc_opt=paths=source_relative \
	proto/parselbox/bridge/v1/bridge.proto
