package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/parselbox/parselbox/sdk"
)

// An observer sees the messages a server sends in wire order, before the
// MCP client handles them. It exists for two things the client hides:
//
//   - The raw JSON of tools/list results: the client decodes a tool's
//     schemas into maps, which lose the order of "properties", and that
//     order is the order of positional arguments in Python.
//   - Notifications still waiting to be handled: the client hands a
//     response to its caller at once but queues notifications for a
//     handler goroutine, so the progress and log notifications that a
//     server sent before a tool's result may be handled after the call
//     returned. The observer counts them as they arrive; settle waits until
//     the handlers have caught up.
//
// Over stdio it wraps the mcp.Connection; over HTTP it taps the response
// bodies (the streamable HTTP connection cannot be wrapped: the client
// talks to it through an unexported interface).
type observer struct {
	mu      sync.Mutex
	arrived map[string]int // notifications read, by key (see noteKey)
	handled map[string]int // notifications handled, by key
	wake    chan struct{}  // closed and replaced at every handled notification
	schemas map[string]toolSchemas
}

// toolSchemas are one tool's schemas as the server wrote them.
type toolSchemas struct {
	Input  json.RawMessage `json:"inputSchema"`
	Output json.RawMessage `json:"outputSchema"`
}

// logKey is the key under which log notifications are counted; progress
// notifications are counted under their progress token.
const logKey = "\x00log"

func newObserver() *observer {
	return &observer{
		arrived: map[string]int{},
		handled: map[string]int{},
		wake:    make(chan struct{}),
		schemas: map[string]toolSchemas{},
	}
}

// message records a message read from the server.
func (o *observer) message(msg jsonrpc.Message) {
	switch m := msg.(type) {
	case *jsonrpc.Request:
		if m.IsCall() {
			return // a request from the server, not a notification
		}
		var key string
		switch m.Method {
		case "notifications/progress":
			var p struct {
				Token any `json:"progressToken"`
			}
			if json.Unmarshal(m.Params, &p) != nil {
				return
			}
			key = tokenKey(p.Token)
		case "notifications/message":
			key = logKey
		default:
			return
		}
		o.mu.Lock()
		o.arrived[key]++
		o.mu.Unlock()
	case *jsonrpc.Response:
		if m.Error == nil && bytes.Contains(m.Result, []byte(`"tools"`)) {
			o.toolsList(m.Result)
		}
	}
}

// toolsList keeps the schemas of a tools/list result (a result with a
// top-level "tools" array of named tools).
func (o *observer) toolsList(result json.RawMessage) {
	var r struct {
		Tools []struct {
			Name string `json:"name"`
			toolSchemas
		} `json:"tools"`
	}
	if json.Unmarshal(result, &r) != nil {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, t := range r.Tools {
		if t.Name != "" {
			o.schemas[t.Name] = t.toolSchemas
		}
	}
}

// schemasOf returns the raw schemas of the tool, if a tools/list result
// carried it.
func (o *observer) schemasOf(name string) (toolSchemas, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	s, ok := o.schemas[name]
	return s, ok
}

// raw records a message from its JSON; what does not decode is not ours to
// judge (the client reports it).
func (o *observer) raw(data []byte) {
	if msg, err := jsonrpc.DecodeMessage(bytes.Clone(data)); err == nil {
		o.message(msg)
	}
}

// done records that a notification counted under key has been handled.
func (o *observer) done(key string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.handled[key]++
	close(o.wake)
	o.wake = make(chan struct{})
}

// settle waits, up to timeout, until every notification that had arrived
// under keys when it was called has been handled.
func (o *observer) settle(timeout time.Duration, keys ...string) {
	o.mu.Lock()
	want := make(map[string]int, len(keys))
	for _, k := range keys {
		want[k] = o.arrived[k]
	}
	o.mu.Unlock()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		o.mu.Lock()
		caughtUp := true
		for k, n := range want {
			caughtUp = caughtUp && o.handled[k] >= n
		}
		wake := o.wake
		o.mu.Unlock()
		if caughtUp {
			return
		}
		select {
		case <-wake:
		case <-deadline.C:
			return
		}
	}
}

