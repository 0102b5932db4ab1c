package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/parselbox/parselbox/host/config"
	"github.com/parselbox/parselbox/internal/testenv"
)

// examplesDir is the repository's examples/ folder.
func examplesDir(t *testing.T) string {
	t.Helper()
	return filepath.Join(testenv.ModuleRoot(t), "examples")
}

// requireBin fails (or, without PARSELBOX_REQUIRE_RUNTIME, skips) when the
// binaries of `make build` are missing; it returns bin/.
func requireBin(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(testenv.ModuleRoot(t), "bin")
	if _, err := os.Stat(filepath.Join(bin, "parselbox-bridge-greeter")); err != nil {
		if os.Getenv(testenv.RequireEnv) != "" {
			t.Fatalf("%s missing (make build)", bin)
		}
		t.Skipf("%s missing (make build)", bin)
	}
	return bin
}

// Every configuration in examples/ loads, passes Validate, and names only
// plugins that `make build` makes.
func TestExamplesLoad(t *testing.T) {
	t.Parallel()
	var files []string
	for _, pat := range []string{"*.hcl", "*.yaml", "*.yml"} {
		m, _ := filepath.Glob(filepath.Join(examplesDir(t), pat))
		files = append(files, m...)
	}
	if len(files) < 8 {
		t.Fatalf("only %d examples: %v", len(files), files)
	}
	built := []string{"greeter", "shell", "http", "graphql", "mcpproxy"} // the Makefile's BRIDGES
	for _, f := range files {
		file, err := config.LoadFile(f)
		if err != nil {
			t.Errorf("%s: %v", filepath.Base(f), err)
			continue
		}
		if err := file.Config.Validate(); err != nil {
			t.Errorf("%s: %v", filepath.Base(f), file.Locate(err))
		}
		for name, b := range file.Config.Bridges {
			if !slices.Contains(built, b.Plugin) {
				t.Errorf("%s: bridge %q: plugin %q is not one make build makes", filepath.Base(f), name, b.Plugin)
			}
		}
		if b, _ := os.ReadFile(f); !strings.Contains(string(b), "bin/parselbox exec --config examples/"+filepath.Base(f)) {
			t.Errorf("%s: no comment shows how to run it", filepath.Base(f))
		}
	}
}

// The examples that need no network run as they are, with the command
// their comment shows.
func TestExamplesRun(t *testing.T) {
	t.Parallel()
	bin := requireBin(t)
	for name, tc := range map[string]struct{ code, want string }{
		"greeter.hcl":  {`greeter.greet(name="ada")`, `"hello, ada"`},
		"greeter.yaml": {`greeter.greet("ada")`, `"hi, ada"`},
		"shell.hcl":    {`sh.exec("echo hi")["stdout"]`, `"hi\n"`},
		"sandbox.hcl":  {`open("/mnt/ref/sandbox.hcl").read().startswith("# A sandbox")`, `true`},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			args := []string{"exec", "--config", filepath.Join(examplesDir(t), name), "--plugin-dir", bin}
			if name == "sandbox.hcl" {
				args = append(args, "--output-dir", t.TempDir())
			}
			code, res, stderr := runCLI(t, "", append(args, tc.code)...)
			if code != exitOK || string(res.Output) != tc.want {
				t.Errorf("exit %d, output %s (want %s), error %+v\n%s", code, res.Output, tc.want, res.Error, stderr)
			}
		})
	}
}
