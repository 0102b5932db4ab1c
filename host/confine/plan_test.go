package confine

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
)

// fakeSystem is a machine with every layer, its cgroups in a temp dir.
func fakeSystem(t *testing.T, abi int) *system {
	return &system{landlockABI: abi, seccomp: true, euid: 0, cgroups: fakeV1(t)}
}

func rulesOf(p *landlockPlan) map[string]uint64 {
	out := map[string]uint64{}
	for _, r := range p.Paths {
		out[r.Path] |= r.Access
	}
	return out
}

func TestLandlockRulesFromSpec(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ro, rw, file := filepath.Join(dir, "ro"), filepath.Join(dir, "rw"), filepath.Join(dir, "data.bin")
	os.Mkdir(ro, 0o755)
	os.Mkdir(rw, 0o755)
	os.WriteFile(file, nil, 0o644)
	prog, err := os.Executable() // an ELF program with an interpreter (or none: static)
	if err != nil {
		t.Fatal(err)
	}
	spec := &Spec{Read: []string{ro, file}, Write: []string{rw}, AllowNet: []string{"example.com:443", "127.0.0.1:8080", "[::1]:443"}}
	p, rep, err := newPlan(spec, fakeSystem(t, 7), prog)
	if err != nil {
		t.Fatal(err)
	}
	ld := p.Landlock
	if ld.ABI != 7 || ld.FS != 1<<16-1 {
		t.Errorf("handled rights: ABI %d FS %b", ld.ABI, ld.FS)
	}
	if want := uint64(ll.AccessNetBindTCP | ll.AccessNetConnectTCP); ld.Net != want {
		t.Errorf("handled net %b, want %b", ld.Net, want)
	}
	if diff := cmp.Diff([]uint16{443, 8080}, ld.Connect); diff != "" {
		t.Errorf("ports (-want +got):\n%s", diff)
	}
	if ld.DNS {
		t.Error("UDP rules on ABI 7, which has none")
	}
	if ld.Scoped != ll.ScopeSignal|ll.ScopeAbstractUnixSocket {
		t.Errorf("scoped %b", ld.Scoped)
	}
	r := rulesOf(ld)
	read := uint64(ll.AccessFSReadFile | ll.AccessFSReadDir)
	for path, want := range map[string]uint64{
		ro:   read,
		file: ll.AccessFSReadFile,
		rw: read | ll.AccessFSWriteFile | ll.AccessFSTruncate | ll.AccessFSRemoveDir | ll.AccessFSRemoveFile |
			ll.AccessFSMakeDir | ll.AccessFSMakeReg | ll.AccessFSRefer,
		prog:        ll.AccessFSExecute | ll.AccessFSReadFile,
		"/dev/null": ll.AccessFSReadFile | ll.AccessFSWriteFile | ll.AccessFSTruncate,
	} {
		if r[path] != want {
			t.Errorf("%s: rights %b, want %b", path, r[path], want)
		}
	}
	// Nothing but the program (and its loader) is executable, nothing
	// anywhere makes symlinks, devices, fifos or sockets, or uses ioctl on
	// devices or pathname unix sockets.
	never := uint64(ll.AccessFSMakeSym | ll.AccessFSMakeChar | ll.AccessFSMakeBlock | ll.AccessFSMakeFifo | ll.AccessFSMakeSock | ll.AccessFSIoctlDev | ll.AccessFSResolveUnix)
	interp, _ := interpreter(prog)
	for path, rights := range r {
		if rights&never != 0 {
			t.Errorf("%s: rights %b include %b", path, rights, rights&never)
		}
		if rights&ll.AccessFSExecute != 0 && path != prog && path != interp {
			t.Errorf("%s is executable", path)
		}
	}
	// The resolver's files come with the network.
	if _, ok := r["/etc/resolv.conf"]; !ok && exists("/etc/resolv.conf") {
		t.Error("no /etc/resolv.conf with an allowlist")
	}
	for _, name := range []string{LayerLandlock, LayerLandlockNet, LayerSeccomp, LayerNoNewPrivs, LayerUser, LayerCgroup} {
		if !rep.Active(name) {
			t.Errorf("%s not active: %+v", name, rep.Layers)
		}
	}
	if p.UID != 65532 || p.GID != 65532 || p.Seccomp == nil || !p.Seccomp.Inet {
		t.Errorf("plan: uid %d gid %d seccomp %+v", p.UID, p.GID, p.Seccomp)
	}
}

