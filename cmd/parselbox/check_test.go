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

// check refuses the host paths exec would refuse (a mount's source, an
// input file, the output directory's parent), each at its line, and
// creates nothing: a new output directory in an existing one is fine and
// is left to exec to make.
func TestCheckPaths(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.hcl")
	os.WriteFile(bad, []byte("output_dir = \"no/such/out\"\nfiles = [\"missing.csv\"]\nmount \"ref\" {\n  source = \"./missing\"\n}\n"), 0o644)
	code, out, errs := check(t, bad)
	for _, want := range []string{
		bad + ":1: output_dir: " + filepath.Join(dir, "no", "such", "out") + ": its parent " + filepath.Join(dir, "no", "such") + " does not exist (create it first)",
		bad + ":2: files[0]: input file: stat " + filepath.Join(dir, "missing.csv") + ": no such file or directory",
		bad + ":3: mount \"ref\": source " + filepath.Join(dir, "missing") + " is not a directory",
	} {
		if !strings.Contains(errs, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errs)
		}
	}
	if code != exitUsage || out != "" {
		t.Errorf("exit %d, stdout %q; want 2 and nothing", code, out)
	}
	// exec refuses the same mount, with the same words.
	mountOnly := filepath.Join(dir, "mount.hcl")
	os.WriteFile(mountOnly, []byte("mount \"ref\" {\n  source = \"./missing\"\n}\n"), 0o644)
	if code, _, stderr := runCLI(t, "", "exec", "--config", mountOnly, "1"); code != exitUsage ||
		!strings.Contains(stderr, mountOnly+":1: mount \"ref\": source "+filepath.Join(dir, "missing")+" is not a directory") {
		t.Errorf("exec: exit %d, %s", code, stderr)
	}

	os.Mkdir(filepath.Join(dir, "ref"), 0o755)
	os.WriteFile(filepath.Join(dir, "in.csv"), nil, 0o644)
	good := filepath.Join(dir, "good.hcl")
	os.WriteFile(good, []byte("output_dir = \"out\"\nfiles = [\"in.csv\"]\nmount \"ref\" {\n  source = \"ref\"\n}\n"), 0o644)
	if code, out, errs := check(t, good); code != exitOK || out != good+": ok\n" || errs != "" {
		t.Errorf("good.hcl: exit %d\nstdout %q\nstderr %q", code, out, errs)
	}
	if _, err := os.Stat(filepath.Join(dir, "out")); err == nil {
		t.Error("check created the output directory")
	}
}
