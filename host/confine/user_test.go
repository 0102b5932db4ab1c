package confine

import (
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/parselbox/parselbox/internal/testenv"
)

func TestParseRunAs(t *testing.T) {
	t.Parallel()
	for in, want := range map[string][2]int{
		"":            {65532, 65532},
		"1234":        {1234, 1234},
		"1234:5678":   {1234, 5678},
		"65534:65534": {65534, 65534},
	} {
		uid, gid, err := ParseRunAs(in)
		if err != nil || uid != want[0] || gid != want[1] {
			t.Errorf("ParseRunAs(%q) = %d, %d, %v; want %v", in, uid, gid, err, want)
		}
	}
	if u, err := user.Lookup("nobody"); err == nil {
		uid, gid, err := ParseRunAs("nobody")
		if err != nil || strconv.Itoa(uid) != u.Uid || strconv.Itoa(gid) != u.Gid {
			t.Errorf("ParseRunAs(nobody) = %d, %d, %v; want %s:%s", uid, gid, err, u.Uid, u.Gid)
		}
	}
	for in, msg := range map[string]string{
		"0":             "must not run as root",
		"root":          "must not run as root",
		"1000:0":        "must not run as root",
		"-5":            "must not run as root",
		"no-such-user1": "neither",
		"1000:nogroup1": "unknown group",
		"4294967295":    "out of range",
	} {
		if _, _, err := ParseRunAs(in); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("ParseRunAs(%q): %v, want %q", in, err, msg)
		}
	}
}

func TestGiveBack(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		testenv.Missing(t, testenv.RequireConfinementEnv, "chown needs root")
	}
	root := t.TempDir()
	os.Chown(root, 1000, 1001) // the owner files go back to
	mine := filepath.Join(root, "host.txt")
	os.WriteFile(mine, nil, 0o644) // the host's: left as it is (root)
	made := filepath.Join(root, "sub", "made.txt")
	os.MkdirAll(filepath.Dir(made), 0o755)
	os.WriteFile(made, nil, 0o644)
	for _, p := range []string{filepath.Dir(made), made} {
		os.Lchown(p, 65532, 65532)
	}
	if err := newGiveBack(65532, []string{root, filepath.Join(root, "gone")}).restore(); err != nil {
		t.Fatal(err)
	}
	owner := func(p string) [2]uint32 {
		var st syscall.Stat_t
		syscall.Lstat(p, &st)
		return [2]uint32{st.Uid, st.Gid}
	}
	for p, want := range map[string][2]uint32{
		filepath.Dir(made): {1000, 1001},
		made:               {1000, 1001},
		mine:               {0, 0},
	} {
		if got := owner(p); got != want {
			t.Errorf("%s owned by %v, want %v", p, got, want)
		}
	}
}
