// Package sdk is what a parselbox bridge is built with.
//
// A bridge is a separate program that gives the Python sandbox a namespace of
// tools: the parselbox host starts it as a plugin (hashicorp/go-plugin over
// gRPC), asks it for its tools, and routes the sandbox's calls to it, so
// credentials and side effects stay outside the sandbox. A bridge declares
// its tools as typed Go functions; their JSON Schemas are derived from the
// Go types, and arguments are decoded and checked before a tool runs.
//
// A complete bridge:
//
//	package main
//
//	import (
//		"context"
//
//		"github.com/parselbox/parselbox/sdk"
//	)
//
//	type greetIn struct {
//		Name     string `json:"name" jsonschema:"who to greet"`
//		Greeting string `json:"greeting" default:"hello"`
//	}
//
//	func greet(ctx context.Context, req *sdk.CallToolRequest, in greetIn) (string, error) {
//		return in.Greeting + ", " + in.Name, nil
//	}
//
//	func main() {
//		b := sdk.NewBridge(&sdk.Info{Name: "greeter", Version: "v0.1.0"}, nil)
//		sdk.AddTool(b, &sdk.Tool{Name: "greet", Description: "Say hello."}, greet)
//		sdk.Serve(b)
//	}
//
// Built as parselbox-bridge-greeter and declared in the host's configuration
// (`bridge "greet" { plugin = "greeter" }`), it is called from Python as
// greet.greet(name="ada") or greet.greet("ada", "hi").
//
// # Tools
//
// *Bridge is parselbox's one tool engine: the host registers its in-process
// Go values and its own sbx tools on one too, so the rules below are the
// same wherever a tool runs.
//
// A tool's name is a dotted path: "files.read" is the tool read in the nested
// namespace files; the name "" is the namespace itself, called as ns(...).
// (*Bridge).AddNamespace gives a namespace a description. AddTool's input
// type's fields are the parameters, in order (for positional arguments from
// Python), named by their `json` tags:
//   - `jsonschema:"..."` is a parameter's description;
//   - `default:"..."` is its default (JSON, or the text itself for a string:
//     `default:"alpha"`, `default:"100"`, `default:"true"`): it is in the
//     schema, shown by help() in Python, and applied before the tool runs,
//     at any depth of the input;
//   - a field is required unless it is a pointer, tagged omitempty or
//     omitzero, or has a default;
//   - []byte is a base64 string (Python bytes arrive so), json.RawMessage
//     any JSON value, Duration seconds or "30s";
//   - an unknown argument or nested field, a missing required one, a value
//     of the wrong type and null for a type without nil fail the call with
//     CodeInvalidArgument, naming the argument, before the tool runs.
//
// (*Bridge).AddFunc registers a plain function (parameters named by
// Tool.Params; a variadic one takes the remaining positional arguments).
// Tools whose schemas are only known at run time use the method
// (*Bridge).AddTool with explicit schemas; an explicit InputSchema given to
// AddTool is validated instead of the rules above.
//
// Inside a tool:
//   - ctx is cancelled when the caller cancels the call;
//   - req.Log appends a line to the call's log (a task's log), and
//     req.Progress reports progress;
//   - req.Messages delivers the messages sent into a running call, in order;
//   - returning an error fails the call: a *ToolError made with Errorf keeps
//     its code (the Python exception raised in the sandbox), other errors
//     are CodeInternal;
//   - a panic fails that call with CodeInternal; the bridge keeps serving;
//   - a result holding {"__b64__": "<base64>"} (BytesKey) is Python bytes.
//
// Options.Middleware wraps every call (logging, metrics, a bridge's own
// redaction), instead of a bridge overriding CallTool.
//
// # Configuration
//
// The host hands the bridge its configuration block as JSON; the bridge
// decodes and checks it in Options.Configure with DecodeConfig, which is
// strict (an unknown key is an error that suggests the key meant), applies
// `default` tags, and returns a *ConfigError naming the offending key, which
// the host reports with the file and line of the key. Duration takes
// seconds or "30s"; TokenConfig is the keys token and token_env; Secret
// holds a credential; DefaultPath is the PATH for processes the bridge
// starts, LookPath finds a command in such a PATH (package procgroup runs
// them in a process group of their own).
//
// # Lifecycle
//
// The host calls Configure once with the bridge's configuration block
// (Options.Configure receives it, and may add tools), then Describe, then
// CallTool any number of times, concurrently; Shutdown (Options.Shutdown,
// or a BridgeServer that implements Shutdowner) runs best-effort before the
// process is stopped. After a crash the host starts the bridge again and
// configures it again. ConfigureRequest.Host lets a bridge call tools of the
// host.
//
// # Credentials
//
// A bridge's credentials stay on the host: nothing that Python sees
// (results, error messages, log lines and progress, task logs, help text)
// may hold them, in any encoding. The host removes them itself, from
// everything the bridge sends: the values of the environment variables it
// passes the bridge, and every secret the bridge reports from Configure
// (DecodeConfig reports each Secret; ConfigureRequest.AddSecrets reports
// others, such as an Authorization header's value). A bridge may run its
// calls through its own Redactor too (RedactMiddleware), as a second layer.
//
// # Serving and logging
//
// Serve talks go-plugin's handshake on stdout, so a bridge never writes to
// stdout itself; the bridge's logger (Bridge.Logger) writes JSON lines to
// stderr, which the host re-levels under its own logger. A bridge's process
// gets none of the host's environment except the variables its
// configuration names.
//
// Package sdktest tests a bridge in-process over gRPC, or as a subprocess.
// The protocol's types are defined in package internal/protocol and carried
// by internal/wire; this package re-exports them with type aliases.
package sdk
