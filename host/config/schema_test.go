package config_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/parselbox/parselbox/host/config"
	"github.com/parselbox/parselbox/host/config/internal/godoc"
	"github.com/parselbox/parselbox/internal/testenv"
)

// The committed parselbox.schema.json is what the Go types make now: a key
// added to host.Config or mcpserver.Settings without `go generate
// ./host/config` fails here.
func TestSchemaInSync(t *testing.T) {
	t.Parallel()
	root := testenv.ModuleRoot(t)
	docs, err := godoc.FieldDocs(filepath.Join(root, "host"), filepath.Join(root, "host", "mcpserver"))
	if err != nil {
		t.Fatal(err)
	}
	want, err := config.JSONSchema(docs)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(root, "parselbox.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("parselbox.schema.json is out of date: run go generate ./host/config (-want +got):\n%s", diff)
	}
}

// The schema has the keys the loader takes, and its types: a few spot
// checks against what it would be easy to get wrong.
func TestSchemaShape(t *testing.T) {
	t.Parallel()
	b, err := config.JSONSchema(nil)
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		Properties map[string]map[string]any `json:"properties"`
		Additional bool                      `json:"additionalProperties"`
	}
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"memory", "timeout", "mount", "bridge", "mcp_server", "server", "allow_net", "env"} {
		if s.Properties[key] == nil {
			t.Errorf("no %q in the schema", key)
		}
	}
	for _, key := range []string{"Context", "Hooks", "Logger", "context", "hooks", "logger"} {
		if s.Properties[key] != nil {
			t.Errorf("%q (Go API only) is in the schema", key)
		}
	}
	if s.Additional {
		t.Error("unknown keys are allowed")
	}
	if diff := cmp.Diff(map[string]any{"type": []any{"number", "string"}}, s.Properties["timeout"], cmp.FilterPath(func(p cmp.Path) bool {
		return p.Last().String() == `["description"]`
	}, cmp.Ignore())); diff != "" {
		t.Errorf("timeout (-want +got):\n%s", diff)
	}
	bridge := s.Properties["bridge"]["additionalProperties"].(map[string]any)["properties"].(map[string]any)
	if cfg := bridge["config"].(map[string]any); cfg["type"] != "object" || cfg["additionalProperties"] != nil {
		t.Errorf("a bridge's config is not any object: %v", cfg)
	}
	server := s.Properties["server"]["properties"].(map[string]any)
	keys := make([]string, 0, len(server))
	for k := range server {
		keys = append(keys, k)
	}
	if !slices.Contains(keys, "transport") || !slices.Contains(keys, "auth_token") {
		t.Errorf("server block keys: %v", keys)
	}
}
