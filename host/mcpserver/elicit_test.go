package mcpserver

import (
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/parselbox/parselbox/host"
	"github.com/parselbox/parselbox/internal/testenv"
)

// answer approves calc.add, declines calc.sub, and refuses calc.mul with a
// reason.
func answer(msg string) *mcp.ElicitResult {
	switch {
	case strings.Contains(msg, "calc.add"):
		return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"allow": true}}
	case strings.Contains(msg, "calc.sub"):
		return &mcp.ElicitResult{Action: "decline"}
	default:
		return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"allow": false, "reason": "not today"}}
	}
}

// Every tool call waits for the user's approval: through input requests and
// the client's next call on the sessionless protocol, through an
// elicitation request on the ones before, and over HTTP.
func TestElicit(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, protocol string }{
		{"multi round trip", ""},
		{"elicitation request", "2025-11-25"},
		{"http", "http"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := newServer(t, Options{Settings: with(func(s *Settings) { s.Elicit, s.PoolSize = true, 0 }), Config: host.Config{Context: map[string]any{"calc": calc{}}}})
			c, rec := newClient(answer)
			var cs *mcp.ClientSession
			if tc.protocol == "http" {
				var err error
				if cs, err = connectHTTP(t, startHTTP(t, srv), "", c); err != nil {
					t.Fatal(err)
				}
			} else {
				cs = connectInMemory(t, srv, c, tc.protocol)
			}

			if got := value(t, cs, "calc.add(a=1, b=2)"); got != 3.0 {
				t.Errorf("approved call: %v", got)
			}
			msgs := rec.elicited()
			if len(msgs) != 1 || !strings.Contains(msgs[0], "calc.add") || !strings.Contains(msgs[0], `"arguments":{"a":1,"b":2}`) {
				t.Errorf("elicitation messages: %q", msgs)
			}

			r := run(t, cs, "calc.sub(a=1, b=2)")
			if !r.IsError || !strings.Contains(r.Error, "PermissionError: Denied: the user declined the call to calc.sub") {
				t.Errorf("declined call: %+v", r)
			}
			r = run(t, cs, "try:\n    calc.mul(a=2, b=3)\nexcept PermissionError as e:\n    msg = str(e)\nmsg")
			if r.Result != "Denied: not today" {
				t.Errorf("refused call: %+v", r)
			}

			// One execution, several approvals in a row, and state kept.
			if got := value(t, cs, "total = sum(calc.add(a=i, b=i) for i in range(4))\ntotal"); got != 12.0 {
				t.Errorf("several approved calls: %v", got)
			}
			if n := len(rec.elicited()); n != 7 {
				t.Errorf("%d elicitations, want 7", n)
			}
			if got := value(t, cs, "total"); got != 12.0 {
				t.Errorf("state after approvals: %v", got)
			}
		})
	}
}

// A client that cannot elicit gets no approvals asked: the calls run, and
// the log says why.
func TestElicitClientCannot(t *testing.T) {
	t.Parallel()
	var logs testenv.SyncBuffer
	srv := newServer(t, Options{
		Settings: with(func(s *Settings) { s.Elicit, s.PoolSize = true, 0 }),
		Logger:   hclog.New(&hclog.LoggerOptions{Output: &logs, Level: hclog.Info}),
		Config:   host.Config{Context: map[string]any{"calc": calc{}}},
	})
	c, _ := newClient(nil)
	cs := connectInMemory(t, srv, c, "")
	if got := value(t, cs, "calc.add(a=1, b=2)"); got != 3.0 {
		t.Errorf("call: %v", got)
	}
	if !strings.Contains(logs.String(), "cannot answer elicitations") {
		t.Errorf("the log does not say that approvals are off:\n%s", logs.String())
	}
}

// An unanswered approval is a refusal after ApprovalTimeout; the execution
// goes on, and its result reaches the client.
func TestElicitTimeout(t *testing.T) {
	t.Parallel()
	for _, protocol := range []string{"", "2025-11-25"} {
		t.Run("protocol="+protocol, func(t *testing.T) {
			t.Parallel()
			srv := newServer(t, Options{
				Settings: with(func(s *Settings) { s.Elicit, s.PoolSize, s.ApprovalTimeout = true, 0, 300*time.Millisecond }),
				Config:   host.Config{Context: map[string]any{"calc": calc{}}},
			})
			c, _ := newClient(func(string) *mcp.ElicitResult {
				time.Sleep(1500 * time.Millisecond) // the user is away
				return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"allow": true}}
			})
			cs := connectInMemory(t, srv, c, protocol)
			began := time.Now()
			r := run(t, cs, "try:\n    calc.add(a=1, b=2)\nexcept PermissionError as e:\n    msg = str(e)\nmsg")
			if got, _ := r.Result.(string); !strings.Contains(got, "no answer to the approval of calc.add within 300ms") {
				t.Errorf("unanswered approval: %+v", r)
			}
			t.Logf("answered after %v", time.Since(began))
		})
	}
}

// The go-sdk client answers input requests for one call at most 9 times
// (it gives up at the 10th round trip). The execution it abandons does not
// block the session: the next call replaces it, refusing the approval the
// abandoned one waits for (and the approval timeout, short here, is not
// what ends it: the log says which did).
func TestElicitRoundTripLimit(t *testing.T) {
	t.Parallel()
	var logs testenv.SyncBuffer
	srv := newServer(t, Options{
		Settings: with(func(s *Settings) { s.Elicit, s.PoolSize, s.ApprovalTimeout = true, 0, 10*time.Second }),
		Logger:   hclog.New(&hclog.LoggerOptions{Output: &logs, Level: hclog.Info}),
		Config:   host.Config{Context: map[string]any{"calc": calc{}}},
	})
	c, _ := newClient(answer)
	cs := connectInMemory(t, srv, c, "")
	_, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: ToolName,
		Arguments: map[string]any{"code": "sum(calc.add(a=i, b=0) for i in range(12))"}})
	if err == nil || !strings.Contains(err.Error(), "maximum retries") {
		t.Fatalf("12 approvals in one call: %v", err)
	}
	if got := value(t, cs, "sum(calc.add(a=i, b=0) for i in range(5))"); got != 10.0 {
		t.Errorf("next call: %v", got)
	}
	if l := logs.String(); !strings.Contains(l, "made a new call instead of answering the approval of calc.add") ||
		strings.Contains(l, "no answer to the approval") {
		t.Errorf("the abandoned approval did not end with the next call:\n%s", l)
	}
}
