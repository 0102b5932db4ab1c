package breakin

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/hashicorp/go-hclog"

	"github.com/parselbox/parselbox/host"
	"github.com/parselbox/parselbox/host/hosttest"
	"github.com/parselbox/parselbox/internal/testenv"
)

// hostSecret is a variable of the test process's environment: no sandbox
// may ever see it.
const (
	hostSecretVar   = "PARSELBOX_BREAKIN_HOST_SECRET"
	hostSecretValue = "host-env-secret-4f9c2a7d1e"
)

func TestMain(m *testing.M) {
	os.Setenv(hostSecretVar, hostSecretValue)
	code := m.Run()
	if pluginDir != "" {
		os.RemoveAll(pluginDir)
	}
	os.Exit(code)
}

// newSandbox starts a host sandbox for t with the test runtime; its log
// goes to the returned buffer.
func newSandbox(t *testing.T, cfg host.Config) (*host.Sandbox, *testenv.SyncBuffer) {
	t.Helper()
	logs := &testenv.SyncBuffer{}
	if cfg.Logger == nil {
		cfg.Logger = hclog.New(&hclog.LoggerOptions{Name: "breakin", Level: hclog.Debug, Output: logs})
	}
	return hosttest.New(t, cfg), logs
}

// run executes code and value decodes its output: see package hosttest.
var (
	run   = hosttest.Run
	value = hosttest.Value
)

// str is the result's output as a string.
func str(t *testing.T, r *host.Result) string {
	t.Helper()
	v := value(t, r)
	s, ok := v.(string)
	if !ok {
		t.Fatalf("output is %T, not a string: %v", v, v)
	}
	return s
}

// attempt is Python that defines attempt(f): "ok: <repr of f()>" or
// "<ExceptionType>: <message>", so that one execution can report how an
// attack ended without raising.
const attempt = `
import os
def attempt(f):
    try:
        return "ok: " + repr(f())[:2000]
    except BaseException as e:
        return type(e).__name__ + ": " + str(e)[:2000]
`

// try runs expr (a Python expression) through attempt and returns how it
// ended.
func try(t *testing.T, sb *host.Sandbox, expr string) string {
	t.Helper()
	return str(t, run(t, sb, attempt+"\nattempt(lambda: "+expr+")"))
}

// tryCode runs the statements of code (indented into a function whose
// return value counts) through attempt.
func tryCode(t *testing.T, sb *host.Sandbox, code string) string {
	t.Helper()
	var b strings.Builder
	b.WriteString(attempt + "\ndef _attack():\n")
	for _, line := range strings.Split(strings.Trim(code, "\n"), "\n") {
		b.WriteString("    " + line + "\n")
	}
	b.WriteString("attempt(_attack)\n")
	return str(t, run(t, sb, b.String()))
}

// refused fails t unless an attempt ended with one of the exception types.
func refused(t *testing.T, got string, types ...string) {
	t.Helper()
	for _, typ := range types {
		if strings.HasPrefix(got, typ+": ") {
			return
		}
	}
	t.Errorf("want one of %v, got %q", types, got)
}

// noneOf fails t if s contains any of the needles.
func noneOf(t *testing.T, what, s string, needles ...string) {
	t.Helper()
	for _, n := range needles {
		if n != "" && strings.Contains(s, n) {
			t.Errorf("%s shows %q: %.400s", what, n, s)
		}
	}
}

// resultText is everything of a result that the agent sees.
func resultText(r *host.Result) string {
	b, _ := json.Marshal(r)
	return string(b)
}

// writeFile writes a host file, failing t on error.
func writeFile(t *testing.T, path, data string, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), mode); err != nil {
		t.Fatal(err)
	}
}

var (
	pluginOnce sync.Once
	pluginDir  string
	pluginErr  error
)

// plugins builds the bridge binaries the suite uses (once per test
// binary) and returns their directory.
func plugins(t *testing.T) string {
	t.Helper()
	pluginOnce.Do(func() {
		root := testenv.ModuleRoot(t)
		pluginDir, pluginErr = os.MkdirTemp("", "breakin-plugins-")
		if pluginErr != nil {
			return
		}
		for name, pkg := range map[string]string{"http": "./plugins/http"} {
			cmd := exec.Command("go", "build", "-o", filepath.Join(pluginDir, "parselbox-bridge-"+name), pkg)
			cmd.Dir = root
			if out, err := cmd.CombinedOutput(); err != nil {
				pluginErr = fmt.Errorf("building %s: %v\n%s", pkg, err, out)
				return
			}
		}
	})
	if pluginErr != nil {
		t.Fatal(pluginErr)
	}
	return pluginDir
}
