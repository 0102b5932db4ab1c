package inproc_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/parselbox/parselbox/host/inproc"
	"github.com/parselbox/parselbox/sdk"
	"github.com/parselbox/parselbox/sdk/sdktest"
)

// upload's parameters are the ones whose meaning used to differ between
// in-process bridges and plugins: bytes, pointers, omitempty, a default.
type upload struct {
	Data    []byte  `json:"data" jsonschema:"the content"`
	Name    *string `json:"name"`
	Mode    string  `json:"mode,omitempty"`
	Retries int     `json:"retries" default:"3"`
}

type uploader struct{}

func (uploader) Put(ctx context.Context, in upload) (string, error) {
	name := "-"
	if in.Name != nil {
		name = *in.Name
	}
	return string(in.Data) + " " + name + " " + in.Mode + " " + string(rune('0'+in.Retries)), nil
}

// A Go value's tool and a plugin's tool of the same Go types are described
// and called alike: in-process bridges and plugins share one tool engine.
func TestSameRulesAsAPlugin(t *testing.T) {
	t.Parallel()
	local, err := inproc.New("up", uploader{})
	if err != nil {
		t.Fatal(err)
	}
	b := sdk.NewBridge(&sdk.Info{Name: "up"}, nil)
	sdk.AddTool(b, &sdk.Tool{Name: "put"}, func(ctx context.Context, _ *sdk.CallToolRequest, in upload) (string, error) {
		return uploader{}.Put(ctx, in)
	})
	plugin := sdktest.NewHarness(t, b)

	ld, _ := local.Describe(t.Context())
	pd, _ := plugin.Describe(t.Context())
	l, p := ld.Tools[0], pd.Tools[0]
	if diff := cmp.Diff(decodeJSON(t, string(p.InputSchema)), decodeJSON(t, string(l.InputSchema))); diff != "" {
		t.Errorf("input schemas differ (-plugin +in-process):\n%s", diff)
	}
	if !cmp.Equal(l.Params, p.Params) {
		t.Errorf("params: %v in-process, %v in a plugin", l.Params, p.Params)
	}
	var schema struct {
		Properties map[string]map[string]any `json:"properties"`
		Required   []string                  `json:"required"`
	}
	json.Unmarshal(l.InputSchema, &schema)
	if schema.Properties["data"]["contentEncoding"] != "base64" || !cmp.Equal(schema.Required, []string{"data"}) || schema.Properties["retries"]["default"] != 3.0 {
		t.Errorf("schema: %s", l.InputSchema)
	}
	for _, args := range []string{`{"data":"aGk="}`, `{"data":"aGk=","name":"x","mode":"w","retries":5}`, `{}`, `{"data":"aGk=","name":1}`} {
		lr, lerr := local.CallTool(t.Context(), &sdk.CallToolRequest{Name: "put", Arguments: json.RawMessage(args)})
		pr, perr := plugin.CallTool(t.Context(), &sdk.CallToolRequest{Name: "put", Arguments: json.RawMessage(args)})
		if lerr != nil || perr != nil {
			t.Fatalf("%s: %v, %v", args, lerr, perr)
		}
		if string(lr.Content) != string(pr.Content) || !cmp.Equal(lr.Error, pr.Error) {
			t.Errorf("%s: in-process %s %+v, plugin %s %+v", args, lr.Content, lr.Error, pr.Content, pr.Error)
		}
	}
}
