// Package sdk is what a parselbox bridge is built with.
//
// A bridge is a separate program that gives the Python sandbox a namespace of
// tools: the parselbox host starts it as a plugin (hashicorp/go-plugin over
// gRPC), asks it for its tools, and routes the sandbox's calls to it, so
// credentials and side effects stay outside the sandbox. A bridge declares
// its tools as typed Go functions; their JSON Schemas are derived from the
// Go types, and arguments are decoded and validated before a tool runs.
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
//		Name string `json:"name" jsonschema:"who to greet"`
//	}
//
//	func greet(ctx context.Context, req *sdk.CallToolRequest, in greetIn) (string, error) {
//		return "hello, " + in.Name, nil
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
// greet.greet(name="ada") or greet.greet("ada").
//
// # Tools
//
// A tool's name is a dotted path: "files.read" is the tool read in the nested
// namespace files. (*Bridge).AddNamespace gives a namespace a description.
// The input type's fields are the parameters, in order (for positional
// arguments); a `jsonschema:"..."` struct tag is a parameter's description,
// and fields without omitempty are required. Tools whose schemas are only
// known at run time use the method (*Bridge).AddTool with explicit schemas.
//
// Inside a tool:
//   - ctx is cancelled when the caller cancels the call;
//   - req.Log appends a line to the call's log (a task's log), and
//     req.Progress reports progress;
//   - req.Messages delivers the messages sent into a running call, in order;
//   - returning an error fails the call: a *ToolError made with Errorf keeps
//     its code (the Python exception raised in the sandbox), other errors
//     are CodeInternal;
//   - a panic fails that call with CodeInternal; the bridge keeps serving.
//
// # Lifecycle
//
// The host calls Configure once with the bridge's configuration block as
// JSON (Options.Configure receives it, and may add tools), then Describe,
// then CallTool any number of times, concurrently; Shutdown (Options.Shutdown,
// or a BridgeServer that implements Shutdowner) runs best-effort before the
// process is stopped. After a crash the host starts the bridge again and
// configures it again. ConfigureRequest.Host lets a bridge call tools of the
// host.
//
// # Credentials
//
// A bridge's credentials stay in its configuration on the host: nothing
// that Python sees (results, error messages, log lines and progress, the
// help text of the Description) may hold them. A bridge that talks to a
// server which may echo them (an error page quoting the Authorization
// header) builds a Redactor from them with NewRedactor (SecretName,
// HeaderSecrets and URLSecrets find them in headers, URLs and
// environment variables) and runs every call through Redactor.CallTool.
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
package sdk
