package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parselbox/parselbox/host/confine"
	"github.com/parselbox/parselbox/internal/testenv"
)

func doctor(t *testing.T, args ...string) (int, doctorReport, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(t.Context(), append([]string{"doctor", "--json", "--runtime-dir", testenv.Runtime(t).Dir}, args...), nil, &out, &errb)
	var r doctorReport
	if code != exitUsage {
		if err := json.Unmarshal(out.Bytes(), &r); err != nil {
			t.Fatalf("doctor --json: %v\n%s", err, out.String())
		}
	}
	return code, r, errb.String()
}

func TestDoctor(t *testing.T) {
	t.Parallel()
	code, r, _ := doctor(t)
	if r.Machine.Kernel == "" || r.Runtime != testenv.Runtime(t).Dir || len(r.Confinement.Layers) != 6 {
		t.Fatalf("exit %d: %+v", code, r)
	}
	for _, l := range r.Confinement.Layers {
		if l.State != confine.Active && l.Reason == "" {
			t.Errorf("%s is %s and doctor does not say why", l.Name, l.State)
		}
	}
	// Where the machine offers every layer, doctor proves them on a
	// confined process; otherwise it says what is missing.
	if _, err := confine.Check(&confine.Spec{Mode: confine.Required}); err == nil {
		if code != exitOK || !r.Verified || r.Problem != "" {
			t.Errorf("exit %d, verified %v, problem %q", code, r.Verified, r.Problem)
		}
		code, r, _ = doctor(t, "--confinement", "required", "--allow-net", "127.0.0.1:8080", "--cpu", "0.5")
		if code != exitOK || !r.Verified || !strings.Contains(r.Confinement.Summary(), "TCP connections to port 8080 only") ||
			!strings.Contains(r.Confinement.Summary(), "cpu 0.5") {
			t.Errorf("required: exit %d, %+v", code, r)
		}
	} else {
		if os.Getenv(testenv.RequireConfinementEnv) != "" {
			t.Errorf("this machine cannot confine fully (%v) and $%s is set", err, testenv.RequireConfinementEnv)
		}
		t.Logf("this machine cannot confine fully: %v", err)
		code, r, _ = doctor(t, "--confinement", "required")
		if code != 1 || !strings.Contains(r.Problem, "unavailable") {
			t.Errorf("required here: exit %d, %+v", code, r)
		}
	}
}

func TestDoctorOffAndUsage(t *testing.T) {
	t.Parallel()
	code, r, _ := doctor(t, "--confinement", "off")
	if code != exitOK || r.Confinement.Mode != confine.Off || r.Verified || len(r.Confinement.Layers) != 0 {
		t.Errorf("off: exit %d, %+v", code, r)
	}
	code, _, stderr := doctor(t, "--confinement", "strict")
	if code != exitUsage || !strings.Contains(stderr, `confinement: must be "required", "best-effort" or "off"`) {
		t.Errorf("bad mode: exit %d, %s", code, stderr)
	}
	// The configuration file's keys count, as for a sandbox.
	file := filepath.Join(t.TempDir(), "p.hcl")
	os.WriteFile(file, []byte("confinement = \"off\"\n"), 0o644)
	if code, r, _ := doctor(t, "--config", file); code != exitOK || r.Confinement.Mode != confine.Off {
		t.Errorf("from a file: exit %d, %+v", code, r)
	}
	if code, _, stderr := doctor(t, "--run-as", "0"); code != exitUsage || !strings.Contains(stderr, "must not run as root") {
		t.Errorf("run_as root: exit %d, %s", code, stderr)
	}
}
