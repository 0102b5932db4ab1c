package main

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
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
	// With -confine-layers: what each layer adds (all layers minus all
	// but that one, paired).
	{layerCostKey(confine.LayerLandlock), "", "", nil},
	{layerCostKey(confine.LayerLandlockNet), "", "", nil},
	{layerCostKey(confine.LayerSeccomp), "", "", nil},
	{layerCostKey(confine.LayerUser), "", "", nil},
	{layerCostKey(confine.LayerCgroup), "", "", nil},
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
	// snapshot: a cold boot would not be the figure measured. -boots 0
	// leaves them out (to measure the exec cost alone).
	boots := max(b.boots, 9)
	if b.boots == 0 {
		boots = 0
	}
	for range boots {
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
	// More runs than the other parts, each on fresh sandboxes, of half as
	// many rounds: what two identical sandboxes differ by (the control) is
	// mostly a matter of the instance (±0.2 ms from one run to the next,
	// whether 20 or 300 rounds warm them up), which only more instances
	// average out; 150 rounds give a run's median to a few hundredths.
	runs := 4 * b.runs
	var diffs, ctls [][]float64
	for run := range runs {
		fmt.Printf("confined and unconfined exec round trips, run %d of %d ...\n", run+1, runs)
		d, c, err := b.confinedExecRun(ctx, spec, rep, uint64(run), start)
		if err != nil {
			return err
		}
		diffs, ctls = append(diffs, d), append(ctls, c)
	}
	report := func(what string, runs [][]float64) {
		var meds []float64
		for _, r := range runs {
			meds = append(meds, median(r))
		}
		lo, hi := medianCI(meds)
		fmt.Printf("%s: median of %d runs' paired medians %.3f ms, 95%% CI [%.3f, %.3f]; all %d pairs pooled: median %.3f ms\n",
			what, len(meds), median(meds), lo, hi, len(slices.Concat(runs...)), median(slices.Concat(runs...)))
	}
	report("exec confined - unconfined", diffs)
	report("exec control - unconfined (noise)", ctls)
	return nil
}

// medianCI is a distribution-free 95 % confidence interval of the median
// of the population v was drawn from: the order statistics between which
// the median lies with probability ≥ 0.95 (binomial, p = 1/2); with fewer
// than 6 values no interval reaches 95 %, and it is the whole range (for
// 10 values it is the 2nd smallest to the 2nd largest).
func medianCI(v []float64) (lo, hi float64) {
	s := slices.Sorted(slices.Values(v))
	n := len(s)
	if n == 0 {
		return 0, 0
	}
	// The largest k with P(X < k) ≤ 0.025, X ~ Bin(n, 1/2): [s[k-1], s[n-k]]
	// in 0-based indices is then a ≥ 95 % interval.
	k, cum, c := 0, 0.0, 1.0 // c = C(n, i)
	for i := 0; i < n; i++ {
		cum += c * math.Pow(0.5, float64(n))
		if cum > 0.025 {
			break
		}
		k = i + 1
		c = c * float64(n-i) / float64(i+1)
	}
	if k == 0 {
		return s[0], s[n-1]
	}
	return s[k-1], s[n-k]
}

// An execVariant is one sandbox of an exec run and its round trips.
type execVariant struct {
	name string
	spec *confine.Spec
	sb   *sandbox.Supervisor
	d    []float64
}

// confinedExecRun is one run of 1+1 round trips on a confined sandbox and
// two unconfined ones (and, with -confine-layers, one per layer confined
// with all layers but that one), each answer checked. In each round every
// sandbox answers once, in an order drawn afresh, so that neither the load
// of the moment nor the position in the round favours one. The second
// unconfined sandbox is the control: its difference to the first is what
// the machine's noise alone makes of two identical sandboxes, next to which
// the confined one's difference is to be read. It returns the paired
// differences, confined and control minus unconfined.
func (b *bench) confinedExecRun(ctx context.Context, spec *confine.Spec, rep confine.Report, seed uint64, start func(*confine.Spec) (*sandbox.Supervisor, time.Duration, error)) (diff, ctl []float64, err error) {
	vs := []*execVariant{{name: "confined", spec: spec}, {name: "unconfined"}, {name: "control"}}
	if b.confineLayers {
		for _, l := range rep.Layers {
			if l.State != confine.Active || l.Name == confine.LayerNoNewPrivs {
				continue
			}
			s := *spec
			s.Without = append(slices.Clone(spec.Without), l.Name)
			vs = append(vs, &execVariant{name: l.Name, spec: &s})
		}
	}
	// Started in an order drawn afresh too: a sandbox runs slower for a
	// while after its snapshot restore, so the one started last would
	// otherwise always be the slowest (as the control was, started after
	// the unconfined one).
	rng := rand.New(rand.NewPCG(seed, 13))
	for _, k := range rng.Perm(len(vs)) {
		v := vs[k]
		if v.sb, _, err = start(v.spec); err != nil {
			return nil, nil, fmt.Errorf("%s: %w", v.name, err)
		}
		defer v.sb.Close()
	}
	for i := range max(b.execs/2, 50) + 20 {
		for _, k := range rng.Perm(len(vs)) {
			v := vs[k]
			t0 := time.Now()
			r, err := v.sb.Exec(ctx, "1+1", time.Minute)
			d := time.Since(t0)
			if err != nil {
				return nil, nil, fmt.Errorf("%s: %w", v.name, err)
			}
			if string(r.Output) != "2" {
				return nil, nil, fmt.Errorf("%s: 1+1 gave %s %+v", v.name, r.Output, r.Error)
			}
			if i >= 20 { // after the warm-up
				v.d = append(v.d, ms(d))
			}
		}
	}
	on, off, control := vs[0].d, vs[1].d, vs[2].d
	// Paired: each sample minus the unconfined one taken in the same
	// round, so that load that comes and goes weighs on both alike.
	diff, ctl = minus(on, off), minus(control, off)
	b.add("exec_confined_minus_unconfined_p50_ms", median(diff))
	b.add("exec_control_minus_unconfined_p50_ms", median(ctl))
	b.add("exec_p50_confined_ms", percentile(on, 50))
	b.add("exec_p50_unconfined_ms", percentile(off, 50))
	b.add("exec_p99_confined_ms", percentile(on, 99))
	b.add("exec_p99_unconfined_ms", percentile(off, 99))
	// A layer's cost: confined with every layer minus confined without it.
	for _, v := range vs[3:] {
		b.add(layerCostKey(v.name), median(minus(on, v.d)))
	}
	return diff, ctl, nil
}

// layerCostKey is the metric of what one layer adds to a round trip.
func layerCostKey(layer string) string {
	return "exec_layer_" + strings.ReplaceAll(layer, "-", "_") + "_cost_p50_ms"
}
