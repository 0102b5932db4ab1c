package main

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/parselbox/parselbox/host"
)

func TestParseMount(t *testing.T) {
	t.Parallel()
	type mount struct {
		Target string
		host.Mount
	}
	for spec, want := range map[string]mount{
		"./ref":               {"ref", host.Mount{Source: "./ref", Mode: "ro"}},
		"./ref:data":          {"data", host.Mount{Source: "./ref", Mode: "ro"}},
		"./ref:/data:rw":      {"data", host.Mount{Source: "./ref", Mode: "rw"}},
		"./ref:/mnt/data":     {"data", host.Mount{Source: "./ref", Mode: "ro"}}, // not /mnt/mnt/data
		"./ref:/mnt/data/sub": {"data/sub", host.Mount{Source: "./ref", Mode: "ro"}},
		"/srv/x/:mnt/y:ro":    {"y", host.Mount{Source: "/srv/x/", Mode: "ro"}},
	} {
		target, m, err := parseMount(spec)
		if err != nil {
			t.Errorf("%s: %v", spec, err)
			continue
		}
		if diff := cmp.Diff(want, mount{target, m}); diff != "" {
			t.Errorf("%s (-want +got):\n%s", spec, diff)
		}
	}
	for spec, want := range map[string]string{
		"./ref:/mnt": `--mount: DST is a name under /mnt: SRC:NAME or SRC:/mnt/NAME, got "./ref:/mnt"`,
		":data":      `--mount: missing host path in ":data"`,
		"a:b:c:d":    `--mount: expected SRC:DST[:ro|rw], got "a:b:c:d"`,
	} {
		if _, _, err := parseMount(spec); err == nil || err.Error() != want {
			t.Errorf("%s: error %v, want %s", spec, err, want)
		}
	}
}
