// Command greeter is an example of a third-party parselbox bridge, built
// only with package sdk. Build it as parselbox-bridge-greeter and declare it
// in the host's configuration:
//
//	bridge "greeter" {
//	  plugin = "greeter"
//	  config = { greeting = "hello" } # the default
//	}
//
// Then, in the sandbox: greeter.greet("ada") returns "hello, ada", and
// t = greeter.slow.task() ticks in the background (10 times unless
// seconds= says otherwise): t.send("hi") shows up in its log as "got: hi",
// and t.cancel() stops it.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/parselbox/parselbox/sdk"
)

// config is the bridge's configuration block.
type config struct {
	// Greeting opens every greeting.
	Greeting string `json:"greeting" default:"hello"`
}

type greetIn struct {
	Name string `json:"name" jsonschema:"who to greet"`
}

type slowIn struct {
	Seconds int `json:"seconds" default:"10" jsonschema:"how long to run, in seconds"`
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
	var (
		mu  sync.Mutex
		cfg = config{Greeting: "hello"}
	)
	b := sdk.NewBridge(&sdk.Info{Name: "greeter", Version: "v0.1.0", Description: "Greets people, slowly if asked."}, &sdk.Options{
		// The configuration is decoded strictly, with its defaults; an
		// unknown or mistyped key is an error that names it.
		Configure: func(_ context.Context, req *sdk.ConfigureRequest) error {
			c, err := sdk.DecodeConfig[config](req)
			if err != nil {
				return err
			}
			mu.Lock()
			cfg = c
			mu.Unlock()
			return nil
		},
	})
	sdk.AddTool(b, &sdk.Tool{Name: "greet", Description: "Say hello to someone."},
		func(_ context.Context, _ *sdk.CallToolRequest, in greetIn) (string, error) {
			mu.Lock()
			defer mu.Unlock()
			return cfg.Greeting + ", " + in.Name, nil
		})
	sdk.AddTool(b, &sdk.Tool{Name: "slow", Description: "Tick once a second for a while; log what is sent in."}, slow)
	return b
}

func main() {
	sdk.Serve(newBridge())
}
