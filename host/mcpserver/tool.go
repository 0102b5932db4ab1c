package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/parselbox/parselbox/host"
)

// ToolName is the name of the one tool the server offers.
const ToolName = "execute_code"

// ToolDescription describes execute_code to the model.
const ToolDescription = "Execute Python code in a stateful sandbox with access to external tools. " +
	"Variables, imports and files persist between calls; the value of the last expression is " +
	"returned. Run sbx.help() to learn more about how to use this sandbox."

// Description is execute_code's description for the tools of sb:
// ToolDescription, followed by their Python signatures when the
// configuration's describe_tools is "signatures".
func Description(sb *host.Sandbox) string {
	if sb == nil {
		return ToolDescription
	}
	sigs := sb.ToolSignatures(context.Background())
	if sigs == "" {
		return ToolDescription
	}
	return ToolDescription + "\n\nTools in the sandbox (Python signatures; call them as ns.tool(...)):\n" + sigs
}

// InputSchema is the JSON Schema of execute_code's arguments.
var InputSchema = json.RawMessage(`{"type":"object","properties":{"code":{"type":"string",` +
	`"description":"Python code to run. The value of its last expression is returned."}},` +
	`"required":["code"],"additionalProperties":false}`)

// Tool is execute_code for agent frameworks that call tools themselves:
// hand Name, Description and InputSchema to the model, and Call what it
// asks for.
type Tool struct {
	Name        string
	Description string
	InputSchema json.RawMessage
	// Call runs the tool with the model's JSON arguments ({"code": "..."}).
	// The code's own failure is a Response with Error set; the error return
	// is for arguments that do not match the schema.
	Call func(ctx context.Context, arguments json.RawMessage) (*Response, error)
}

// NewTool returns execute_code running in sb, shaped as the MCP server
// shapes it (opts may be nil: the settings MaxOutputTokens, MaxResultMB
// and NoUI apply).
func NewTool(sb *host.Sandbox, opts *Options) *Tool {
	sh := newShaper(opts.resolved().Settings)
	return &Tool{
		Name:        ToolName,
		Description: Description(sb),
		InputSchema: InputSchema,
		Call: func(ctx context.Context, arguments json.RawMessage) (*Response, error) {
			code, err := parseCode(arguments)
			if err != nil {
				return nil, err
			}
			r, err := sb.Execute(ctx, code)
			if err != nil {
				return failure("the sandbox could not run the code: %v", err), nil
			}
			return sh.response(r), nil
		},
	}
}

// errNoCode is returned for arguments without a string "code".
var errNoCode = errors.New(`execute_code takes one argument, "code": a string of Python`)

// parseCode reads the code out of execute_code's arguments: the string
// under the key "code", exactly (encoding/json would also take "Code").
func parseCode(arguments json.RawMessage) (string, error) {
	var args map[string]json.RawMessage
	if err := json.Unmarshal(arguments, &args); err != nil {
		return "", fmt.Errorf("%w: %v", errNoCode, err)
	}
	var code *string
	if raw, ok := args["code"]; ok {
		if err := json.Unmarshal(raw, &code); err != nil {
			return "", fmt.Errorf("%w: %v", errNoCode, err)
		}
	}
	if code == nil {
		return "", errNoCode
	}
	return *code, nil
}
