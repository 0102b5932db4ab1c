package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parselbox/parselbox/host"
	"github.com/parselbox/parselbox/internal/testenv"
)

// TestHostReadOnly: allow_read_only keeps only the tools that the real
// server-everything (from npm) annotates readOnlyHint: true; the others are
// absent from discovery and refused by path with the rule named.
func TestHostReadOnly(t *testing.T) {
	t.Parallel()
	rt := testenv.Runtime(t)
	node, index := fixture(t, everythingJS)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.Symlink(exe, filepath.Join(dir, "parselbox-bridge-"+host.MCPPlugin)); err != nil {
		t.Fatal(err)
	}
	srv := host.MCPServer{Command: node, Args: []string{index, "stdio"}}
	srv.AllowReadOnly = true
	srv.Deny = []string{"get_env"}
	sb, err := host.New(t.Context(), host.Config{
		RuntimeDir: rt.Dir,
		CacheDir:   testenv.CacheDir(t),
		MCPServers: map[string]host.MCPServer{"everything": srv},
		PluginDirs: []string{dir},
		Logger:     testenv.Logger(t),
	})
	if err != nil {
		t.Fatalf("host.New: %v", err)
	}
	t.Cleanup(func() { sb.Close() })
	run := func(code string) (any, *host.Error) {
		t.Helper()
		r, err := sb.Execute(t.Context(), code)
		if err != nil {
			t.Fatalf("Execute: %v", err)
		}
		var v any
		_ = json.Unmarshal(r.Output, &v)
		return v, r.Error
	}
	if v, e := run(`everything.get_sum(2, 3)`); e != nil || v != "The sum of 2 and 3 is 5." {
		t.Errorf("a read-only tool: %v %+v", v, e)
	}
	if _, e := run(`everything.toggle_simulated_logging()`); e == nil || e.Type != "PermissionError" ||
		e.Message != `everything.toggle_simulated_logging: not read-only, and mcp_server "everything" has allow_read_only = true` {
		t.Errorf("a tool that is not read-only: %+v", e)
	}
	if _, e := run(`everything.get_env()`); e == nil || e.Type != "PermissionError" ||
		e.Message != `everything.get_env: denied by the rule deny = "get_env" of mcp_server "everything"` {
		t.Errorf("a denied read-only tool: %+v", e)
	}
	v, e := run(`sorted(h["path"] for h in sbx.search(".")["everything (mcp)"])`)
	if e != nil {
		t.Fatal(e)
	}
	got := strings.Join(func() []string {
		var s []string
		for _, p := range v.([]any) {
			s = append(s, p.(string))
		}
		return s
	}(), " ")
	for _, want := range []string{"everything.echo", "everything.get_sum", "everything.trigger_long_running_operation"} {
		if !strings.Contains(got, want) {
			t.Errorf("search lacks %s: %s", want, got)
		}
	}
	for _, absent := range []string{"toggle", "gzip", "sampling", "get_env"} {
		if strings.Contains(got, absent) {
			t.Errorf("search shows %s: %s", absent, got)
		}
	}
}
