package mcpserver

import (
	"fmt"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
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
