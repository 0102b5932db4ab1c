package mcpserver

import (
	"fmt"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/parselbox/parselbox/host"
)

// Code that writes new files on every call (and removes those of the
// call before) does not grow the session's resources without bound: the
// session announces at most maxResources files, the newest.
func TestResourcesBounded(t *testing.T) {
	t.Parallel()
	srv := newServer(t, Options{})
	c, _ := newClient(nil)
	cs := connectInMemory(t, srv, c, "")
	const perCall = 4000
	for i := range 3 {
		r := run(t, cs, fmt.Sprintf(`import os, shutil
shutil.rmtree("/workspace/f", ignore_errors=True)
os.makedirs("/workspace/f")
for j in range(%d):
    open(f"/workspace/f/{%d}-{j}", "w").close()
len(os.listdir("/workspace/f"))`, perCall, i))
		if r.Error != "" || len(r.Files) != perCall {
			t.Fatalf("call %d: %d files, error %s", i, len(r.Files), r.Error)
		}
	}
	n := 0
	newest := false
	for res, err := range cs.Resources(t.Context(), &mcp.ListResourcesParams{}) {
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(res.URI, "file://") {
			n++
			newest = newest || res.URI == fmt.Sprintf("file:///workspace/f/2-%d", perCall-1)
		}
	}
	if n > maxResources {
		t.Errorf("the session announces %d files as resources, more than %d", n, maxResources)
	}
	if !newest {
		t.Error("the newest file is not a resource")
	}
}

// Tool calls to namespaces that do not exist, each with a name of the
// guest's making, do not each become a series of the metrics: the label
// bridge holds the namespaces of the configuration only.
func TestMetricsBridgeLabelBounded(t *testing.T) {
	t.Parallel()
	srv := newServer(t, Options{Config: host.Config{Context: map[string]any{"calc": calc{}}}})
	mcpURL := startHTTP(t, srv)
	c, _ := newClient(nil)
	cs, err := connectHTTP(t, mcpURL, "", c)
	if err != nil {
		t.Fatal(err)
	}
	r := run(t, cs, `from _parselbox.hostcall import host_call
for i in range(50):
    try:
        host_call("call", {"path": f"guest{i}x.tool", "args": [], "kwargs": {}})
    except Exception:
        pass
calc.add(a=1, b=2)`)
	if r.Error != "" {
		t.Fatal(r.Error)
	}
	_, m := get(t, strings.TrimSuffix(mcpURL, Path)+MetricsPath)
	if strings.Contains(m, "guest1x") {
		t.Errorf("a namespace the guest made up is a label of the metrics:\n%s", m)
	}
	if got := sample(m, "parselbox_tool_calls_total", `bridge="calc",outcome="ok"`); got != 1 {
		t.Errorf("calc's calls = %v", got)
	}
}
