package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/parselbox/parselbox/host/confine"
	"github.com/parselbox/parselbox/host/sandbox"
)

// confineTargets are the cost of the kernel's confinement (package
// confine): snapshot boots and 1+1 round trips with every layer this
// machine offers, against the same without, measured alternately in the
// same run so that both see the same load.
var confineTargets = []target{
	{"boot_snapshot_confined_ms", "boot_snapshot_unconfined_ms", "≤ 1.05 × unconfined", func(r results) bool {
		return r.v("boot_snapshot_confined_ms") <= 1.05*r.v("boot_snapshot_unconfined_ms")
	}},
	{"exec_p50_confined_ms", "exec_p50_unconfined_ms", "≤ unconfined + 0.1 ms", func(r results) bool {
		return r.v("exec_p50_confined_ms") <= r.v("exec_p50_unconfined_ms")+0.1
	}},
	{"exec_confined_minus_unconfined_p50_ms", "", "≤ 0.1 ms (paired)", func(r results) bool {
		return r.v("exec_confined_minus_unconfined_p50_ms") <= 0.1
	}},
	// The same difference between two unconfined sandboxes: the noise.
	{"exec_control_minus_unconfined_p50_ms", "", "", nil},
	{"exec_p99_confined_ms", "exec_p99_unconfined_ms", "", nil},
}

// runConfined measures the confinement's cost; it says which layers were
// on, and measures nothing where none is.
func (b *bench) runConfined(ctx context.Context) error {
	spec := &confine.Spec{Mode: confine.BestEffort, Without: b.confineWithout}
	rep, err := confine.Check(spec)
	if err != nil {
		return err
	}
	fmt.Println("kernel confinement:", rep.Summary())
	if len(rep.Unavailable()) == len(rep.Layers) {
		fmt.Println("no kernel layer here: the confinement's cost is not measured")
		return nil
	}
	start := func(jail *confine.Spec) (*sandbox.Supervisor, time.Duration, error) {
		ws, err := os.MkdirTemp(b.cacheDir, "ws-")
		if err != nil {
			return nil, 0, err
		}
		began := time.Now()
		sb, err := sandbox.Start(ctx, sandbox.Options{Runtime: b.rt, CacheDir: b.cacheDir, Workspace: ws, Confine: jail})
		return sb, time.Since(began), err
	}
	// The snapshot both boot from (built here when this part runs alone).
	sb, _, err := start(nil)
	if err != nil {
		return err
	}
	sb.Close()
	// Boots, alternating, each one run; at least 9 of each, the target
	// being a few percent of a boot. Each must have booted from the
	// snapshot: a cold boot would not be the figure measured.
	for range max(b.boots, 9) {
		for _, jail := range []*confine.Spec{spec, nil} {
			sb, d, err := start(jail)
			if err != nil {
				return fmt.Errorf("confined=%v: %w", jail != nil, err)
			}
			snap := sb.Ready().Snapshot
			sb.Close()
			if !snap {
				return fmt.Errorf("confined=%v: the sandbox did not boot from the snapshot", jail != nil)
			}
			if jail != nil {
				b.add("boot_snapshot_confined_ms", ms(d))
			} else {
				b.add("boot_snapshot_unconfined_ms", ms(d))
			}
		}
	}
	for run := range b.runs {
		fmt.Printf("confined and unconfined exec round trips, run %d of %d ...\n", run+1, b.runs)
		if err := b.confinedExecRun(ctx, spec, start); err != nil {
			return err
		}
	}
	return nil
}

// confinedExecRun is one run of 1+1 round trips, in turn on a confined
// sandbox and on two unconfined ones, each answer checked. The second
// unconfined sandbox is the control: its difference to the first is what
// the machine's noise alone makes of two identical sandboxes, next to
// which the confined one's difference is to be read (under load, both
// move by a few tenths of a millisecond from run to run).
func (b *bench) confinedExecRun(ctx context.Context, spec *confine.Spec, start func(*confine.Spec) (*sandbox.Supervisor, time.Duration, error)) error {
	confined, _, err := start(spec)
	if err != nil {
		return err
	}
	defer confined.Close()
	plain, _, err := start(nil)
	if err != nil {
		return err
	}
	defer plain.Close()
	control, _, err := start(nil)
	if err != nil {
		return err
	}
	defer control.Close()
	var on, off, ctl []float64
	for i := range b.execs + 20 {
		// Each round trip follows one on another sandbox, as the others do.
		for _, sb := range []*sandbox.Supervisor{confined, plain, control} {
			t0 := time.Now()
			r, err := sb.Exec(ctx, "1+1", time.Minute)
			d := time.Since(t0)
			if err != nil {
				return err
			}
			if string(r.Output) != "2" {
				return fmt.Errorf("1+1 gave %s %+v", r.Output, r.Error)
			}
			switch {
			case i < 20: // warm-up
			case sb == confined:
				on = append(on, ms(d))
			case sb == plain:
				off = append(off, ms(d))
			default:
				ctl = append(ctl, ms(d))
			}
		}
	}
	// Paired: each sample minus the unconfined one taken next to it, so
	// that load that comes and goes weighs on both alike.
	b.add("exec_confined_minus_unconfined_p50_ms", percentile(minus(on, off), 50))
	b.add("exec_control_minus_unconfined_p50_ms", percentile(minus(ctl, off), 50))
	b.add("exec_p50_confined_ms", percentile(on, 50))
	b.add("exec_p50_unconfined_ms", percentile(off, 50))
	b.add("exec_p99_confined_ms", percentile(on, 99))
	b.add("exec_p99_unconfined_ms", percentile(off, 99))
	return nil
}
