// Package serve serves a sandbox's workspace as a live web app, from the Go
// host (the sandbox process opens no port):
//
//   - static files from /workspace (index.html for a directory, or a page
//     listing its files when it has none), with
//     content types; a path that leaves it, or names a hidden file, is
//     refused; HTML pages get window.pbx and live reload;
//   - /files/<name>: the sandbox's input files;
//   - /_live: Server-Sent Events, "reload" when a page's file changes
//     (polled while someone listens, debounced);
//   - POST /_upload: multipart files into /files, within a size limit;
//   - /_routes and /api/...: the handlers the code registered with
//     @api.get/post/put/patch/delete(path), run in the sandbox (API).
//
// It binds 127.0.0.1 by default (Options.PortTries: the next free port
// when the one asked for is taken). It sends no wildcard CORS header: a
// page from another origin gets an answer only with this server's key (a
// random one, which the views the MCP renderer shows carry in
// window.pbx.key) or the user's token, so that a web site the user visits,
// or the app of another sandbox, cannot drive tools that run with the
// host's credentials. Bound beyond loopback, every request needs the
// token (Bearer, the X-Parselbox-Token header, or ?token= once, which sets
// a cookie named by the port) or the key. A browser's navigation with
// ?token= gets a page of the server's own that replaces the URL by the
// one without the token before the guest's page loads (whose script
// would otherwise read the token and could send it anywhere); the cookie
// keeps the app open. With a token, no service worker is served (it would
// see the URLs of the navigations it handles).
//
//	srv, err := serve.Listen(serve.Options{Addr: "127.0.0.1:8000", Workspace: dir, Files: files, API: sb})
//	defer srv.Close() // srv.URL() is where it serves
package serve
