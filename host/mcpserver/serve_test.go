package mcpserver

import (
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/parselbox/parselbox/host"
	"github.com/parselbox/parselbox/host/ui"
)

// fetchApp fetches url with the headers; it returns the status and the body.
func fetchApp(t *testing.T, u string, header map[string]string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), "GET", u, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

// With the HTTP transport and a fixed serve port, every session's app is
// served, each on a port of its own from the configured one up (its own
// origin), and no session reaches another's workspace or routes: not
// directly, not from its pages, not with its views' key.
func TestHTTPServePerSession(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	srv := newServer(t, Options{
		Settings: with(func(s *Settings) { s.PoolSize = 1 }),
		Config:   host.Config{Serve: &host.ServeConfig{Addr: "127.0.0.1:" + strconv.Itoa(base)}},
	})
	endpoint := startHTTP(t, srv)
	var apps [2]string
	var keys [2]string
	var sessions [2]*mcp.ClientSession
	for i, name := range []string{"a", "b"} {
		c, _ := newClient(nil)
		cs, err := connectHTTP(t, endpoint, "", c)
		if err != nil {
			t.Fatalf("session %s: %v", name, err)
		}
		sessions[i] = cs
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: ToolName, Arguments: map[string]any{"code": `
open("index.html", "w").write("<p>page of ` + name + `</p>")
open("only_` + name + `.txt", "w").write("` + name + `")
@api.get("/who")
def who(params):
    return "` + name + `"
@api.get("/only_` + name + `")
def only(params):
    return "` + name + `"
display("<b>view of ` + name + `</b>")
1`}})
		if err != nil {
			t.Fatal(err)
		}
		r := decode(t, res)
		if r.Error != "" {
			t.Fatalf("session %s: %s", name, r.Error)
		}
		u, err := url.Parse(r.App)
		if err != nil || u.Hostname() != "127.0.0.1" {
			t.Fatalf("session %s: the result says the app is at %q", name, r.App)
		}
		if p, _ := strconv.Atoi(u.Port()); p < base || p >= base+100 {
			t.Errorf("session %s is served on port %d, not from the configured %d up", name, p, base)
		}
		if !strings.Contains(cs.InitializeResult().Instructions, "your workspace is served at "+r.App) {
			t.Errorf("session %s: the guide does not say where its app is (%s)", name, r.App)
		}
		apps[i] = r.App
		view, _ := res.Meta[ui.ViewMetaKey].(string)
		m := regexp.MustCompile(`key:"([^"]+)"`).FindStringSubmatch(view)
		if m == nil {
			t.Fatalf("session %s: no key in the view: %.300s", name, view)
		}
		keys[i] = m[1]
	}
	a, b := apps[0], apps[1]
	if a == b {
		t.Fatalf("both sessions are served at %s", a)
	}
	for i, name := range []string{"a", "b"} {
		app, other := apps[i], apps[1-i]
		if st, body := fetchApp(t, app+"/", nil); st != 200 || !strings.Contains(body, "page of "+name) {
			t.Errorf("%s's page: %d %.200s", name, st, body)
		}
		if st, body := fetchApp(t, app+"/api/who", nil); st != 200 || body != `"`+name+`"` {
			t.Errorf("%s's route: %d %s", name, st, body)
		}
		// The other session's file and route are not here.
		o := "a"
		if name == "a" {
			o = "b"
		}
		if st, _ := fetchApp(t, app+"/only_"+o+".txt", nil); st != 404 {
			t.Errorf("%s's app serves %s's file: %d", name, o, st)
		}
		if st, body := fetchApp(t, app+"/api/only_"+o, nil); st != 404 {
			t.Errorf("%s's app runs %s's route: %d %s", name, o, st, body)
		}
		// The other session's pages (another origin) are refused, with or
		// without their views' key; with this session's key, let in.
		if st, body := fetchApp(t, app+"/api/who", map[string]string{"Origin": other}); st != 403 {
			t.Errorf("%s's route from %s's origin: %d %s", name, o, st, body)
		}
		if st, body := fetchApp(t, app+"/api/who", map[string]string{"Origin": other, "X-Parselbox-Token": keys[1-i]}); st != 403 {
			t.Errorf("%s's route from %s's origin with %s's key: %d %s", name, o, o, st, body)
		}
		if st, body := fetchApp(t, app+"/api/who", map[string]string{"Origin": "null", "X-Parselbox-Token": keys[i]}); st != 200 {
			t.Errorf("%s's route from a view with its key: %d %s", name, st, body)
		}
	}

	// The port of a session that ended is not the next session's: a page
	// of it left open must not meet another session's app.
	sessions[0].Close()
	waitFor(t, 2*time.Minute, "the end of session a", func() bool { return srv.SessionCount() == 1 })
	hostport := strings.TrimPrefix(a, "http://")
	waitFor(t, 2*time.Minute, "the port of session a to close", func() bool {
		c, err := net.Dial("tcp", hostport)
		if err == nil {
			c.Close()
		}
		return err != nil
	})
	for _, name := range []string{"c", "d"} {
		c, _ := newClient(nil)
		cs, err := connectHTTP(t, endpoint, "", c)
		if err != nil {
			t.Fatalf("session %s: %v", name, err)
		}
		if r := run(t, cs, "1"); r.App == "" || r.App == a {
			t.Errorf("session %s is served at %q (session a was at %s)", name, r.App, a)
		}
	}
}

