package host

import (
	"strings"
	"sync"
	"testing"
	"time"
)

// A preparation that takes long is said, with what it waits for; the wait
// ends when the preparation does.
func TestWaitNoting(t *testing.T) {
	t.Parallel()
	msgs := make(chan string, 1)
	s := &Sandbox{cfg: Config{Notify: func(m string) {
		select {
		case msgs <- m:
		default: // the test reads the first only
		}
	}}}
	var wg sync.WaitGroup
	wg.Add(1)
	returned := make(chan struct{})
	go func() {
		s.waitNoting(&wg, time.Millisecond, "starting bridges", func() []string { return []string{"gql", "api"} })
		close(returned)
	}()
	first := <-msgs // said while it waits
	if !strings.HasPrefix(first, "starting bridges: still waiting for gql, api (") {
		t.Errorf("message: %q", first)
	}
	wg.Done()
	<-returned
}
