package host_test

// npm packages for require(), fetched by the host from the real npm
// registry (pinned versions), read by a sandbox that has no network.

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/parselbox/parselbox/host"
	"github.com/parselbox/parselbox/internal/testenv"
)

var pinnedNPM = []string{"npm:lodash@4.17.21", "npm:dayjs@1.11.13", "npm:js-yaml@4.1.0", "npm:zod@3.23.8"}

func TestRequireNPM(t *testing.T) {
	t.Parallel()
	testenv.Runtime(t)
	testenv.NPMRegistry(t)
	pkgDir := t.TempDir()
	sb := newSandbox(t, host.Config{Packages: pinnedNPM, PackageDir: pkgDir})
	r := exec(t, sb, `_ = require("lodash")
dayjs = require("dayjs")
yaml = require("js-yaml")
zod = require("zod")
schema = zod.object({"name": zod.string(), "n": zod.number().int()})
try:
    schema.parse({"name": "x", "n": 1.5})
    bad = "accepted"
except Exception as e:
    bad = "Expected integer, received float" in str(e)
d = dayjs("2024-01-31").add(1, "day")
[_.chunk([1, 2, 3, 4, 5], 2),
 _([1, 2, 3]).map(lambda x, *_: x * 2).filter(lambda x, *_: x > 2).value(),
 d.format("YYYY-MM-DD"), type(d).__name__, d.isAfter(dayjs("2024-01-01")),
 yaml.load("a: [1, 2]\nb: {c: true}"),
 js("return jsYaml.dump({k: [1, 2]}) + lodash.kebabCase('Hello World')"),
 schema.parse({"name": "x", "n": 2}), bad]`)
	want := []any{
		[]any{[]any{1.0, 2.0}, []any{3.0, 4.0}, []any{5.0}},
		[]any{4.0, 6.0},
		"2024-02-01", "ParselboxJsProxy", true,
		map[string]any{"a": []any{1.0, 2.0}, "b": map[string]any{"c": true}},
		"k:\n  - 1\n  - 2\nhello-world",
		map[string]any{"name": "x", "n": 2.0}, true,
	}
	if diff := cmp.Diff(want, value(t, r)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}

	// The guide, help() and sbx.info() say what is installed.
	if want := "- npm packages for require(): lodash@4.17.21, dayjs@1.11.13, js-yaml@4.1.0, zod@3.23.8."; !strings.Contains(sb.Prompt(), want) ||
		!strings.Contains(sb.Prompt(), "help(js), help(require)") {
		t.Errorf("the guide does not say %q:\n%s", want, sb.Prompt())
	}
	r = exec(t, sb, `[sbx.info()["javascript"]["npm_packages"], help(require).split("\n")[0], help(js).split("\n")[0]]`)
	want = []any{[]any{"lodash@4.17.21", "dayjs@1.11.13", "js-yaml@4.1.0", "zod@3.23.8"},
		"require(name: str, alias: str | None = None) -> module",
		"js(code: str, **kwargs) -> value"}
	if diff := cmp.Diff(want, value(t, r)); diff != "" {
		t.Errorf("info and help (-want +got):\n%s", diff)
	}

	// Fetched once, into the package directory, with a lock file holding
	// each tarball's integrity hash.
	locks, _ := filepath.Glob(filepath.Join(pkgDir, "npm", "*", "deno.lock"))
	if len(locks) != 1 {
		t.Fatalf("lock files: %v", locks)
	}
	var lock struct {
		NPM map[string]struct {
			Integrity string `json:"integrity"`
		} `json:"npm"`
	}
	b, _ := os.ReadFile(locks[0])
	if err := json.Unmarshal(b, &lock); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"lodash@4.17.21", "dayjs@1.11.13", "js-yaml@4.1.0", "zod@3.23.8", "argparse@2.0.1"} {
		if !strings.HasPrefix(lock.NPM[p].Integrity, "sha512-") {
			t.Errorf("%s: no integrity in the lock file: %+v", p, lock.NPM[p])
		}
	}
	// A second sandbox on the same directory installs nothing (the lock
	// file is not rewritten) and works.
	st, _ := os.Stat(locks[0])
	sb2 := newSandbox(t, host.Config{Packages: pinnedNPM, PackageDir: pkgDir})
	if got := value(t, exec(t, sb2, `require("lodash").VERSION`)); got != "4.17.21" {
		t.Errorf("second sandbox: %v", got)
	}
	if st2, _ := os.Stat(locks[0]); !st2.ModTime().Equal(st.ModTime()) {
		t.Error("the second sandbox reinstalled")
	}
}

// An undeclared package is refused with an error that names the options;
// with allow_runtime_packages the host installs it on request.
func TestRequireNPMUndeclared(t *testing.T) {
	t.Parallel()
	testenv.Runtime(t)
	sb := newSandbox(t, host.Config{})
	e := raised(t, exec(t, sb, `require("left-pad")`), "ModuleNotFoundError")
	for _, want := range []string{`"left-pad" is not installed`, `"npm:left-pad"`, "allow_runtime_packages"} {
		if !strings.Contains(e.Message, want) {
			t.Errorf("the error lacks %q: %s", want, e.Message)
		}
	}

	testenv.NPMRegistry(t)
	pkgDir := t.TempDir()
	sb = newSandbox(t, host.Config{AllowRuntimePackages: true, PackageDir: pkgDir})
	if got := value(t, exec(t, sb, `require("left-pad@1.3.0")("7", 3, "0")`)); got != "007" {
		t.Errorf("left-pad: %v", got)
	}
	matches, _ := filepath.Glob(filepath.Join(pkgDir, "npm", "*", "package.json"))
	if len(matches) != 1 {
		t.Fatalf("package.json files: %v", matches)
	}
	if b, _ := os.ReadFile(matches[0]); !strings.Contains(string(b), `"left-pad": "1.3.0"`) {
		t.Errorf("package.json of the runtime set: %s", b)
	}
}

// require() of .wasm: a library's exports as methods (and in js() by
// alias), a WASI command as a callable, other modules refused.
func TestRequireWasm(t *testing.T) {
	t.Parallel()
	out := t.TempDir()
	wasmFixtures(t, out, map[string]string{"add.wasm": "add", "foreign.wasm": "foreign", "hello.wasm": "hello"})
	sb := newSandbox(t, host.Config{OutputDir: out})
	r := exec(t, sb, `lib = require("./add.wasm")
hello = require("./hello.wasm")
try:
    require("./foreign.wasm")
except ImportError as e:
    err = str(e)
[lib.add(20, 22), js("return add.add(1, 2)"), hello()["stdout"].decode(), "imports from [env]" in err]`)
	if diff := cmp.Diff([]any{42.0, 3.0, "hello from wasi\n", true}, value(t, r)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
