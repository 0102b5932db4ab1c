package serve

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"io"
	"io/fs"
	"mime"
	"net"
	"net/http"
	"net/url"
	"os"
	"path"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/parselbox/parselbox/host/ui"
)

// DefaultAddr is where an app is served when no address is given.
const DefaultAddr = "127.0.0.1:8000"

// DefaultMaxUpload bounds one POST /_upload.
const DefaultMaxUpload = 32 << 20

// MaxConcurrentAPI bounds the /api requests one server has in the
// sandbox at once (each holds a task there); more wait for a slot.
const MaxConcurrentAPI = 16

// TokenHeader carries the token (window.pbx sends it).
const TokenHeader = "X-Parselbox-Token"

// API runs the @api handlers in the sandbox.
type API interface {
	// API calls the handler of (method, path) with the query's params or
	// the raw body, and returns the HTTP status and the JSON to answer.
	API(ctx context.Context, req *Request) (status int, body json.RawMessage, err error)
}

// Request is an /api request, as the sandbox's router gets it.
type Request struct {
	Method string            `json:"method"`
	Path   string            `json:"path"`
	Params map[string]string `json:"params"`
	Body   string            `json:"body"`
	Routes bool              `json:"routes,omitempty"` // list the routes instead
}

// Options configure a Server.
type Options struct {
	Addr  string // host:port; the port may be 0
	Token string // the user's: required of every request beyond loopback
	// PortTries: when the port of Addr is taken, the next ones are tried,
	// this many ports in all (0 or 1: Addr's only). The MCP server's HTTP
	// transport gives each session's sandbox a port of its own this way.
	PortTries int
	Workspace string // the host directory of /workspace
	Files     string // the host directory of /files
	MaxUpload int64  // bytes of one upload; 0: DefaultMaxUpload
	API       API
	Assets    *ui.Assets // Tailwind and daisyUI for pages; nil: none
	Logger    hclog.Logger
}

// Server is the app server of one sandbox.
type Server struct {
	o         Options
	log       hclog.Logger
	key       string // random, this server's: views carry it (never the user's token)
	token     string // the user's token, "" when none
	cookie    string // the cookie that keeps the token: named by port, as cookies ignore ports
	loopback  bool
	ws, files *os.Root
	hs        *http.Server
	ln        net.Listener
	url       string
	live      *live
	slots     chan struct{} // of the /api requests in the sandbox
}

// IsLoopback reports whether host (a name or an IP, without port or
// brackets) is this machine only: localhost in any case, 127.0.0.0/8 or ::1.
// "localhost." is not: Go's resolver asks DNS for it, not /etc/hosts.
func IsLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Validate checks an address and token: beyond loopback a token is needed.
func Validate(addr, token string) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("%q is not host:port: %w", addr, err)
	}
	if _, err := net.LookupPort("tcp", port); err != nil {
		return fmt.Errorf("%q: bad port", addr)
	}
	if !IsLoopback(host) && strings.TrimSpace(token) == "" {
		return fmt.Errorf("%s listens beyond this machine: set a token (serve { token = ... }) so that only you get in", addr)
	}
	if token != "" && len(strings.TrimSpace(token)) < 16 {
		return errors.New("the token must be at least 16 characters")
	}
	return nil
}

// Listen checks the options, binds the address and starts serving.
func Listen(o Options) (*Server, error) {
	if o.Addr == "" {
		o.Addr = DefaultAddr
	}
	if err := Validate(o.Addr, o.Token); err != nil {
		return nil, err
	}
	if o.MaxUpload <= 0 {
		o.MaxUpload = DefaultMaxUpload
	}
	if o.Logger == nil {
		o.Logger = hclog.NewNullLogger()
	}
	s := &Server{o: o, log: o.Logger.Named("serve"), key: rand.Text(), token: strings.TrimSpace(o.Token),
		slots: make(chan struct{}, MaxConcurrentAPI)}
	host, _, _ := net.SplitHostPort(o.Addr)
	s.loopback = IsLoopback(host)
	var err error
	if s.ws, err = os.OpenRoot(o.Workspace); err != nil {
		return nil, err
	}
	if s.files, err = os.OpenRoot(o.Files); err != nil {
		s.ws.Close()
		return nil, err
	}
	if s.ln, err = listen(o.Addr, o.PortTries); err != nil {
		s.ws.Close()
		s.files.Close()
		return nil, fmt.Errorf("serve: %w", err)
	}
	a := s.ln.Addr().(*net.TCPAddr)
	s.cookie = fmt.Sprintf("pbx_token_%d", a.Port)
	h := host
	if a.IP.IsUnspecified() {
		h = "127.0.0.1"
	}
	s.url = "http://" + net.JoinHostPort(h, fmt.Sprint(a.Port))
	s.live = newLive([]string{o.Workspace, o.Files})
	s.hs = &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	go s.hs.Serve(s.ln)
	s.log.Info("serving the workspace", "url", s.url)
	return s, nil
}

