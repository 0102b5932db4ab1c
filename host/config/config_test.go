package config

import (
	"encoding/json"
	"errors"
	"flag"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"golang.org/x/tools/txtar"

	"github.com/parselbox/parselbox/host"
	"github.com/parselbox/parselbox/host/mcpserver"
)

var update = flag.Bool("update", false, "rewrite the want sections of testdata/*.txtar")

// TestGolden loads every config file of each testdata/*.txtar archive (the
// files not named want*). When they all load, they must load to the same
// File, whose normalized JSON is the archive's want.json; otherwise each
// must fail, and their error texts, in order, are want.err.
func TestGolden(t *testing.T) {
	archives, err := filepath.Glob("testdata/*.txtar")
	if err != nil {
		t.Fatal(err)
	}
	if len(archives) == 0 {
		t.Fatal("no testdata/*.txtar")
	}
	for _, path := range archives {
		t.Run(strings.TrimSuffix(filepath.Base(path), ".txtar"), func(t *testing.T) {
			t.Parallel()
			ar, err := txtar.ParseFile(path)
			if err != nil {
				t.Fatal(err)
			}
			var (
				first     *File
				firstName string
				loaded    int
				errText   strings.Builder
			)
			for _, f := range inputs(ar) {
				c, err := ParseFile(f.Name, f.Data)
				if err != nil {
					checkErrors(t, f.Name, err)
					errText.WriteString(err.Error() + "\n")
					continue
				}
				loaded++
				if first == nil {
					first, firstName = c, f.Name
				} else if diff := cmp.Diff(first, c, cmpopts.IgnoreUnexported(File{})); diff != "" {
					t.Errorf("%s loads differently from %s (-%[2]s +%[1]s):\n%[3]s", f.Name, firstName, diff)
				}
			}
			var section, got string
			switch loaded {
			case 0:
				section, got = "want.err", errText.String()
			case len(inputs(ar)):
				section, got = "want.json", normalize(t, first)
			default:
				t.Fatalf("some inputs loaded and some failed:\n%s", errText.String())
			}
			if *update {
				writeSection(t, path, ar, section, got)
				return
			}
			want, ok := sectionData(ar, section)
			if !ok {
				t.Fatalf("no %s section (run with -update to write it); got:\n%s", section, got)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("%s mismatch (-want +got):\n%s", section, diff)
			}
		})
	}
}

// inputs are the config files of an archive.
func inputs(ar *txtar.Archive) []txtar.File {
	var in []txtar.File
	for _, f := range ar.Files {
		if !strings.HasPrefix(f.Name, "want") {
			in = append(in, f)
		}
	}
	return in
}

func sectionData(ar *txtar.Archive, name string) (string, bool) {
	for _, f := range ar.Files {
		if f.Name == name {
			return string(f.Data), true
		}
	}
	return "", false
}

// writeSection replaces the want sections of the archive at path with one
// named name.
func writeSection(t *testing.T, path string, ar *txtar.Archive, name, data string) {
	t.Helper()
	out := &txtar.Archive{Comment: ar.Comment, Files: inputs(ar)}
	out.Files = append(out.Files, txtar.File{Name: name, Data: []byte(data)})
	if err := os.WriteFile(path, txtar.Format(out), 0o644); err != nil {
		t.Fatal(err)
	}
}

// checkErrors asserts that every problem reported for file is an *Error
// naming the file and a line.
func checkErrors(t *testing.T, file string, err error) {
	t.Helper()
	errs := []error{err}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	}
	for _, err := range errs {
		var e *Error
		switch {
		case !errors.As(err, &e):
			t.Errorf("%s: error %q is not a *config.Error", file, err)
		case e.File != file || e.Line <= 0:
			t.Errorf("%s: error %q has File %q, Line %d; want the file and a line", file, err, e.File, e.Line)
		}
	}
}

// normalize renders f as indented JSON keyed by the koanf tags (the file's
// keys), with durations as strings. The server block is the key "server",
// holding the settings that differ from mcpserver.DefaultSettings(); it is
// left out when none does.
func normalize(t *testing.T, f *File) string {
	t.Helper()
	m := plain(reflect.ValueOf(*f.Config)).(map[string]any)
	server := plain(reflect.ValueOf(f.Server)).(map[string]any)
	for k, v := range plain(reflect.ValueOf(mcpserver.DefaultSettings())).(map[string]any) {
		if reflect.DeepEqual(server[k], v) {
			delete(server, k)
		}
	}
	if len(server) > 0 {
		m["server"] = server
	}
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return string(b) + "\n"
}