func exists(p string) bool { _, err := os.Stat(p); return err == nil }

func TestLandlockRulesNoNetwork(t *testing.T) {
	t.Parallel()
	prog, _ := os.Executable()
	p, rep, err := newPlan(&Spec{}, fakeSystem(t, 11), prog)
	if err != nil {
		t.Fatal(err)
	}
	ld := p.Landlock
	if want := uint64(ll.AccessNetBindTCP | ll.AccessNetConnectTCP | ll.AccessNetBindUDP | ll.AccessNetConnectSendUDP); ld.Net != want || len(ld.Connect) != 0 || ld.DNS {
		t.Errorf("net %b ports %v dns %v", ld.Net, ld.Connect, ld.DNS)
	}
	if _, ok := rulesOf(ld)["/etc/resolv.conf"]; ok {
		t.Error("the resolver's files without network")
	}
	if p.Seccomp.Inet {
		t.Error("sockets allowed without network")
	}
	if got := rep.Layers[1]; got.Name != LayerLandlockNet || got.Detail != "no TCP connections" {
		t.Errorf("report: %+v", got)
	}
	// With the whole network, Landlock handles no network right at all.
	p, rep, _ = newPlan(&Spec{Network: true}, fakeSystem(t, 11), prog)
	if p.Landlock.Net != 0 || !p.Seccomp.Inet || rep.Layers[1].State != NotNeeded {
		t.Errorf("network = true: net %b, seccomp %+v, %+v", p.Landlock.Net, p.Seccomp, rep.Layers[1])
	}
	// ABI 10 handles UDP: DNS is allowed with an allowlist.
	p, _, _ = newPlan(&Spec{AllowNet: []string{"pypi.org:443"}}, fakeSystem(t, 10), prog)
	if !p.Landlock.DNS {
		t.Error("no DNS on ABI 10 with an allowlist")
	}
}

func TestLandlockRulesOlderABI(t *testing.T) {
	t.Parallel()
	prog, _ := os.Executable()
	dir := t.TempDir()
	p, rep, err := newPlan(&Spec{Write: []string{dir}}, fakeSystem(t, 1), prog)
	if err != nil {
		t.Fatal(err)
	}
	// ABI 1 has no refer right: asking for it would turn Landlock off.
	if got := rulesOf(p.Landlock)[dir]; got&ll.AccessFSRefer != 0 || got&ll.AccessFSTruncate != 0 {
		t.Errorf("ABI 1 rights %b", got)
	}
	if p.Landlock.Net != 0 || p.Landlock.Scoped != 0 {
		t.Errorf("ABI 1: net %b scoped %b", p.Landlock.Net, p.Landlock.Scoped)
	}
	if l := rep.Layers[1]; l.State != Unavailable || !strings.Contains(l.Reason, "ABI 1 has no network rules") {
		t.Errorf("%+v", l)
	}
}

