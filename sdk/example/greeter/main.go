// Command greeter is an example of a third-party parselbox bridge, built
// only with package sdk. Build it as parselbox-bridge-greeter and declare it
// in the host's configuration:
//
//	bridge "greeter" {
//	  plugin = "greeter"
//	}
//
// Then, in the sandbox: greeter.greet("ada") returns "hello, ada", and
// t = greeter.slow.task(seconds=10) ticks in the background: t.send("hi")
// shows up in its log as "got: hi", and t.cancel() stops it.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/parselbox/parselbox/sdk"
)

type greetIn struct {
	Name string `json:"name" jsonschema:"who to greet"`
}

func greet(ctx context.Context, req *sdk.CallToolRequest, in greetIn) (string, error) {
	return "hello, " + in.Name, nil
}

type slowIn struct {
	Seconds int `json:"seconds" jsonschema:"how long to run, in seconds"`
}

type slowOut struct {
	Ticks int `json:"ticks"`
}

// slow ticks once a second, logging "tick N", and logs every message sent
// into the call as "got: MESSAGE". It stops at once when cancelled.
func slow(ctx context.Context, req *sdk.CallToolRequest, in slowIn) (slowOut, error) {
	ticker := time.NewTicker(time.Second)
	defer ticker.Stop()
	ticks := 0
	for ticks < in.Seconds {
		select {
		case <-ctx.Done():
			return slowOut{}, sdk.Errorf(sdk.CodeCancelled, "slow: cancelled after %d ticks", ticks)
		case msg := <-req.Messages():
			req.Log("got: " + text(msg))
		case <-ticker.C:
			ticks++
			req.Log(fmt.Sprintf("tick %d", ticks))
			req.Progress(float64(ticks), float64(in.Seconds), "")
		}
	}
	return slowOut{Ticks: ticks}, nil
}

// text shows a JSON string as its text, and any other JSON value as is.
func text(msg json.RawMessage) string {
	var s string
	if json.Unmarshal(msg, &s) == nil {
		return s
	}
	return string(msg)
}

func newBridge() *sdk.Bridge {
	b := sdk.NewBridge(&sdk.Info{Name: "greeter", Version: "v0.1.0", Description: "Greets people, slowly if asked."}, nil)
	sdk.AddTool(b, &sdk.Tool{Name: "greet", Description: "Say hello to someone."}, greet)
	sdk.AddTool(b, &sdk.Tool{Name: "slow", Description: "Tick once a second for a while; log what is sent in."}, slow)
	return b
}

func main() {
	sdk.Serve(newBridge())
}
