package mcpserver

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The tool, its results, state, instructions and resources, on the
// sessionless protocol (the go-sdk's default) and on the last one before it.
func TestSession(t *testing.T) {
	t.Parallel()
	for _, protocol := range []string{"", "2025-11-25"} {
		t.Run("protocol="+protocol, func(t *testing.T) {
			t.Parallel()
			srv := newServer(t, Options{Settings: with(func(s *Settings) { s.MaxOutputTokens = 100 })})
			c, rec := newClient(nil)
			cs := connectInMemory(t, srv, c, protocol)

			init := cs.InitializeResult()
			if init.ServerInfo == nil || init.ServerInfo.Name != "Parselbox" || init.ServerInfo.Version != "test" {
				t.Errorf("server info: %+v", init.ServerInfo)
			}
			sess := onlySession(t, srv)
			if want := sess.Sandbox().Prompt(); init.Instructions != want || !strings.Contains(want, "sbx.info()") {
				t.Errorf("instructions are not the guide text:\n%s", init.Instructions)
			}
			tools, err := cs.ListTools(t.Context(), nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(tools.Tools) != 1 || tools.Tools[0].Name != "execute_code" {
				t.Fatalf("tools: %+v", tools.Tools)
			}
			schema := tools.Tools[0].InputSchema.(map[string]any)
			if diff := cmp.Diff([]any{"code"}, schema["required"]); diff != "" || schema["type"] != "object" {
				t.Errorf("input schema: %v", schema)
			}

			// State persists between calls.
			if got := value(t, cs, "x = 41\nx + 1"); got != 42.0 {
				t.Errorf("x + 1 = %v", got)
			}
			if got := value(t, cs, "x"); got != 41.0 {
				t.Errorf("x = %v", got)
			}

			// A raised exception: isError, with type, message and traceback.
			r := run(t, cs, "def f():\n    raise ValueError('bad input')\nf()")
			if !r.IsError || !strings.Contains(r.Error, "ValueError: bad input") || !strings.Contains(r.Error, "line 2, in f") {
				t.Errorf("error result: %+v", r)
			}
			if r.Text != `{"error":`+string(marshal(r.Error))+`}` {
				t.Errorf("error text block: %s", r.Text)
			}

			// No output: a note.
			r = run(t, cs, "y = 1")
			if r.IsError || r.Result != nil || !strings.Contains(r.Note, "final expression") {
				t.Errorf("no-output result: %+v", r)
			}
			if !strings.HasPrefix(r.Text, `{"result":null,"note":`) {
				t.Errorf("text block: %s", r.Text)
			}

			// Over the token budget: sbx.preview() and a note.
			r = run(t, cs, "[{'id': i, 'name': 'item %d' % i} for i in range(1000)]")
			want := []any{
				map[string]any{"id": 0.0, "name": "item 0"},
				map[string]any{"id": 1.0, "name": "item 1"},
				"...(998 more items)",
			}
			if diff := cmp.Diff(want, r.Result); diff != "" || !strings.Contains(r.Note, "sbx.preview()") {
				t.Errorf("truncated result (-want +got):\n%s\nnote: %s", diff, r.Note)
			}

			// Files become resources, announced with list_changed.
			r = run(t, cs, "open('out.csv', 'w').write('a,b\\n1,2\\n')\nimport os\nos.makedirs('sub', exist_ok=True)\n"+
				"open('sub/pic.png', 'wb').write(b'\\x89PNG\\x00')\n'done'")
			if diff := cmp.Diff([]string{"/workspace/out.csv", "/workspace/sub/pic.png"}, r.Files); diff != "" {
				t.Errorf("files (-want +got):\n%s", diff)
			}
			select {
			case <-rec.listChanged:
			case <-time.After(10 * time.Second):
				t.Error("no notifications/resources/list_changed")
			}
			list, err := cs.ListResources(t.Context(), nil)
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]string{}
			for _, res := range list.Resources {
				if !strings.HasPrefix(res.URI, "ui://") { // the renderer: TestApps
					got[res.URI] = res.MIMEType
				}
			}
			if diff := cmp.Diff(map[string]string{
				"file:///workspace/out.csv":     "text/csv",
				"file:///workspace/sub/pic.png": "image/png",
			}, got); diff != "" {
				t.Errorf("resources (-want +got):\n%s", diff)
			}
			read, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "file:///workspace/out.csv"})
			if err != nil {
				t.Fatal(err)
			}
			if c := read.Contents[0]; c.Text != "a,b\n1,2\n" || c.MIMEType != "text/csv" {
				t.Errorf("read csv: %+v", c)
			}
			read, err = cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "file:///workspace/sub/pic.png"})
			if err != nil {
				t.Fatal(err)
			}
			if c := read.Contents[0]; string(c.Blob) != "\x89PNG\x00" || c.Text != "" {
				t.Errorf("read png: %+v", c)
			}
			// A file of the sandbox that was never announced (no execution
			// wrote it) is not a resource, nor is a file that does not exist.
			if err := sess.Sandbox().WriteFile("/workspace/unannounced.txt", []byte("s")); err != nil {
				t.Fatal(err)
			}
			resourceNotFound(t, cs, "file:///workspace/unannounced.txt")
			resourceNotFound(t, cs, "file:///files/none.txt")
		})
	}
}

// onlySession returns the one session of srv that holds a sandbox.
func onlySession(t *testing.T, srv *Server) *session {
	t.Helper()
	srv.mu.Lock()
	defer srv.mu.Unlock()
	if len(srv.sessions) != 1 {
		t.Fatalf("%d sessions, want 1", len(srv.sessions))
	}
	for s := range srv.sessions {
		return s
	}
	return nil
}

// sessionsOf returns the sessions of srv that hold a sandbox.
func sessionsOf(srv *Server) []*session {
	srv.mu.Lock()
	defer srv.mu.Unlock()
	var out []*session
	for s := range srv.sessions {
		out = append(out, s)
	}
	return out
}

var _ = context.Background