// With the HTTP transport and the apps served beyond loopback, each
// session's app has a token of its own, in the app link of the session's
// results: the link opens that session's app (and the cookie it sets
// keeps it open), the session's token opens no other session's app, and
// the configured token, which every session's app would share, opens none.
func TestHTTPServeTokenPerSession(t *testing.T) {
	t.Parallel()
	const configured = "configured-serve-token-0123456789"
	srv := newServer(t, Options{
		Settings: with(func(s *Settings) { s.PoolSize = 1 }),
		Config:   host.Config{Serve: &host.ServeConfig{Addr: "0.0.0.0:0", Token: configured}},
	})
	endpoint := startHTTP(t, srv)
	var links, apps, tokens [2]string
	for i, name := range []string{"a", "b"} {
		c, _ := newClient(nil)
		cs, err := connectHTTP(t, endpoint, "", c)
		if err != nil {
			t.Fatalf("session %s: %v", name, err)
		}
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: ToolName, Arguments: map[string]any{"code": `
open("index.html", "w").write("<p>page of ` + name + `</p>")
1`}})
		if err != nil {
			t.Fatal(err)
		}
		r := decode(t, res)
		u, err := url.Parse(r.App)
		if r.Error != "" || err != nil || u.Query().Get("token") == "" || u.Path != "/" {
			t.Fatalf("session %s: the result's app link %q (error %s)", name, r.App, r.Error)
		}
		links[i], tokens[i] = r.App, u.Query().Get("token")
		u.RawQuery, u.Path = "", ""
		apps[i] = u.String()
		if tokens[i] == configured {
			t.Fatalf("session %s's link carries the configured token", name)
		}
	}
	if tokens[0] == tokens[1] {
		t.Fatalf("both sessions' apps have the token %s", tokens[0])
	}
	jar, _ := cookiejar.New(nil)
	browser := &http.Client{Jar: jar}
	for i, name := range []string{"a", "b"} {
		other := 1 - i
		res, err := browser.Get(links[i])
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != 200 || !strings.Contains(string(body), "page of "+name) {
			t.Errorf("%s's link: %d %.200s", name, res.StatusCode, body)
		}
		// The cookie the link set keeps the app open.
		if res, err := browser.Get(apps[i] + "/index.html"); err != nil || res.StatusCode != 200 {
			t.Errorf("%s's app after its link, with the cookie: %v %v", name, res, err)
		} else {
			res.Body.Close()
		}
		for what, header := range map[string]map[string]string{
			"no token":              nil,
			"the configured token":  {"Authorization": "Bearer " + configured},
			"the other's token":     {"Authorization": "Bearer " + tokens[other]},
			"the other's, as query": nil,
		} {
			u := apps[i] + "/"
			if what == "the other's, as query" {
				u += "?token=" + url.QueryEscape(tokens[other])
			}
			if st, body := fetchApp(t, u, header); st != http.StatusUnauthorized {
				t.Errorf("%s's app with %s: %d %.200s", name, what, st, body)
			}
		}
		if st, body := fetchApp(t, apps[i]+"/", map[string]string{"Authorization": "Bearer " + tokens[i]}); st != 200 || !strings.Contains(body, "page of "+name) {
			t.Errorf("%s's app with its token: %d %.200s", name, st, body)
		}
	}
}
