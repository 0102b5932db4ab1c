#!/bin/sh
# Builds the two WebAssembly side modules from their C sources, as
# Emscripten builds a side module (position-independent, a dylink.0
# section naming the libraries it needs): Debian's clang and lld are
# enough (apt-get install clang-14 lld-14). The outputs are checked in,
# so the tests need no compiler.
set -eu
cd "$(dirname "$0")"
CC=${CC:-clang-14}
LD=${LD:-wasm-ld-14}
flags="--target=wasm32-unknown-emscripten -fPIC -O2 -nostdlib"
$CC $flags -c libpbxtriple.c -o /tmp/libpbxtriple.o
$LD --experimental-pic -shared -o libpbxtriple.so /tmp/libpbxtriple.o
$CC $flags -c tinyext.c -o /tmp/tinyext.o
$LD --experimental-pic -shared -o tinyext.abi3.so /tmp/tinyext.o libpbxtriple.so
rm -f /tmp/libpbxtriple.o /tmp/tinyext.o
