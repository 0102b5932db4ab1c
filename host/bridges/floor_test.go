package bridges_test

import (
	"bufio"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"
)

// rawEchoEnv names the socket path on which the test binary, started with
// it set, serves the floor's echo (serveRawEcho) instead of running tests.
const rawEchoEnv = "PARSELBOX_TEST_RAW_ECHO"

// BenchmarkCallRawSocketFloor is the floor of BenchmarkCallPlugin: the
// same small call to another process, one at a time, over a bare Unix
// socket with the goroutines of the Calls stream (the caller writes, one
// reader goroutine per side, a goroutine per call in the callee, which runs
// on one processor as a bridge does) and nothing else: no HTTP/2 framing,
// no gRPC writer goroutines, no protobuf, no tool engine. What
// BenchmarkCallPlugin costs beyond it is the bridge protocol's transport and
// the SDK; what this costs is the process hop itself, in Go, on this
// machine.
func BenchmarkCallRawSocketFloor(b *testing.B) {
	path := filepath.Join(b.TempDir(), "echo.sock")
	cmd := exec.Command(testExe(b))
	cmd.Env = []string{rawEchoEnv + "=" + path, "GOMAXPROCS=1"}
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	if _, err := bufio.NewReader(out).ReadString('\n'); err != nil { // listening
		b.Fatal(err)
	}
	conn, err := net.Dial("unix", path)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close()
	c := newRawCaller(conn)
	lat := make([]time.Duration, 0, b.N)
	host0, callee0 := selfUsage(b), procUsage(b, cmd.Process.Pid)
	for b.Loop() {
		t0 := time.Now()
		if _, err := c.call(context.Background(), echoArgs); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(t0))
	}
	host1, callee1 := selfUsage(b), procUsage(b, cmd.Process.Pid)
	reportPercentiles(b, lat)
	host1.report(b, host0, "host", len(lat))
	callee1.report(b, callee0, "plugin", len(lat))
}

// rawCaller is the caller's side of the floor: calls numbered by id, one
// reader goroutine handing each answer to its caller.
type rawCaller struct {
	conn    net.Conn
	sendMu  sync.Mutex
	mu      sync.Mutex
	nextID  uint64
	waiting map[uint64]chan []byte
}

func newRawCaller(conn net.Conn) *rawCaller {
	c := &rawCaller{conn: conn, waiting: map[uint64]chan []byte{}}
	go func() {
		r := bufio.NewReader(conn)
		for {
			id, msg, err := readRawFrame(r)
			if err != nil {
				return
			}
			c.mu.Lock()
			ch := c.waiting[id]
			delete(c.waiting, id)
			c.mu.Unlock()
			if ch != nil {
				ch <- msg
			}
		}
	}()
	return c
}

func (c *rawCaller) call(ctx context.Context, msg []byte) ([]byte, error) {
	ch := make(chan []byte, 1)
	c.mu.Lock()
	c.nextID++
	id := c.nextID
	c.waiting[id] = ch
	c.mu.Unlock()
	c.sendMu.Lock()
	err := writeRawFrame(c.conn, id, msg)
	c.sendMu.Unlock()
	if err != nil {
		return nil, err
	}
	select {
	case out := <-ch:
		return out, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// serveRawEcho is the callee of the floor: it answers each message on one
// connection with the message wrapped in a JSON object, from a goroutine
// per message, on one processor.
func serveRawEcho(path string) {
	runtime.GOMAXPROCS(1)
	l, err := net.Listen("unix", path)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println("listening")
	conn, err := l.Accept()
	if err != nil {
		os.Exit(1)
	}
	r := bufio.NewReader(conn)
	var sendMu sync.Mutex
	for {
		id, msg, err := readRawFrame(r)
		if err != nil {
			os.Exit(0)
		}
		go func() {
			out := append(append([]byte(`{"echo":`), msg...), '}')
			sendMu.Lock()
			defer sendMu.Unlock()
			_ = writeRawFrame(conn, id, out)
		}()
	}
}

// A frame is its length (4 bytes), the call's id (8 bytes) and the message.
func writeRawFrame(w io.Writer, id uint64, msg []byte) error {
	buf := make([]byte, 12+len(msg))
	binary.LittleEndian.PutUint32(buf, uint32(8+len(msg)))
	binary.LittleEndian.PutUint64(buf[4:], id)
	copy(buf[12:], msg)
	_, err := w.Write(buf)
	return err
}

func readRawFrame(r *bufio.Reader) (uint64, []byte, error) {
	var n [4]byte
	if _, err := io.ReadFull(r, n[:]); err != nil {
		return 0, nil, err
	}
	buf := make([]byte, binary.LittleEndian.Uint32(n[:]))
	if _, err := io.ReadFull(r, buf); err != nil {
		return 0, nil, err
	}
	return binary.LittleEndian.Uint64(buf), buf[8:], nil
}