// listen binds addr, or when its port is taken, the next free one of
// tries ports.
func listen(addr string, tries int) (net.Listener, error) {
	host, port, _ := net.SplitHostPort(addr)
	first, err := net.LookupPort("tcp", port)
	if err != nil || first == 0 || tries <= 1 {
		return net.Listen("tcp", addr)
	}
	var firstErr error
	for p := first; p < first+tries && p <= 65535; p++ {
		ln, err := net.Listen("tcp", net.JoinHostPort(host, fmt.Sprint(p)))
		if err == nil {
			return ln, nil
		}
		if firstErr == nil {
			firstErr = err
		}
		if !errors.Is(err, syscall.EADDRINUSE) {
			break
		}
	}
	return nil, fmt.Errorf("no free port from %d to %d: %w", first, min(first+tries-1, 65535), firstErr)
}

// URL is where the app is served (http://host:port, no slash).
func (s *Server) URL() string { return s.url }

// Key is the key a view sends with its calls: this server's own, random
// (never the user's token), so that a view of one sandbox cannot call the
// app of another.
func (s *Server) Key() string { return s.key }

// Origins are the origins of the app, for a CSP's connect list.
func (s *Server) Origins() []string {
	u, _ := url.Parse(s.url)
	out := []string{s.url}
	if IsLoopback(u.Hostname()) {
		out = append(out, "http://localhost:"+u.Port(), "http://127.0.0.1:"+u.Port())
	}
	return out
}

// Close stops serving.
func (s *Server) Close() error {
	s.live.close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	err := s.hs.Shutdown(ctx)
	if err != nil {
		err = s.hs.Close()
	}
	s.ws.Close()
	s.files.Close()
	return err
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	if raw, ok := v.(json.RawMessage); ok {
		w.Write(raw)
		return
	}
	json.NewEncoder(w).Encode(v)
}

func errorJSON(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]string{"error": msg})
}

// token is the token the request carries, if any.
func token(r *http.Request) string {
	if t := r.Header.Get(TokenHeader); t != "" {
		return t
	}
	if t, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok {
		return t
	}
	return r.URL.Query().Get("token")
}

// hasKey reports whether the request carries this server's key or the
// user's token (in a header, ?token=, or the cookie ?token= set).
func (s *Server) hasKey(r *http.Request) bool {
	t := token(r)
	if t == "" {
		if c, err := r.Cookie(s.cookie); err == nil {
			t = c.Value
		}
	}
	if t == "" {
		return false
	}
	ok := subtle.ConstantTimeCompare([]byte(t), []byte(s.key)) == 1
	if s.token != "" {
		ok = subtle.ConstantTimeCompare([]byte(t), []byte(s.token)) == 1 || ok
	}
	return ok
}

// sameOrigin reports whether the request's Origin is the app's own.
func (s *Server) sameOrigin(origin, host string) bool {
	u, err := url.Parse(origin)
	return err == nil && u.Scheme == "http" && u.Host == host
}

