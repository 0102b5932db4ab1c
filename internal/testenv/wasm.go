package testenv

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// Wasm assembles tests/fixtures/wasm/<name>.wat into WebAssembly, with the
// assembler pinned there (wabt from the npm registry; `make fixtures`
// installs it), and returns the module's bytes. Without node or the
// installed assembler the test is skipped, or fails under
// $PARSELBOX_REQUIRE_RUNTIME (make test).
func Wasm(t testing.TB, name string) []byte {
	t.Helper()
	dir := filepath.Join(ModuleRoot(t), "tests", "fixtures", "wasm")
	wat2wasm := filepath.Join(dir, "node_modules", "wabt", "bin", "wat2wasm")
	node, err := exec.LookPath("node")
	if err == nil {
		_, err = os.Stat(wat2wasm)
	}
	if err != nil {
		Missing(t, RequireEnv, "no WebAssembly assembler (cd %s && npm ci): %v", dir, err)
	}
	out := filepath.Join(t.TempDir(), name+".wasm")
	cmd := exec.Command(node, wat2wasm, filepath.Join(dir, name+".wat"), "-o", out)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("wat2wasm %s.wat: %v\n%s", name, err, b)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
