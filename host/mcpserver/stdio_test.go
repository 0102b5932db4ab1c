//go:build unix

package mcpserver

import (
	"context"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/sys/unix"
)

// A session over Stdio on OS pipes, as a client that starts the server
// connects: the code runs, stdin is read through the poller (a read
// deadline works only there) while the session lasts, and it is blocking
// again afterwards.
func TestStdioOverPipes(t *testing.T) {
	inR, inW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer inR.Close()
	defer outW.Close()
	// A started server inherits a blocking stdin; os.Pipe gives polled
	// (non-blocking) ends: make the server's end blocking, as it would be.
	rc, err := inR.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	nonblocking := func() bool {
		var flags int
		if err := rc.Control(func(fd uintptr) { flags, err = unix.FcntlInt(fd, unix.F_GETFL, 0) }); err != nil {
			t.Fatal(err)
		}
		return flags&unix.O_NONBLOCK != 0
	}
	if err := rc.Control(func(fd uintptr) { err = unix.SetNonblock(int(fd), false) }); err != nil || nonblocking() {
		t.Fatalf("making stdin blocking: %v", err)
	}

	tr, restore := Stdio(inR, outW)
	p, ok := tr.(*mcp.IOTransport).Reader.(*os.File)
	if !ok {
		t.Fatalf("stdin is read as %T, not a polled *os.File", tr.(*mcp.IOTransport).Reader)
	}
	if err := p.SetReadDeadline(time.Time{}); err != nil {
		t.Errorf("stdin is not read through the poller: %v", err)
	}
	srv := newServer(t, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx, tr) }()
	c, _ := newClient(nil)
	cs, err := c.Connect(t.Context(), &mcp.IOTransport{Reader: outR, Writer: inW}, nil)
	if err != nil {
		cancel()
		t.Fatalf("connecting: %v", err)
	}
	if got := run(t, cs, "6 * 7"); got.Result != float64(42) {
		t.Errorf("6 * 7 over stdio = %+v", got)
	}
	cs.Close()
	cancel()
	if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
		t.Errorf("Run: %v", err)
	}
	restore()
	if nonblocking() {
		t.Error("stdin is still non-blocking after the session")
	}
}