// ServeHTTP routes a request, after the checks of origin and token.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("X-Content-Type-Options", "nosniff")
	origin := r.Header.Get("Origin")
	foreign := origin != "" && !s.sameOrigin(origin, r.Host)
	if s.loopback {
		// A name that resolves to loopback (DNS rebinding) is not us.
		if h, _, err := net.SplitHostPort(r.Host); err != nil || !IsLoopback(h) {
			errorJSON(w, http.StatusForbidden, "Forbidden: unknown host "+r.Host)
			return
		}
	}
	if foreign {
		w.Header().Set("Vary", "Origin")
		if r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != "" {
			// A preflight: say what a caller with the token may send; the
			// request itself is refused without the token.
			w.Header().Set("Access-Control-Allow-Origin", origin)
			w.Header().Set("Access-Control-Allow-Methods", "GET, POST, PUT, PATCH, DELETE")
			w.Header().Set("Access-Control-Allow-Headers", "Content-Type, "+TokenHeader)
			w.Header().Set("Access-Control-Max-Age", "600")
			w.WriteHeader(http.StatusNoContent)
			return
		}
		if !s.hasKey(r) {
			errorJSON(w, http.StatusForbidden, "Forbidden: a request from another origin needs the token")
			return
		}
		w.Header().Set("Access-Control-Allow-Origin", origin)
	} else if !s.loopback && !s.hasKey(r) {
		w.Header().Set("WWW-Authenticate", `Bearer realm="parselbox"`)
		errorJSON(w, http.StatusUnauthorized, "Unauthorized: this app needs its token (?token=...)")
		return
	}
	if s.token != "" && (r.Header.Get("Service-Worker") == "script" || r.Header.Get("Sec-Fetch-Dest") == "serviceworker") {
		// A service worker of the guest's would see the URLs of the
		// navigations it handles, the next ?token= link's among them.
		errorJSON(w, http.StatusForbidden, "Forbidden: no service workers where a token guards the app")
		return
	}
	if t := r.URL.Query().Get("token"); t != "" && s.hasKey(r) && !foreign {
		http.SetCookie(w, &http.Cookie{Name: s.cookie, Value: t, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
		// The URL holds the token: no Referer may carry it on.
		w.Header().Set("Referrer-Policy", "no-referrer")
		if r.Method == http.MethodGet && r.Header.Get("Sec-Fetch-Mode") == "navigate" {
			// A browser opening the link: the guest's page must not load
			// at this URL, where its script would read the token.
			dropToken(w, r)
			return
		}
	}
	p := r.URL.Path
	switch {
	case r.Method == http.MethodOptions:
		w.WriteHeader(http.StatusNoContent)
	case p == "/_live":
		s.live.serve(w, r)
	case p == "/_upload":
		if r.Method != http.MethodPost {
			errorJSON(w, http.StatusMethodNotAllowed, "POST a multipart form to /_upload")
			return
		}
		s.upload(w, r)
	case p == "/_routes":
		s.api(w, r, &Request{Routes: true})
	case p == "/api" || strings.HasPrefix(p, "/api/"):
		s.apiRequest(w, r)
	case r.Method != http.MethodGet && r.Method != http.MethodHead:
		errorJSON(w, http.StatusMethodNotAllowed, "Method not allowed")
	case strings.HasPrefix(p, "/_pbx/"):
		if !s.asset(w, p) {
			errorJSON(w, http.StatusNotFound, "File not found")
		}
	case strings.HasPrefix(p, "/files/"):
		s.file(w, r, s.files, strings.TrimPrefix(p, "/files/"), true)
	default:
		s.file(w, r, s.ws, p, false)
	}
}

// dropToken answers a browser's navigation to a URL with ?token= (the
// cookie is set) with a page of ours that replaces it, in the document
// and its history entry, by the URL without the token: the guest's page
// loads there, with the cookie, and its script never sees the token. It
// is a page and not a redirect because a redirect of a navigation that
// began on another site (the user clicking the link in a chat) would be
// that site's, and Chromium would not send the SameSite=Strict cookie
// after it; location.replace is a navigation of this origin's own. In a
// frame of another site the cookie goes nowhere (SameSite, and third-party
// cookies): the page offers to open the app in a tab of its own instead.
func dropToken(w http.ResponseWriter, r *http.Request) {
	p := "/" + strings.TrimLeft(r.URL.EscapedPath(), "/") // "//host/" would be another origin
	clean := p
	var keep []string
	for _, kv := range strings.Split(r.URL.RawQuery, "&") {
		k, _, _ := strings.Cut(kv, "=")
		if k, err := url.QueryUnescape(k); kv != "" && (err != nil || k != "token") {
			keep = append(keep, kv)
		}
	}
	if len(keep) > 0 {
		clean += "?" + strings.Join(keep, "&")
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("Content-Security-Policy", "default-src 'none'; script-src '"+dropTokenHash+"'")
	page := `<!DOCTYPE html><html><head><meta charset="utf-8"><title>parselbox</title></head><body>`
	if r.Header.Get("Sec-Fetch-Dest") != "document" && r.Header.Get("Sec-Fetch-Site") == "cross-site" {
		page += `<p>This app opens in a tab of its own: <a href="` + html.EscapeString(p+"?"+r.URL.RawQuery) +
			`" target="_blank" rel="noopener">open it</a>.</p></body></html>`
	} else {
		page += `<p><a id="pbx-next" href="` + html.EscapeString(clean) + `">Open the app</a></p><script>` +
			dropTokenScript + `</script></body></html>`
	}
	io.WriteString(w, page)
}

// dropTokenScript goes to the URL without the token (the link's), from
// this origin whatever the path, keeping the fragment.
const dropTokenScript = `location.replace(location.origin+document.getElementById("pbx-next").getAttribute("href")+location.hash)`

var dropTokenHash = func() string {
	h := sha256.Sum256([]byte(dropTokenScript))
	return "sha256-" + base64.StdEncoding.EncodeToString(h[:])
}()

func (s *Server) apiRequest(w http.ResponseWriter, r *http.Request) {
	req := &Request{Method: r.Method, Path: r.URL.Path, Params: map[string]string{}}
	for k, v := range r.URL.Query() {
		if k != "token" {
			req.Params[k] = v[0]
		}
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		b, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.o.MaxUpload))
		if err != nil {
			errorJSON(w, http.StatusRequestEntityTooLarge, "the body is over the limit of "+fmt.Sprint(s.o.MaxUpload)+" bytes")
			return
		}
		req.Body = string(b)
	}
	s.api(w, r, req)
}