// forget drops the counts of a progress token whose call has ended.
func (o *observer) forget(key string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	delete(o.arrived, key)
	delete(o.handled, key)
}

// tokenKey is the key of a progress token, whatever JSON type the server
// echoed it as.
func tokenKey(token any) string {
	if s, ok := token.(string); ok {
		return s
	}
	return fmt.Sprint(token)
}

// observedTransport wraps a transport whose connection can be wrapped (stdio).
type observedTransport struct {
	mcp.Transport
	obs *observer
}

func (t observedTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return observedConn{c, t.obs}, nil
}

type observedConn struct {
	mcp.Connection
	obs *observer
}

func (c observedConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if err == nil {
		c.obs.message(msg)
	}
	return msg, err
}

// tapTransport is the http.RoundTripper of an HTTP server's client: it adds
// the configured headers and lets the observer read the responses.
type tapTransport struct {
	base    http.RoundTripper
	headers map[string]string // for requests to server's origin only
	server  *url.URL          // the server's URL
	obs     *observer
}

func (t *tapTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	// A redirect (or an SSE endpoint) elsewhere gets no credentials.
	if len(t.headers) > 0 && t.server != nil && sdk.SameOrigin(req.URL, t.server) {
		req = req.Clone(req.Context())
		for k, v := range t.headers {
			if req.Header.Get(k) == "" { // the client's own headers (session, protocol) win
				req.Header.Set(k, v)
			}
		}
	}
	resp, err := t.base.RoundTrip(req)
	if err != nil || resp.Body == nil {
		return resp, err
	}
	switch mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt {
	case "text/event-stream":
		resp.Body = &sseTap{ReadCloser: resp.Body, obs: t.obs}
	case "application/json":
		resp.Body = &jsonTap{ReadCloser: resp.Body, obs: t.obs}
	}
	return resp, nil
}

// maxTapped bounds what a tap buffers of one message; a larger message is
// passed on unobserved.
const maxTapped = 32 << 20

// sseTap parses a server-sent event stream as the client reads it, and
// hands each message event's data to the observer before the client sees
// the end of the event.
type sseTap struct {
	io.ReadCloser
	obs   *observer
	line  []byte // the current line, so far
	data  []byte // the current event's data, so far
	event string // the current event's name
	off   bool   // a line was too long: stop observing this stream
}

func (s *sseTap) Read(p []byte) (int, error) {
	n, err := s.ReadCloser.Read(p)
	if !s.off {
		s.feed(p[:n])
	}
	return n, err
}

func (s *sseTap) feed(b []byte) {
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			s.line = append(s.line, b...)
			if len(s.line) > maxTapped {
				s.off, s.line = true, nil
			}
			return
		}
		s.line = append(s.line, b[:i]...)
		s.field(bytes.TrimSuffix(s.line, []byte("\r")))
		s.line = s.line[:0]
		b = b[i+1:]
	}
}

// field handles one line of the stream.
func (s *sseTap) field(line []byte) {
	name, value, _ := bytes.Cut(line, []byte(":"))
	value = bytes.TrimPrefix(value, []byte(" "))
	switch {
	case len(line) == 0: // the end of an event
		if len(s.data) > 0 && (s.event == "" || s.event == "message") {
			s.obs.raw(s.data)
		}
		s.data, s.event = s.data[:0], ""
	case string(name) == "data":
		if len(s.data) > 0 {
			s.data = append(s.data, '\n')
		}
		s.data = append(s.data, value...)
		if len(s.data) > maxTapped {
			s.off, s.data = true, nil
		}
	case string(name) == "event":
		s.event = string(value)
	}
}

// jsonTap hands a JSON response body to the observer when the client has
// read it to its end.
type jsonTap struct {
	io.ReadCloser
	obs *observer
	buf []byte
	off bool
}

func (j *jsonTap) Read(p []byte) (int, error) {
	n, err := j.ReadCloser.Read(p)
	if !j.off {
		j.buf = append(j.buf, p[:n]...)
		if len(j.buf) > maxTapped {
			j.off, j.buf = true, nil
		}
		if err == io.EOF && !j.off {
			j.obs.raw(j.buf)
			j.off, j.buf = true, nil
		}
	}
	return n, err
}