func plain(v reflect.Value) any {
	if v.Type() == reflect.TypeFor[time.Duration]() {
		return time.Duration(v.Int()).String()
	}
	switch v.Kind() {
	case reflect.Struct:
		m := map[string]any{}
		for i := range v.NumField() {
			f := v.Field(i)
			tag := v.Type().Field(i).Tag.Get("koanf")
			switch {
			case tag == ",squash":
				maps.Copy(m, plain(f).(map[string]any))
			case tag != "" && tag != "-" && !(f.Kind() == reflect.Pointer && f.IsNil()):
				m[tag] = plain(f)
			}
		}
		return m
	case reflect.Pointer:
		return plain(v.Elem())
	case reflect.Map:
		if v.IsNil() {
			return nil
		}
		m := map[string]any{}
		for it := v.MapRange(); it.Next(); {
			m[it.Key().String()] = plain(it.Value())
		}
		return m
	case reflect.Slice:
		if v.IsNil() {
			return nil
		}
		s := make([]any, v.Len())
		for i := range s {
			s[i] = plain(v.Index(i))
		}
		return s
	case reflect.Interface:
		if v.IsNil() {
			return nil
		}
		return plain(v.Elem())
	}
	return v.Interface()
}

// TestHCLAndYAMLAgree checks that values reach host.Config with the same Go
// types from every syntax, so that json.Marshal of a bridge's config is the
// same whatever the file format.
func TestHCLAndYAMLAgree(t *testing.T) {
	t.Parallel()
	files := map[string]string{
		"c.hcl": `
bridge "api" {
  plugin = "http"
  config = {
    port    = 8080
    ratio   = 0.5
    whole   = 2.0
    big     = 12345678901234567
    list    = [1, "two", true, null, { "a.b" = 3 }]
    nested  = { deeper = { x = -1 } }
  }
}
globals = { n = 3, f = 1.25 }
`,
		"c.yaml": `
bridge:
  api:
    plugin: http
    config:
      port: 8080
      ratio: 0.5
      whole: 2.0
      big: 12345678901234567
      list: [1, "two", true, null, {a.b: 3}]
      nested: {deeper: {x: -1}}
globals: {n: 3, f: 1.25}
`,
		"c.json": `{
  "bridge": {"api": {"plugin": "http", "config": {
    "port": 8080, "ratio": 0.5, "whole": 2.0, "big": 12345678901234567,
    "list": [1, "two", true, null, {"a.b": 3}],
    "nested": {"deeper": {"x": -1}}}}},
  "globals": {"n": 3, "f": 1.25}
}`,
	}
	want := &host.Config{
		Bridges: map[string]host.BridgeConfig{"api": {
			Plugin: "http",
			Config: map[string]any{
				"port":   int64(8080),
				"ratio":  0.5,
				"whole":  int64(2),
				"big":    int64(12345678901234567),
				"list":   []any{int64(1), "two", true, nil, map[string]any{"a.b": int64(3)}},
				"nested": map[string]any{"deeper": map[string]any{"x": int64(-1)}},
			},
			Dir: ".", // the file's directory: relative paths in config resolve there
		}},
		Globals: map[string]any{"n": int64(3), "f": 1.25},
	}
	wantJSON, err := json.Marshal(want.Bridges["api"].Config)
	if err != nil {
		t.Fatal(err)
	}
	for name, src := range files {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			got, err := Parse(name, []byte(src))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("Parse mismatch (-want +got):\n%s", diff)
			}
			gotJSON, err := json.Marshal(got.Bridges["api"].Config)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(string(wantJSON), string(gotJSON)); diff != "" {
				t.Errorf("bridge config JSON mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestErrorFields checks the fields of the first *Error for one problem of
// each kind, in each syntax.
func TestErrorFields(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		file string
		src  string
		want Error
	}{
		"unknown top-level key": {"p.hcl", "memory = 1\nmemroy = 2\n",
			Error{Line: 2, Key: "", Msg: `unknown key "memroy" (did you mean "memory"?)`}},
		"unknown bridge key": {"p.hcl", "bridge \"greeter\" {\n  plugin = \"g\"\n  plugn = \"g\"\n}\n",
			Error{Line: 3, Key: `bridge "greeter"`, Msg: `unknown key "plugn" (did you mean "plugin"?)`}},
		"unknown mount key yaml": {"p.yaml", "mount:\n  data:\n    source: /d\n    moed: rw\n",
			Error{Line: 4, Key: `mount "data"`, Msg: `unknown key "moed" (did you mean "mode"?)`}},
		"memory not a number": {"cfg.yaml", "network: true\nmemory: lots\n",
			Error{Line: 2, Key: "memory", Msg: `must be a whole number of MB from 1 to 4096 (the 32-bit WebAssembly limit), got "lots"`}},
		"negative memory json": {"p.json", "{\n  \"memory\": -5\n}",
			Error{Line: 2, Key: "memory", Msg: `must be a whole number of MB from 1 to 4096 (the 32-bit WebAssembly limit), got -5`}},
		"bad timeout": {"p.hcl", "timeout = \"soon\"\n",
			Error{Line: 1, Key: "timeout", Msg: `must be a number of seconds or a duration such as "90s" (0 turns the limit off), got "soon"`}},
		"bad mode": {"p.hcl", "\nmount \"data\" {\n  source = \"/d\"\n  mode = \"rx\"\n}\n",
			Error{Line: 4, Key: `mount "data".mode`, Msg: `must be "ro" or "rw", got "rx"`}},
		"bad allow_net element": {"p.yaml", "allow_net:\n  - example.com:443\n  - example.com\n",
			Error{Line: 3, Key: "allow_net[1]", Msg: `must be "host:port" with a port from 1 to 65535, got "example.com"`}},
		"bridge without plugin": {"p.yaml", "bridge:\n  greeter:\n    env: [HOME]\n",
			Error{Line: 2, Key: `bridge "greeter"`, Msg: `missing key "plugin"`}},
		"short sha256": {"p.hcl", "bridge \"g\" {\n  plugin = \"g\"\n  sha256 = \"abc\"\n}\n",
			Error{Line: 3, Key: `bridge "g".sha256`, Msg: `must be 64 hex digits, got "abc"`}},
		"bridge name keyword": {"p.hcl", "bridge \"class\" {\n  plugin = \"g\"\n}\n",
			Error{Line: 1, Key: `bridge "class"`, Msg: `name must not be a Python keyword`}},
		"mount target dotdot": {"p.yaml", "mount:\n  ../etc:\n    source: /etc\n",
			Error{Line: 2, Key: `mount "../etc"`, Msg: `target must be a relative path such as "data" or "data/sub", without empty, "." or ".." parts`}},
		"wrong type in list": {"p.hcl", "files = [\n  \"a\",\n  2,\n]\n",
			Error{Line: 3, Key: "files[1]", Msg: `must be a string, got 2`}},
		"config not an object": {"p.yaml", "bridge:\n  g:\n    plugin: g\n    config: [1]\n",
			Error{Line: 4, Key: `bridge "g".config`, Msg: `must be an object, got a list`}},
		"unknown server key": {"p.hcl", "memory = 1\nserver {\n  prot = 9000\n}\n",
			Error{Line: 3, Key: "server", Msg: `unknown key "prot" (did you mean "port"?)`}},
		"bad server transport json": {"p.json", "{\"server\": {\n  \"transport\": \"sse\"\n}}",
			Error{Line: 2, Key: "server.transport", Msg: `must be "stdio" or "http", got "sse"`}},
		"server port yaml": {"p.yaml", "server:\n  port: 70000\n",
			Error{Line: 2, Key: "server.port", Msg: `must be a port number from 0 to 65535, got 70000`}},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			_, err := Parse(tt.file, []byte(tt.src))
			var got *Error
			if !errors.As(err, &got) {
				t.Fatalf("Parse error = %v, want a *config.Error", err)
			}
			tt.want.File = tt.file
			if diff := cmp.Diff(&tt.want, got); diff != "" {
				t.Errorf("error mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestLoad checks what Load adds to Parse: reading the file, choosing the
// syntax by extension and making relative paths absolute.
func TestLoad(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, data string) string {
		t.Helper()
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	hclPath := write("p.hcl", "output_dir = \"out\"\nfiles = [\"/abs/in.csv\", \"../in.csv\"]\n")
	yamlPath := write("p.yml", "output_dir: out\nfiles: [/abs/in.csv, ../in.csv]\n")
	want := &host.Config{
		OutputDir: filepath.Join(dir, "out"),
		Files:     []string{"/abs/in.csv", filepath.Join(filepath.Dir(dir), "in.csv")},
	}
	for _, path := range []string{hclPath, yamlPath} {
		got, err := Load(path)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("Load(%s) mismatch (-want +got):\n%s", path, diff)
		}
	}

	errTests := map[string]struct {
		path string
		want string // a regexp
	}{
		"missing file":      {filepath.Join(dir, "nope.hcl"), `^loading config: open .*nope\.hcl: no such file or directory$`},
		"unknown extension": {write("p.toml", "memory = 1\n"), `^.*/p\.toml: unknown config format "\.toml": use \.hcl, \.yaml, \.yml or \.json$`},
		// An mcp.json given as the configuration says where it goes.
		"an mcp.json": {write("mcp.json", "{\"mcpServers\": {}}\n"), `mcp\.json:1.*unknown key "mcpServers" \(an mcp\.json: name it with mcp = "FILE" in the configuration, or pass it with --mcp\)`},
	}
	for name, tt := range errTests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			_, err := Load(tt.path)
			if err == nil || !regexp.MustCompile(tt.want).MatchString(err.Error()) {
				t.Errorf("Load(%s) error = %v, want match for %s", tt.path, err, tt.want)
			}
		})
	}
}

// TestServer checks what ParseFile returns for a server block, and that
// Parse and Load take the same file and leave the block out.
func TestServer(t *testing.T) {
	t.Parallel()
	src := "memory = 512\nserver {\n  transport = \"HTTP\"\n  pool_size = 0\n  idle_timeout = 1.5\n  elicit = false\n}\n"
	f, err := ParseFile("p.hcl", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	server := mcpserver.DefaultSettings()
	server.Transport, server.PoolSize, server.IdleTimeout, server.Elicit = "http", 0, 1500*time.Millisecond, false
	want := &File{Config: &host.Config{Memory: 512}, Server: server}
	if diff := cmp.Diff(want, f, cmpopts.IgnoreUnexported(File{})); diff != "" {
		t.Errorf("ParseFile mismatch (-want +got):\n%s", diff)
	}

	c, err := Parse("p.hcl", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want.Config, c); diff != "" {
		t.Errorf("Parse mismatch (-want +got):\n%s", diff)
	}
	path := filepath.Join(t.TempDir(), "p.hcl")
	if err := os.WriteFile(path, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	if c, err = Load(path); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want.Config, c); diff != "" {
		t.Errorf("Load mismatch (-want +got):\n%s", diff)
	}
	lf, err := LoadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, lf, cmpopts.IgnoreUnexported(File{})); diff != "" {
		t.Errorf("LoadFile mismatch (-want +got):\n%s", diff)
	}

	// Parse checks the block it leaves out.
	_, err = Parse("p.hcl", []byte("server {\n  port = -1\n}\n"))
	var ce *Error
	if !errors.As(err, &ce) || ce.Line != 2 || ce.Key != "server.port" {
		t.Errorf("Parse of a bad server block: %v, want an *Error at line 2, key server.port", err)
	}
}

// TestExample keeps parselbox.hcl.example loading, and checks that it
// shows every key of the file format at the start of a line (set, or
// commented out as in `# sha256 = "..."`, once or more).
func TestExample(t *testing.T) {
	t.Parallel()
	const path = "../../parselbox.hcl.example"
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Parse(strings.TrimSuffix(path, ".example"), data); err != nil {
		t.Fatalf("the example does not load:\n%v", err)
	}
	if !regexp.MustCompile(`(?m)^\s*(#\s*)?server\s*\{`).Match(data) {
		t.Error("the example does not show the server block")
	}
	for _, typ := range []reflect.Type{
		reflect.TypeFor[host.Config](), reflect.TypeFor[host.Mount](), reflect.TypeFor[host.BridgeConfig](),
		reflect.TypeFor[host.MCPServer](), reflect.TypeFor[host.ToolPolicy](), reflect.TypeFor[mcpserver.Settings](),
	} {
		for i := range typ.NumField() {
			key := typ.Field(i).Tag.Get("koanf")
			if key == "" || key == "-" || strings.HasPrefix(key, ",") { // ",squash": its own type is checked
				continue
			}
			set := regexp.MustCompile(`(?m)^\s*(#\s*)*` + key + `(\s+"[^"]*"\s*\{|\s*=)`)
			if !set.Match(data) {
				t.Errorf("the example does not show %s (key %q)", typ.Field(i).Name, key)
			}
		}
	}
}
