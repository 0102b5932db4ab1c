package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/spf13/pflag"

	"github.com/parselbox/parselbox/host"
	"github.com/parselbox/parselbox/host/confine"
	"github.com/parselbox/parselbox/host/sandbox"
)

// doctorReport is what `parselbox doctor` prints (as JSON with --json).
type doctorReport struct {
	Machine confine.Machine `json:"machine"`
	Runtime string          `json:"runtime"` // its directory, or why it is missing
	// Confinement is what a sandbox of this configuration gets.
	Confinement confine.Report `json:"confinement"`
	// Verified says whether a process confined that way felt every active
	// layer; Problem says what did not hold.
	Verified bool   `json:"verified"`
	Problem  string `json:"problem,omitempty"`
}

// runDoctor says which kernel layers would confine a sandbox of this
// configuration, why any would not, and proves the active ones on a
// confined process. Exit status 1 when a layer is required but missing, or
// did not hold.
func runDoctor(args []string, stdout, stderr io.Writer) int {
	fs := pflag.NewFlagSet("parselbox doctor", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, "Usage: parselbox doctor [flags]\n\nSays which kernel layers (Landlock, seccomp, no_new_privs, an unprivileged\nuser, a cgroup) confine a sandbox of this configuration and why any does not,\nthen checks them on a confined process. Exit status 1 if a layer is required\nbut unavailable, or did not hold.\n\nFlags:\n")
		fs.PrintDefaults()
	}
	flags, asJSON := newDoctorFlags(fs)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return exitOK
		}
		fmt.Fprintln(stderr, "parselbox doctor:", err)
		return exitUsage
	}
	file, err := flags.load()
	if err != nil {
		fmt.Fprintln(stderr, "parselbox doctor:", err)
		return exitUsage
	}
	cfg := file.Config
	mode, _ := confine.ParseMode(cfg.Confinement) // validated by config()
	memory := cfg.Memory
	if memory == 0 {
		memory = host.DefaultMemoryMB
	}
	spec := &confine.Spec{Mode: mode, RunAs: cfg.RunAs, CPU: cfg.CPU, Network: cfg.Network, AllowNet: cfg.AllowNet,
		MemoryMB: 2*memory + 512}
	r := doctorReport{Machine: confine.Probe()}
	if rt, err := sandbox.FindRuntime(cfg.RuntimeDir); err != nil {
		r.Runtime = err.Error()
	} else {
		r.Runtime = rt.Dir
	}
	status := exitOK
	r.Confinement, err = confine.Check(spec)
	switch {
	case err != nil:
		r.Problem, status = err.Error(), 1
	case mode != confine.Off:
		if _, _, err := confine.Verify(spec); err != nil {
			r.Problem, status = err.Error(), 1
		} else {
			r.Verified = true
		}
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		enc.Encode(r)
		return status
	}
	m := r.Machine
	fmt.Fprintf(stdout, "machine:  %s, uid %d\n", m.Kernel, m.EUID)
	landlock := "none"
	if m.LandlockABI > 0 {
		landlock = fmt.Sprintf("ABI %d", m.LandlockABI)
	}
	fmt.Fprintf(stdout, "          Landlock %s, seccomp %v, cgroup %s\n", landlock, m.Seccomp, m.Cgroup)
	fmt.Fprintf(stdout, "runtime:  %s\n\n", r.Runtime)
	fmt.Fprintf(stdout, "confinement = %q:\n", r.Confinement.Mode)
	tw := tabwriter.NewWriter(stdout, 2, 8, 2, ' ', 0)
	for _, l := range r.Confinement.Layers {
		what := l.Detail
		if l.State != confine.Active {
			what = l.Reason
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\n", l.Name, l.State, what)
	}
	tw.Flush()
	switch {
	case r.Verified:
		fmt.Fprintln(stdout, "\nverified: a process confined this way was refused what each active layer forbids")
	case r.Problem != "":
		fmt.Fprintln(stdout, "\nPROBLEM:", r.Problem)
	}
	return status
}

// newDoctorFlags defines doctor's flags: the sandbox's, and --json.
func newDoctorFlags(fs *pflag.FlagSet) (*configFlags, *bool) {
	return newSandboxFlags(fs), fs.Bool("json", false, "print the report as JSON")
}
