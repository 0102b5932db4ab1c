package mcpserver

import (
	"io"
	"os"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Stdio is the transport of one MCP session over in and out, the process's
// stdin and stdout (neither is closed when the session ends). When in is a
// pipe or a socket, as when a client starts the server, it is read through
// Go's network poller instead of a blocking read: the thread that reads
// the next message then runs its handler itself, where a blocking read
// hands the message to another thread woken for it, a wake-up that costs
// a scheduling delay on every request of a busy machine. The returned
// function restores in's blocking mode; call it when the session is over.
func Stdio(in io.Reader, out io.Writer) (mcp.Transport, func()) {
	r, restore := io.NopCloser(in), func() {}
	if f, ok := in.(*os.File); ok {
		if p, undo, ok := pollable(f); ok {
			r, restore = p, undo
		}
	}
	return &mcp.IOTransport{Reader: r, Writer: nopWriteCloser{out}}, restore
}

// nopWriteCloser keeps stdout open when the MCP connection closes.
type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