func (s *Server) api(w http.ResponseWriter, r *http.Request, req *Request) {
	if s.o.API == nil {
		errorJSON(w, http.StatusNotFound, "No handler for "+req.Method+" "+req.Path)
		return
	}
	select {
	case s.slots <- struct{}{}:
		defer func() { <-s.slots }()
	case <-r.Context().Done():
		errorJSON(w, http.StatusServiceUnavailable, "gave up waiting for the sandbox")
		return
	}
	status, body, err := s.o.API.API(r.Context(), req)
	if err != nil {
		errorJSON(w, http.StatusInternalServerError, err.Error())
		return
	}
	writeJSON(w, status, body)
}

// cleanPath turns a URL path into a path under a root ("." for the root
// itself), or "" when it leaves the root or names a hidden file.
func cleanPath(p string) string {
	if strings.Contains(p, "\\") || strings.ContainsRune(p, 0) {
		return ""
	}
	for _, seg := range strings.Split(p, "/") {
		if seg == ".." || (strings.HasPrefix(seg, ".") && seg != ".") {
			return ""
		}
	}
	c := strings.TrimLeft(path.Clean("/"+p), "/")
	if c == "" {
		return "."
	}
	return c
}

func (s *Server) file(w http.ResponseWriter, r *http.Request, root *os.Root, p string, flat bool) {
	name := cleanPath(p)
	if flat && name == "." {
		name = "index.html"
	}
	if name == "" || flat && strings.Contains(name, "/") {
		errorJSON(w, http.StatusBadRequest, "Invalid path")
		return
	}
	fi, err := root.Stat(name)
	if err == nil && fi.IsDir() {
		if !strings.HasSuffix(r.URL.Path, "/") {
			http.Redirect(w, r, r.URL.Path+"/", http.StatusFound)
			return
		}
		dir := name
		name = path.Join(name, "index.html")
		fi, err = root.Stat(name)
		if errors.Is(err, fs.ErrNotExist) && !flat {
			s.dirIndex(w, root, dir)
			return
		}
	}
	if err != nil && strings.Contains(err.Error(), "escapes") { // a link out of the root
		errorJSON(w, http.StatusBadRequest, "Invalid path")
		return
	}
	if err != nil || !fi.Mode().IsRegular() {
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			s.log.Debug("serving a file", "path", name, "error", err)
		}
		errorJSON(w, http.StatusNotFound, "File not found")
		return
	}
	f, err := root.Open(name)
	if err != nil {
		errorJSON(w, http.StatusNotFound, "File not found")
		return
	}
	defer f.Close()
	ctype := contentType(name)
	w.Header().Set("Content-Type", ctype)
	w.Header().Set("Cache-Control", "no-cache")
	if strings.HasPrefix(ctype, "text/html") {
		b, err := io.ReadAll(io.LimitReader(f, 64<<20))
		if err != nil {
			errorJSON(w, http.StatusInternalServerError, err.Error())
			return
		}
		io.WriteString(w, s.page(string(b)))
		return
	}
	http.ServeContent(w, r, "", fi.ModTime(), f)
}

