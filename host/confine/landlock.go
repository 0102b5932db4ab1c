package confine

import (
	"debug/elf"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/landlock-lsm/go-landlock/landlock"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
)

// landlockPlan is a Landlock ruleset: the rights it handles (everything
// else is denied) and the rules that grant some of them back.
type landlockPlan struct {
	ABI    int        `json:"abi"`
	FS     uint64     `json:"fs"`     // handled file system rights
	Net    uint64     `json:"net"`    // handled network rights
	Scoped uint64     `json:"scoped"` // restricted IPC scopes
	Paths  []pathRule `json:"paths"`
	// Connect are the TCP ports the process may connect to.
	Connect []uint16 `json:"connect,omitempty"`
	// DNS lets the process send UDP to port 53 (from an ephemeral port),
	// where Landlock handles UDP (ABI 10).
	DNS bool `json:"dns,omitempty"`
}

type pathRule struct {
	Path   string `json:"path"`
	Access uint64 `json:"access"`
}

// File system rights, as Landlock numbers them.
const (
	rightExec     = ll.AccessFSExecute
	rightReadFile = ll.AccessFSReadFile
	rightReadDir  = ll.AccessFSReadDir
	rightWrite    = ll.AccessFSWriteFile | ll.AccessFSTruncate
	// rightMake are the changes to a directory's entries a sandbox needs:
	// files and directories, removing and renaming them (Refer: between
	// directories). No symlinks, devices, fifos or sockets.
	rightMake = ll.AccessFSRemoveDir | ll.AccessFSRemoveFile | ll.AccessFSMakeDir | ll.AccessFSMakeReg | ll.AccessFSRefer

	rightsReadDir  = rightReadFile | rightReadDir
	rightsWriteDir = rightsReadDir | rightWrite | rightMake
)

// grant adds a rule for a path, with the rights of the plan's ABI.
func (p *landlockPlan) grant(path string, rights uint64) {
	if rights &= p.FS; rights != 0 {
		p.Paths = append(p.Paths, pathRule{Path: path, Access: rights})
	}
}

// abiFS are the file system rights of each Landlock ABI (go-landlock's
// table, which Config.BestEffort uses).
func abiFS(abi int) uint64 {
	switch {
	case abi >= 9:
		return 1<<17 - 1
	case abi >= 5:
		return 1<<16 - 1
	case abi >= 3:
		return 1<<15 - 1
	case abi == 2:
		return 1<<14 - 1
	case abi == 1:
		return 1<<13 - 1
	}
	return 0
}

// System paths every process reads: shared libraries, the loader's cache,
// the clock's zone, randomness, and what the runtime learns about itself
// (its own /proc directory, memory and CPU counts).
var (
	systemDirs  = []string{"/lib", "/lib64", "/usr/lib", "/usr/lib64", "/usr/local/lib", "/proc/self", "/sys/devices/system/cpu"}
	systemFiles = []string{"/etc/ld.so.cache", "/etc/localtime", "/dev/urandom", "/dev/random", "/dev/zero",
		"/proc/meminfo", "/proc/stat", "/sys/kernel/mm/transparent_hugepage/hpage_pmd_size"}
	// resolverFiles are read by getaddrinfo when the process may connect.
	resolverFiles = []string{"/etc/resolv.conf", "/etc/hosts", "/etc/nsswitch.conf", "/etc/gai.conf", "/etc/host.conf"}
)

// newLandlockPlan builds the ruleset for spec: read (no execute) on
// spec.Read and the system paths, read and write on spec.Write, execute on
// the program and its ELF interpreter, /dev/null read and write; the ports
// of AllowNet; no signals or abstract sockets beyond the process.
func newLandlockPlan(abi int, spec *Spec, ports []uint16, prog string) (*landlockPlan, error) {
	p := &landlockPlan{ABI: abi, FS: abiFS(abi)}
	if abi >= 6 {
		p.Scoped = ll.ScopeAbstractUnixSocket | ll.ScopeSignal
	}
	if !spec.Network && abi >= 4 {
		p.Net = ll.AccessNetBindTCP | ll.AccessNetConnectTCP
		if abi >= 10 {
			p.Net |= ll.AccessNetBindUDP | ll.AccessNetConnectSendUDP
			p.DNS = len(ports) > 0
		}
		p.Connect = ports
	}
	add := func(path string, dirRights, fRights uint64, required bool) error {
		fi, err := os.Stat(path)
		if err != nil {
			if required {
				return fmt.Errorf("confine: %w", err)
			}
			return nil
		}
		if fi.Mode()&(os.ModeNamedPipe|os.ModeSocket) != 0 {
			// Pipes and sockets are not files Landlock governs; a path to
			// one (/dev/fd/N) names the host's descriptor, not the child's.
			return nil
		}
		if fi.IsDir() {
			p.grant(path, dirRights)
		} else {
			p.grant(path, fRights)
		}
		return nil
	}
	for _, d := range systemDirs {
		add(d, rightsReadDir, rightReadFile, false)
	}
	sys := systemFiles
	if spec.Network || len(ports) > 0 {
		sys = append(slices.Clone(sys), resolverFiles...)
	}
	for _, f := range sys {
		add(f, 0, rightReadFile, false)
	}
	add("/dev/null", 0, rightReadFile|rightWrite, false)
	for _, path := range spec.Read {
		if err := add(path, rightsReadDir, rightReadFile, true); err != nil {
			return nil, err
		}
	}
	for _, path := range spec.Write {
		if err := add(path, rightsWriteDir, rightReadFile|rightWrite, true); err != nil {
			return nil, err
		}
	}
	exe := []string{prog}
	if interp, err := interpreter(prog); err != nil {
		return nil, fmt.Errorf("confine: %s: %w", prog, err)
	} else if interp != "" {
		exe = append(exe, interp)
	}
	for _, e := range exe {
		if err := add(e, 0, rightExec|rightReadFile, true); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// interpreter returns the ELF interpreter of a dynamically linked program
// (the dynamic loader, which the kernel executes along with it), or "".
func interpreter(prog string) (string, error) {
	f, err := elf.Open(prog)
	if err != nil {
		if _, ok := errors.AsType[*elf.FormatError](err); ok {
			return "", nil // not ELF (a script): its interpreter must be in Read
		}
		return "", err
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			b := make([]byte, p.Filesz)
			if _, err := p.ReadAt(b, 0); err != nil {
				return "", err
			}
			return strings.TrimRight(string(b), "\x00"), nil
		}
	}
	return "", nil
}

// ruleset creates the Landlock ruleset of the plan (in the shim, which may
// still open every path). The kernel must offer the plan's ABI: nothing is
// silently dropped.
func (p *landlockPlan) ruleset() (int, error) {
	cfg := landlock.Config{
		HandledAccessFS:  landlock.AccessFSSet(p.FS),
		HandledAccessNet: landlock.AccessNetSet(p.Net),
		Scoped:           landlock.ScopedSet(p.Scoped),
	}
	var rules []landlock.Rule
	for _, r := range p.Paths {
		rules = append(rules, landlock.PathAccess(landlock.AccessFSSet(r.Access), r.Path))
	}
	for _, port := range p.Connect {
		rules = append(rules, landlock.ConnectTCP(port))
	}
	if p.DNS {
		rules = append(rules, landlock.ConnectSendUDP(53), landlock.BindUDP(0))
	}
	fd, _, err := cfg.NewRulesetFD(rules...)
	if err != nil {
		return -1, fmt.Errorf("landlock: %w", err)
	}
	if fd < 0 {
		return -1, errors.New("landlock: nothing to enforce")
	}
	return fd, nil
}
