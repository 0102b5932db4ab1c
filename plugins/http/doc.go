// Command parselbox-bridge-http is the HTTP bridge of parselbox: a REST API,
// described or not by an OpenAPI 3.0 or 3.1 document, as a Python namespace.
// The credentials stay in the bridge: Python never sees them, in results,
// errors, help texts or task logs.
//
// Declare it in the host's configuration:
//
//	bridge "petstore" {
//	  plugin = "http"
//	  env    = ["PETSTORE_TOKEN"]
//	  config = {
//	    base_url  = "https://petstore.example.com/api/v3"
//	    spec      = "/etc/parselbox/petstore.yaml"
//	    token_env = "PETSTORE_TOKEN"
//	    headers   = { "X-Client" = "parselbox" }
//	    timeout   = "30s"
//	  }
//	}
//
// # Configuration
//
//   - base_url: where requests go, an absolute http:// or https:// URL
//     (no query). Default: the spec's first server URL (its variables set
//     to their defaults; a relative one is resolved against the spec's URL).
//     One of base_url and spec is required.
//   - spec: an OpenAPI 3.0/3.1 document, JSON or YAML: a file path (use an
//     absolute one: a relative path is relative to the bridge's working
//     directory) or an http(s) URL. The document is fetched with the
//     credentials below only when it is on base_url's origin. $refs to other
//     files and URLs are followed. An invalid document is a configuration
//     error.
//   - headers: an object of headers sent with every request; they replace
//     headers of the same name given by a call.
//   - token: sent as "Authorization: Bearer <token>".
//   - token_env: the name of an environment variable holding the token,
//     instead of token (the host passes the variable to the bridge only if
//     the bridge's env list names it).
//   - timeout: how long one request may take, response included: seconds as
//     a number, or a duration such as "30s"; 0 means no limit. Default: 60.
//
// Any other key is an error, and so is a config without base_url or spec.
//
// # Tools
//
// For a bridge named api:
//
//	api.get(path, params=None, headers=None)
//	api.delete(path, params=None, headers=None)
//	api.post(path, json=None, data=None, params=None, headers=None)
//	api.put(...), api.patch(...)      # as post
//	api.search(query)                 # with a spec
//	api.<operationId>(**arguments)    # with a spec: one tool per operation
//
// The verbs send what they are given, unchecked. path is appended to
// base_url ("/pet/1" and "pet/1" alike); a full URL is accepted only on
// base_url's origin (scheme, host and port): any other is refused with
// PermissionError, since the credentials would go there. params are query
// parameters (a list repeats the parameter; True becomes "true"), json a
// JSON body, data a text body (a string) or a form (a dict). get and delete
// also take json= and data=. Redirects are followed within the origin only;
// a redirect elsewhere is returned as the result.
//
// Every request returns {"ok", "status", "data", "headers"}: ok is whether
// the status is 2xx (a 404 is a result with ok False, not an exception),
// data the body (parsed JSON for a JSON content type, text for other text,
// bytes for binary content, None when empty), headers the response headers
// by lower-case name. A request that gets no answer raises: ConnectionError
// naming the host when it cannot connect, TimeoutError after the timeout,
// CancelledError when the task is cancelled.
//
// With a spec, each operation is a tool named by its operationId (a name
// that is not a Python identifier is reachable with "_" for the other
// characters: operationId "health-check" is api.health_check; an operation
// without one is method_path, such as get_version; a name taken by a verb or
// by another operation gets "_<method>" appended). Its description is the
// operation's summary and description, its parameters are the operation's
// parameters by name (path parameters first, in path order, then the
// required ones, so that positional arguments work: api.getPetById(1)) and
// the request body as body= (request_body= if a parameter is named body).
// A parameter whose name is not an identifier is also accepted with "_"
// ("X-Request-Id" as X_Request_Id). Header parameters that the bridge sets
// (Authorization, Accept, Content-Type, the configured headers) are not
// arguments. The request is built from the arguments as the spec says
// (style, explode) and validated by kin-openapi's openapi3filter before it
// is sent: a ValueError names every argument that does not fit, and
// unknown arguments. Parameters are checked as they go on the wire, so
// petId="2" passes for an integer; a JSON body is checked as JSON. The
// document's security requirements are not checked: the bridge adds its
// configured credentials after validation. help(api.getPetById) shows the
// parameters with their schemas ($refs written out, large ones cut short)
// and the shape of the 2xx response.
//
// search(query) lists matching operations as {method, path, summary, tool,
// params, body}: an optional leading method in capitals ("GET /pet/"),
// then a regular expression (when the query has one of | \ ( ) [ ] { } ^ $
// +), a glob on the path (with * or ?), or words matched against paths and
// summaries.
//
// # Credentials
//
// The token, the values of configured headers whose names look like
// credentials (containing auth, key, token, secret, session, cookie, passw,
// signature or credential; of a Cookie header, each cookie's value too)
// and a password in base_url are replaced by
// [REDACTED] wherever they would reach Python: a server that echoes them
// back does not leak them. Values shorter than 6 characters are not
// redacted. The bridge reports them to the host from Configure, and the
// host removes them too, in their common encodings (URL, base64, hex, and
// inside binary bodies), from results, errors and task logs.
package main