// dirIndex is the page of a directory without an index.html: what it
// holds (hidden files and names the server refuses left out), each a
// link, and at the root the greeting a page written there replaces. It
// is a page as served (live reload): the browser shows an index.html once
// the code writes one.
func (s *Server) dirIndex(w http.ResponseWriter, root *os.Root, dir string) {
	f, err := root.Open(dir)
	if err != nil {
		errorJSON(w, http.StatusNotFound, "File not found")
		return
	}
	entries, err := f.ReadDir(-1)
	f.Close()
	if err != nil {
		errorJSON(w, http.StatusInternalServerError, err.Error())
		return
	}
	slices.SortFunc(entries, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	title := "/" + strings.TrimPrefix(dir+"/", "./")
	var b strings.Builder
	b.WriteString("<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>" + html.EscapeString(title) + "</title></head><body>")
	if dir == "." {
		b.WriteString("<h1>hello from parselbox!</h1><p>No index.html in /workspace yet; write one and this page shows it.</p>")
	} else {
		b.WriteString("<h1>" + html.EscapeString(title) + "</h1><p><a href=\"../\">../</a></p>")
	}
	b.WriteString("<ul>")
	for _, e := range entries {
		name := e.Name()
		if cleanPath(name) != name { // hidden, or a name the server refuses (a backslash)
			continue
		}
		if e.IsDir() {
			name += "/"
		}
		b.WriteString(`<li><a href="` + html.EscapeString((&url.URL{Path: "./" + name}).EscapedPath()) + `">` + html.EscapeString(name) + "</a></li>")
	}
	b.WriteString("</ul></body></html>")
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-cache")
	w.Write([]byte(s.page(b.String())))
}

// page is an HTML file as served: window.pbx (same origin), the assets
// (when the page has none of its own <head> work to keep) and live reload.
func (s *Server) page(html string) string {
	assets := ""
	if s.o.Assets != nil {
		assets = `<link rel="stylesheet" href="/_pbx/daisyui.css"><script src="/_pbx/tailwind.js"></script>`
	}
	return strings.Replace(ui.Render(html, ui.SameOrigin, ""), ui.AssetsMarker, assets, 1) + liveScript
}

const liveScript = `<script>(function(){var es=new EventSource("/_live");window.pbxLive=es;es.onmessage=function(e){if(e.data==="reload")location.reload()};})();</script>`

func contentType(name string) string {
	switch ext := strings.ToLower(path.Ext(name)); ext {
	case ".ts", ".tsx", ".py", ".md":
		return "text/plain; charset=utf-8"
	case ".html", ".htm":
		return "text/html; charset=utf-8"
	default:
		if t := mime.TypeByExtension(ext); t != "" {
			return t
		}
		return "application/octet-stream"
	}
}

// uploadName is the name an uploaded file gets in /files: its base name,
// without leading dots; upload_<ms> when nothing is left.
func uploadName(name string) string {
	name = strings.Map(func(r rune) rune {
		if r < 0x20 || r == '/' || r == 0x7f {
			return -1
		}
		return r
	}, strings.TrimLeft(path.Base(strings.ReplaceAll(name, "\\", "/")), "."))
	if name == "" {
		return fmt.Sprintf("upload_%d", time.Now().UnixMilli())
	}
	return name
}

type uploaded struct {
	Name string `json:"name"`
	Path string `json:"path"`
	Size int64  `json:"size"`
}

func (s *Server) upload(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, s.o.MaxUpload)
	mr, err := r.MultipartReader()
	if err != nil {
		errorJSON(w, http.StatusBadRequest, "POST a multipart/form-data body: "+err.Error())
		return
	}
	var out []uploaded
	for {
		part, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			s.uploadError(w, err)
			return
		}
		fname := part.FileName()
		if fname == "" {
			part.Close()
			continue // a plain field
		}
		name := uploadName(fname)
		f, err := s.files.OpenFile(name, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
		if err != nil {
			errorJSON(w, http.StatusBadRequest, "cannot write "+name+": "+err.Error())
			return
		}
		n, err := io.Copy(f, part)
		f.Close()
		if err != nil {
			s.files.Remove(name)
			s.uploadError(w, err)
			return
		}
		out = append(out, uploaded{Name: name, Path: "/files/" + name, Size: n})
	}
	if len(out) == 0 {
		errorJSON(w, http.StatusBadRequest, "No files in request")
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"uploaded": out})
}

func (s *Server) uploadError(w http.ResponseWriter, err error) {
	if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
		errorJSON(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("the upload is over the limit of %d bytes", s.o.MaxUpload))
		return
	}
	errorJSON(w, http.StatusBadRequest, "reading the upload: "+err.Error())
}

// asset serves the pinned Tailwind and daisyUI to pages.
func (s *Server) asset(w http.ResponseWriter, name string) bool {
	if s.o.Assets == nil {
		return false
	}
	var ctype, body string
	switch name {
	case "/_pbx/tailwind.js":
		ctype, body = "text/javascript; charset=utf-8", s.o.Assets.Tailwind
	case "/_pbx/daisyui.css":
		ctype, body = "text/css; charset=utf-8", s.o.Assets.DaisyUI
	default:
		return false
	}
	w.Header().Set("Content-Type", ctype)
	w.Header().Set("Cache-Control", "max-age=3600")
	io.WriteString(w, body)
	return true
}
