package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parselbox/parselbox/host/bridges"
)

// check runs `parselbox check` in-process.
func check(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(t.Context(), append([]string{"check"}, args...), nil, &out, &errb)
	return code, out.String(), errb.String()
}

// Every example passes check, and its plugins resolve with their sha256.
func TestCheckExamples(t *testing.T) {
	t.Parallel()
	bin := requireBin(t)
	sum, err := bridges.FileSHA256(filepath.Join(bin, "parselbox-bridge-greeter"))
	if err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(examplesDir(t), "*.hcl"))
	for _, f := range files {
		code, out, errs := check(t, "--plugin-dir", bin, f)
		if code != exitOK || !strings.HasPrefix(out, f+": ok\n") || errs != "" {
			t.Errorf("%s: exit %d\nstdout %s\nstderr %s", filepath.Base(f), code, out, errs)
		}
	}
	_, out, _ := check(t, "--plugin-dir", bin, "--config", filepath.Join(examplesDir(t), "greeter.hcl"))
	want := "bridge greeter: " + filepath.Join(bin, "parselbox-bridge-greeter") + "\n  sha256 = \"" + sum + "\"\n"
	if !strings.HasSuffix(out, want) {
		t.Errorf("greeter.hcl: %q, want it to end with %q", out, want)
	}
	_, out, _ = check(t, "--plugin-dir", bin, filepath.Join(examplesDir(t), "mcp-json.hcl"))
	if !strings.Contains(out, "MCP server everything: "+filepath.Join(bin, "parselbox-bridge-mcpproxy")) {
		t.Errorf("mcp-json.hcl: %s", out)
	}
}

// A problem is said with its line, and check exits 2; nothing starts.
func TestCheckProblems(t *testing.T) {
	t.Parallel()
	bin := requireBin(t)
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.hcl")
	os.WriteFile(bad, []byte("bridge \"g\" {\n  plugin = \"nope\"\n}\nbridge \"h\" {\n  plugin = \"greeter\"\n  sha256 = \""+strings.Repeat("0", 64)+"\"\n}\n"), 0o644)
	code, out, errs := check(t, "--plugin-dir", bin, bad)
	greeter := filepath.Join(bin, "parselbox-bridge-greeter")
	sum, _ := bridges.FileSHA256(greeter)
	want := "parselbox check: " + bad + ":1: bridge \"g\": plugin not found: no executable parselbox-bridge-nope in "
	if code != exitUsage || out != "" || !strings.HasPrefix(errs, want) ||
		!strings.Contains(errs, bad+":6: bridge \"h\".sha256: "+greeter+" has sha256 "+sum+", not the pinned "+strings.Repeat("0", 64)) {
		t.Errorf("exit %d\nstdout %q\nstderr %q", code, out, errs)
	}
	if code, _, errs := check(t, "--memory", "0"); code != exitUsage || !strings.Contains(errs, "--memory: memory: must be") {
		t.Errorf("--memory 0: exit %d, %s", code, errs)
	}
	if code, _, errs := check(t, "a.hcl", "b.hcl"); code != exitUsage || !strings.Contains(errs, "expected at most one FILE") {
		t.Errorf("two files: exit %d, %s", code, errs)
	}
}

// plugins --config adds the configuration's plugin_dirs and its bridges.
func TestPluginsConfig(t *testing.T) {
	t.Parallel()
	bin := requireBin(t)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "p.hcl")
	os.WriteFile(cfg, []byte("plugin_dirs = [\""+bin+"\"]\nbridge \"hi\" {\n  plugin = \"greeter\"\n}\n"), 0o644)
	var out, errb bytes.Buffer
	code := run(t.Context(), []string{"plugins", "--config", cfg}, nil, &out, &errb)
	if code != exitOK || !strings.Contains(out.String(), "in "+cfg+":\nbridge hi: "+filepath.Join(bin, "parselbox-bridge-greeter")) ||
		!strings.Contains(out.String(), "searched: [") {
		t.Errorf("exit %d\n%s\n%s", code, out.String(), errb.String())
	}
}
