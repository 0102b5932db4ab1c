// Command parselbox-bridge-graphql is the GraphQL bridge of parselbox: it
// gives the sandbox one GraphQL API as a namespace of three tools, and keeps
// the API's credentials on the host.
//
// Build it as bin/parselbox-bridge-graphql (go build -o
// bin/parselbox-bridge-graphql ./plugins/graphql) and declare it in the
// host's configuration:
//
//	bridge "gql" {
//	  plugin = "graphql"
//	  env    = ["EXAMPLE_TOKEN"]
//	  config = {
//	    endpoint  = "https://api.example.com/graphql"
//	    token_env = "EXAMPLE_TOKEN"                # or token = "..."
//	    headers   = { "X-Client" = "parselbox" }
//	    timeout   = "30s"
//	  }
//	}
//
// # Configuration
//
//   - endpoint (required): the http:// or https:// URL that requests are
//     POSTed to. Redirects are not followed: a redirect is an error naming
//     where it points.
//   - token: a bearer token, sent as "Authorization: Bearer TOKEN".
//   - token_env: the name of an environment variable holding the token,
//     instead of token (the host passes the variable to the bridge only if
//     the bridge's env list names it).
//   - headers: an object of header names to values, sent with every request
//     (an API key header, a version header). A token and
//     headers.Authorization together are an error.
//   - timeout: how long one request may take, response included: seconds as
//     a number, or a duration such as "30s"; 0 means no limit. Default: 60.
//
// token, token_env, headers and timeout mean what they mean for the HTTP
// bridge (plugins/http).
//
// Any other key is a configuration error, as are a missing or non-HTTP
// endpoint, a header name that is not valid and a value with a line break.
// The plugin process gets none of the host's environment except the
// variables its `env` list names (an HTTPS_PROXY, for instance, is honoured
// when passed that way).
//
// Configure does not contact the server: the schema is introspected on the
// first search or describe, and cached until the bridge is configured again
// (the host does so when it restarts the bridge). So a server that is down when the
// sandbox starts does not keep the sandbox from starting; the first call
// that needs it raises ConnectionError, and a later call tries again.
//
// # Tools
//
// In Python, with the bridge declared as gql:
//
//	gql.graphql(query, variables=None, operation_name=None)
//
// posts the document and returns the response as {"data": ..., "errors":
// [...] or None}, plus "extensions" when the server sends some. GraphQL
// errors (validation, a failing resolver, a 4xx/5xx status whose body is a
// GraphQL response, such as a 401 for a wrong token) are returned in
// "errors", never raised.
//
//	gql.search(pattern)
//
// lists the queries and mutations whose "name description args returns"
// matches pattern, a case-insensitive regular expression (plain text when it
// does not compile). A leading word "query" or "mutation" keeps that kind
// only, and alone lists all of it; a blank pattern returns []. Each item is
// {"name", "type": "query"|"mutation", "description" (at most 120
// characters), "args": ["code: ID!", "sort: Sort = NAME"], "returns":
// "[Country!]!"}.
//
//	gql.describe(names)
//
// describes a type by its (case-sensitive) name: {"name", "kind",
// "description", "fields": [{"name", "type", "description", "args",
// "deprecated"}]}; an input type has "inputFields" (with "default"), an enum
// "values", an interface or union "possibleTypes", an object its
// "interfaces". A name that is no type but a query or mutation gives that
// operation: {"name", "type", "description", "args": [{"name", "type",
// "description", "default"}], "returns"}. An unknown name raises ValueError
// suggesting similar names. With a list of names, describe returns a dict
// from each name to its description, or to {"error": "..."} for an unknown
// one, so that one typo does not lose the rest.
//
// # Errors in Python
//
//   - ConnectionError: the endpoint cannot be reached ("failed to connect to
//     GraphQL endpoint URL: ..."), or the connection broke mid-response.
//   - RuntimeError: the endpoint answered with something that is not a
//     GraphQL response (an HTML error page, a redirect), with the HTTP status
//     and the start of the body; or introspection failed (some servers
//     disable it: graphql() still works then).
//   - ValueError: bad arguments, an empty query, an unknown type name.
//   - TimeoutError: no response within the configured timeout, or the
//     call's own deadline passed.
//   - CancelledError: the call was cancelled (task.cancel()).
//
// # Credentials
//
// The token (from token or token_env), the values of headers whose names
// suggest a credential (containing auth, token, key, secret, session,
// cookie, password, passwd, credential or signature: sdk.SecretName; also
// the part after a scheme such as "Basic ", what a Basic credential
// decodes to, and each cookie's value of a cookie header), and the endpoint URL's password, the Basic credential that
// Go sends for its user:password, and its query values with such names
// never reach the sandbox: messages show the endpoint without password or
// query, and every result, error message and task log line is scrubbed of
// those values (replaced by [REDACTED], by an sdk.Redactor) in case the
// server echoes them. Values shorter than 4 characters are not scrubbed.
// The bridge reports them to the host from Configure, and the host removes
// them too, in their common encodings, from everything the bridge sends to
// the sandbox.
//
// Inside a task (gql.graphql.task(...)), each request logs "POST ENDPOINT"
// and "HTTP STATUS, N bytes in DURATION", which task.tail() shows.
package main
