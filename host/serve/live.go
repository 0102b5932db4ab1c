package serve

import (
	"fmt"
	"io/fs"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// Live reload: while a page listens on /_live, the directories are polled
// for changes to the files a page is made of; a change, once the files
// stop changing (debounced), sends "reload" to every listener.

const (
	pollEvery = 150 * time.Millisecond
	maxWalk   = 20_000 // files looked at per poll
)

// liveExts are the extensions whose change reloads pages.
var liveExts = map[string]bool{".html": true, ".htm": true, ".css": true, ".js": true, ".png": true,
	".jpg": true, ".jpeg": true, ".svg": true, ".ico": true, ".gif": true, ".webp": true, ".json": true}

type live struct {
	dirs []string

	mu      sync.Mutex
	clients map[chan struct{}]struct{}
	polling bool
	done    chan struct{}
	closed  bool
}

func newLive(dirs []string) *live {
	return &live{dirs: dirs, clients: map[chan struct{}]struct{}{}, done: make(chan struct{})}
}

func (l *live) close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.closed {
		l.closed = true
		close(l.done)
	}
}

// signature sums what pages are made of: names, sizes, times.
func (l *live) signature() string {
	var b strings.Builder
	n := 0
	for _, d := range l.dirs {
		filepath.WalkDir(d, func(p string, e fs.DirEntry, err error) error {
			if err != nil {
				return nil
			}
			if strings.HasPrefix(e.Name(), ".") && p != d {
				if e.IsDir() {
					return filepath.SkipDir
				}
				return nil
			}
			if n++; n > maxWalk {
				return filepath.SkipAll
			}
			if e.IsDir() || !liveExts[strings.ToLower(filepath.Ext(p))] {
				return nil
			}
			if fi, err := e.Info(); err == nil {
				fmt.Fprintf(&b, "%s %d %d\n", p, fi.Size(), fi.ModTime().UnixNano())
			}
			return nil
		})
	}
	return b.String()
}

// poll runs while someone listens; last is the signature when it started.
func (l *live) poll(last string) {
	pending := ""
	t := time.NewTicker(pollEvery)
	defer t.Stop()
	for {
		select {
		case <-l.done:
			return
		case <-t.C:
		}
		l.mu.Lock()
		if len(l.clients) == 0 {
			l.polling = false
			l.mu.Unlock()
			return
		}
		l.mu.Unlock()
		sig := l.signature()
		switch {
		case sig != last && sig != pending:
			pending = sig // changed: wait until it stays so for a poll
		case sig != last && sig == pending:
			last, pending = sig, ""
			l.mu.Lock()
			for c := range l.clients {
				select {
				case c <- struct{}{}:
				default:
				}
			}
			l.mu.Unlock()
		}
	}
}

func (l *live) serve(w http.ResponseWriter, r *http.Request) {
	fl, ok := w.(http.Flusher)
	if !ok {
		errorJSON(w, http.StatusInternalServerError, "streaming unsupported")
		return
	}
	c := make(chan struct{}, 1)
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return
	}
	l.clients[c] = struct{}{}
	if !l.polling {
		l.polling = true
		// Before the page hears it is connected: a change after that reloads it.
		go l.poll(l.signature())
	}
	l.mu.Unlock()
	defer func() {
		l.mu.Lock()
		delete(l.clients, c)
		l.mu.Unlock()
	}()
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("Connection", "keep-alive")
	w.WriteHeader(http.StatusOK)
	fmt.Fprint(w, ": connected\n\n")
	fl.Flush()
	ping := time.NewTicker(25 * time.Second)
	defer ping.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case <-l.done:
			return
		case <-ping.C:
			fmt.Fprint(w, ": ping\n\n")
		case <-c:
			fmt.Fprint(w, "data: reload\n\n")
		}
		fl.Flush()
	}
}
