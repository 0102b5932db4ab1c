package router

import (
	"encoding/json"
	"testing"
)

// callAllocs pins the allocations of a routed call with no Recorder
// (decoding the request, binding its arguments, the bridge's request and
// result): one added to this path shows up here. Raise it only for an
// allocation worth its cost; lower it when one goes.
const callAllocs = 30

// raceAllocs are those the race detector adds to a routed call (make test
// runs with it).
const raceAllocs = 2

func TestCallAllocations(t *testing.T) {
	r, _ := echoRouter(t, Options{})
	params := json.RawMessage(`{"path":"echo.say","args":["hi"],"kwargs":{"times":3}}`)
	ctx := t.Context()
	got := testing.AllocsPerRun(200, func() {
		if _, err := r.ServeSandbox(ctx, "call", params); err != nil {
			t.Fatal(err)
		}
	})
	want := callAllocs
	if raceEnabled {
		want += raceAllocs
	}
	if got > float64(want) {
		t.Errorf("a routed call allocates %v times, want at most %d", got, want)
	}
}
