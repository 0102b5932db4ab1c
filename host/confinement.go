package host

import (
	"github.com/parselbox/parselbox/host/confine"
	"github.com/parselbox/parselbox/host/sandbox"
)

// confine sets up the kernel's confinement of the sandbox process from the
// configuration (package confine), and says in the log which layers apply
// and why any does not. With confinement = "required", a missing layer is
// a ConfigError.
func (s *Sandbox) confine(opts *sandbox.Options) error {
	mode, err := confine.ParseMode(s.cfg.Confinement) // Validate checked it
	if err != nil {
		return &ConfigError{err}
	}
	opts.Confine = &confine.Spec{Mode: mode, RunAs: s.cfg.RunAs, CPU: s.cfg.CPU, Logger: s.log}
	if opts.HardMemoryMB == 0 {
		opts.HardMemoryMB = 2*opts.MemoryMB + 512 // what the cgroup (or the RSS watchdog) allows
	}
	check := *opts.Confine
	check.Network, check.AllowNet, check.MemoryMB = opts.Network, opts.AllowNet, opts.HardMemoryMB
	if s.jail, err = confine.Check(&check); err != nil {
		return &ConfigError{err}
	}
	switch {
	case mode == confine.Off:
		s.log.Warn("kernel confinement is off: Deno's permissions are the sandbox's only wall")
	case len(s.jail.Unavailable()) > 0:
		s.log.Warn("kernel confinement: some layers are unavailable", "mode", mode, "layers", s.jail.Summary())
	default:
		s.log.Info("kernel confinement", "mode", mode, "layers", s.jail.Summary())
	}
	return nil
}

// Confinement says which kernel layers confine the sandbox process (Landlock,
// seccomp, no_new_privs, an unprivileged user, a cgroup), and why any does
// not: what `parselbox doctor` and sbx.info() show.
func (s *Sandbox) Confinement() confine.Report { return s.jail }
