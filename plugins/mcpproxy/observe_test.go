package main

import (
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// TestSSETap feeds an event stream to the tap one byte at a time: message
// events (CRLF or LF, data over several lines) reach the observer, other
// events do not, and what the reader sees is the stream unchanged.
func TestSSETap(t *testing.T) {
	t.Parallel()
	stream := "event: endpoint\ndata: /message?id=1\n\n" +
		": a comment\r\n" +
		"id: 7\r\nevent: message\r\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\r\ndata: \"params\":{\"progressToken\":\"pbx-1\",\"progress\":1}}\r\n\r\n" +
		"data:{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":\"info\",\"data\":\"x\"}}\n\n" +
		"data: {\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{\"tools\":[{\"name\":\"t\",\"inputSchema\":{\"type\":\"object\",\"properties\":{\"z\":{},\"a\":{}}}}]}}\n\n" +
		"data: not json\n\n"
	obs := newObserver()
	tap := &sseTap{ReadCloser: io.NopCloser(iotest.OneByteReader(strings.NewReader(stream))), obs: obs}
	got, err := io.ReadAll(tap)
	if err != nil || string(got) != stream {
		t.Fatalf("the tap changed the stream (%v)", err)
	}
	diff(t, "notifications counted", map[string]int{"pbx-1": 1, logKey: 1}, obs.arrived)
	s, ok := obs.schemasOf("t")
	if !ok || string(s.Input) != `{"type":"object","properties":{"z":{},"a":{}}}` {
		t.Errorf("tools/list schemas: %s", s.Input)
	}
}

func TestJSONTap(t *testing.T) {
	t.Parallel()
	body := `{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"t","inputSchema":{"type":"object","properties":{"b":{},"a":{}}}}]}}`
	obs := newObserver()
	tap := &jsonTap{ReadCloser: io.NopCloser(iotest.HalfReader(strings.NewReader(body))), obs: obs}
	if _, err := io.ReadAll(tap); err != nil {
		t.Fatal(err)
	}
	if s, _ := obs.schemasOf("t"); string(s.Input) != `{"type":"object","properties":{"b":{},"a":{}}}` {
		t.Errorf("schemas: %s", s.Input)
	}
}
