package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"time"

	"github.com/parselbox/parselbox/host/mcpserver"
)

// rawStdio is a minimal MCP client over stdio, as an agent's own client may
// be: one goroutine writes a newline-delimited JSON-RPC request to the
// server's stdin and reads the server's stdout up to the line that answers
// it. The go-sdk client that the other stdio figures use hands every
// message between goroutines and decodes it several times over (each
// decode allocating a 32 KB buffer), which costs about as much as the
// server's side (see mcp_stdio_raw_noop_p50_ms against
// mcp_stdio_noop_p50_ms): measured with this client, the round trip is
// what the server and the process boundary cost, which is what Parselbox
// adds for a client that is not the go-sdk's.
type rawStdio struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Reader
	id  int
	req []byte // the request being written, reused
}

// startRawStdio starts cmd and opens an MCP session on it: initialize,
// then notifications/initialized.
func startRawStdio(cmd *exec.Cmd) (*rawStdio, error) {
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	c := &rawStdio{cmd: cmd, in: in, out: bufio.NewReaderSize(out, 64<<10)}
	_, err = c.call("initialize",
		`{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench-raw","version":"1"}}`)
	if err == nil {
		_, err = io.WriteString(in, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n")
	}
	if err != nil {
		c.close()
		return nil, fmt.Errorf("initializing: %w", err)
	}
	return c, nil
}

// rawMessage is what the raw client reads of a message from the server.
type rawMessage struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// call sends one request and returns its result. Notifications from the
// server are skipped; a request from it (the client declares no
// capabilities, so none is expected) is an error.
func (c *rawStdio) call(method, params string) (json.RawMessage, error) {
	c.id++
	id := strconv.Itoa(c.id)
	c.req = append(c.req[:0], `{"jsonrpc":"2.0","id":`...)
	c.req = append(c.req, id...)
	c.req = append(c.req, `,"method":`...)
	c.req = strconv.AppendQuote(c.req, method)
	c.req = append(c.req, `,"params":`...)
	c.req = append(c.req, params...)
	c.req = append(c.req, "}\n"...)
	if _, err := c.in.Write(c.req); err != nil {
		return nil, err
	}
	for {
		line, err := c.out.ReadBytes('\n')
		if err != nil {
			return nil, fmt.Errorf("reading the answer to %s: %w", method, err)
		}
		var m rawMessage
		if err := json.Unmarshal(line, &m); err != nil {
			return nil, fmt.Errorf("answer to %s: %w: %q", method, err, line)
		}
		switch {
		case m.Method != "" && m.ID != nil:
			return nil, fmt.Errorf("the server asked %s while answering %s", m.Method, method)
		case m.Method != "" || !bytes.Equal(m.ID, []byte(id)):
			continue // a notification, or an answer to something else
		case m.Error != nil:
			return nil, fmt.Errorf("%s: error %d: %s", method, m.Error.Code, m.Error.Message)
		}
		return m.Result, nil
	}
}

// execute runs code with execute_code and returns the text of the result.
func (c *rawStdio) execute(code string) (string, error) {
	q, err := json.Marshal(code)
	if err != nil {
		return "", err
	}
	res, err := c.call("tools/call", `{"name":"`+mcpserver.ToolName+`","arguments":{"code":`+string(q)+`}}`)
	if err != nil {
		return "", err
	}
	var r struct {
		Content []struct {
			Type, Text string
		} `json:"content"`
		IsError bool `json:"isError"`
	}
	if err := json.Unmarshal(res, &r); err != nil {
		return "", err
	}
	if r.IsError || len(r.Content) == 0 || r.Content[0].Type != "text" {
		return "", fmt.Errorf("execute_code(%q) = %s", code, res)
	}
	return r.Content[0].Text, nil
}

// close ends the session as a client does, by closing the server's stdin,
// and waits for the server to exit (killing it after 10 s).
func (c *rawStdio) close() error {
	c.in.Close()
	done := make(chan error, 1)
	go func() { done <- c.cmd.Wait() }()
	select {
	case err := <-done:
		return err
	case <-time.After(10 * time.Second):
		c.cmd.Process.Kill()
		return errors.Join(errors.New("the server did not exit on stdin's end"), <-done)
	}
}

// callRawExec times one execute_code on c and checks its text is want.
func callRawExec(c *rawStdio, code, want string) (time.Duration, error) {
	t0 := time.Now()
	text, err := c.execute(code)
	d := time.Since(t0)
	if err != nil {
		return 0, err
	}
	if text != want {
		return 0, fmt.Errorf("execute_code(%q) = %s, want %s", code, text, want)
	}
	return d, nil
}