func TestPlanReport(t *testing.T) {
	t.Parallel()
	noLandlock := &system{landlockReason: "no landlock here", seccomp: true, euid: 0, cgroups: cgroups{reason: "no cgroup file system is mounted"}}
	for name, tc := range map[string]struct {
		sys         *system
		spec        *Spec
		state       map[string]string
		err         string
		landlockNil bool
		check       func(*testing.T, *plan)
	}{
		"not root": {
			sys:   &system{landlockABI: 7, seccomp: true, euid: 1000, cgroups: cgroups{reason: "cgroup v2: /x is not writable"}},
			spec:  &Spec{},
			state: map[string]string{LayerUser: NotNeeded, LayerCgroup: Unavailable, LayerLandlock: Active},
		},
		"no landlock: no user either": {
			sys:         noLandlock,
			spec:        &Spec{},
			state:       map[string]string{LayerLandlock: Unavailable, LayerLandlockNet: Unavailable, LayerUser: Unavailable, LayerSeccomp: Active},
			landlockNil: true,
		},
		"required and missing": {
			sys:  noLandlock,
			spec: &Spec{Mode: Required},
			err:  "landlock: no landlock here; landlock-net: no landlock here; user: needs Landlock",
		},
		"off": {
			sys:   noLandlock,
			spec:  &Spec{Mode: Off},
			state: map[string]string{},
		},
		"without seccomp": {
			sys:   fakeSystem(t, 7),
			spec:  &Spec{Without: []string{LayerSeccomp}},
			state: map[string]string{LayerSeccomp: Unavailable, LayerLandlock: Active, LayerUser: Active, LayerCgroup: Active},
			check: func(t *testing.T, p *plan) {
				if p.Seccomp != nil || p.Landlock == nil || p.UID < 0 || p.cgroupLimits == nil {
					t.Errorf("plan %+v", p)
				}
			},
		},
		"without landlock: no user or network rules either": {
			sys:         fakeSystem(t, 7),
			spec:        &Spec{Without: []string{LayerLandlock}},
			state:       map[string]string{LayerLandlock: Unavailable, LayerLandlockNet: Unavailable, LayerUser: Unavailable, LayerSeccomp: Active},
			landlockNil: true,
			check: func(t *testing.T, p *plan) {
				if p.UID != -1 || p.Seccomp == nil {
					t.Errorf("plan %+v", p)
				}
			},
		},
		"without landlock-net": {
			sys:   fakeSystem(t, 7),
			spec:  &Spec{Without: []string{LayerLandlockNet}, AllowNet: []string{"example.com:443"}},
			state: map[string]string{LayerLandlockNet: Unavailable, LayerLandlock: Active},
			check: func(t *testing.T, p *plan) {
				if p.Landlock == nil || p.Landlock.Net != 0 || p.Landlock.Connect != nil || p.Landlock.FS == 0 {
					t.Errorf("landlock plan %+v", p.Landlock)
				}
			},
		},
		"without user and cgroup": {
			sys:   fakeSystem(t, 7),
			spec:  &Spec{Without: []string{LayerUser, LayerCgroup}},
			state: map[string]string{LayerUser: Unavailable, LayerCgroup: Unavailable, LayerLandlock: Active, LayerSeccomp: Active},
			check: func(t *testing.T, p *plan) {
				if p.UID != -1 || p.cgroupLimits != nil {
					t.Errorf("plan %+v", p)
				}
			},
		},
		"without no_new_privs": {
			sys:  fakeSystem(t, 7),
			spec: &Spec{Without: []string{LayerNoNewPrivs}},
			err:  `cannot leave out layer "no_new_privs"`,
		},
		"without an unknown layer": {
			sys:  fakeSystem(t, 7),
			spec: &Spec{Without: []string{"selinux"}},
			err:  `cannot leave out layer "selinux"`,
		},
		"required without a layer": {
			sys:  fakeSystem(t, 7),
			spec: &Spec{Mode: Required, Without: []string{LayerCgroup}},
			err:  "cgroup: left out",
		},
		"bad run_as": {
			sys:  fakeSystem(t, 7),
			spec: &Spec{RunAs: "root"},
			err:  "must not run as root",
		},
	} {
		t.Run(name, func(t *testing.T) {
			prog, _ := os.Executable()
			p, rep, err := newPlan(tc.spec, tc.sys, prog)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				if tc.spec.Mode == Required && !errors.Is(err, ErrUnavailable) {
					t.Errorf("not ErrUnavailable: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for layer, want := range tc.state {
				i := slices.IndexFunc(rep.Layers, func(l Layer) bool { return l.Name == layer })
				if i < 0 || rep.Layers[i].State != want {
					t.Errorf("%s: %+v, want %s", layer, rep.Layers, want)
				} else if want != Active && rep.Layers[i].Reason == "" {
					t.Errorf("%s: no reason", layer)
				}
			}
			if tc.landlockNil && p.Landlock != nil {
				t.Error("a Landlock plan without Landlock")
			}
			if tc.check != nil {
				tc.check(t, p)
			}
		})
	}
}

func TestPlanRefusesMissingPaths(t *testing.T) {
	t.Parallel()
	prog, _ := os.Executable()
	_, _, err := newPlan(&Spec{Read: []string{"/nonexistent/parselbox"}}, fakeSystem(t, 7), prog)
	if err == nil || !strings.Contains(err.Error(), "/nonexistent/parselbox") {
		t.Errorf("missing read path: %v", err)
	}
	_, _, err = newPlan(&Spec{AllowNet: []string{"nohost"}}, fakeSystem(t, 7), prog)
	if err == nil {
		t.Error("bad allow_net accepted")
	}
}

func TestParseMode(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]Mode{"": BestEffort, "required": Required, "best-effort": BestEffort, "off": Off} {
		if got, err := ParseMode(in); err != nil || got != want {
			t.Errorf("ParseMode(%q) = %q, %v", in, got, err)
		}
	}
	if _, err := ParseMode("strict"); err == nil {
		t.Error("ParseMode(strict) accepted")
	}
}
