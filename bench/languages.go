package main

import (
	"context"
	"fmt"
	"time"
)

// Targets of the languages beyond Python: each call is an execution whose
// Python calls into the runtime of that language.
var languageTargets = []target{
	{"js_p50_ms", "js_exec_p50_ms", "≤ 2 × exec in the same loop", func(r results) bool {
		return r.v("js_p50_ms") <= 2*r.v("js_exec_p50_ms")
	}},
}

// runJS measures js("return 1") round trips (js_p50_ms) against 1+1 on the
// same snapshot-booted sandbox, interleaved so that both see the same load
// (js_exec_p50_ms). Every answer is checked.
func (b *bench) runJS(ctx context.Context) error {
	sb, err := b.start(ctx, false)
	if err != nil {
		return err
	}
	defer sb.Close()
	for range b.runs {
		var jsT, execT []float64
		for i := range b.execs + 20 {
			t0 := time.Now()
			r, err := sb.Exec(ctx, `js("return 1")`, time.Minute)
			d1 := time.Since(t0)
			if err != nil {
				return err
			}
			if r.Error != nil || string(r.Output) != "1" {
				return fmt.Errorf(`js("return 1") = %s, error %+v`, r.Output, r.Error)
			}
			t0 = time.Now()
			r, err = sb.Exec(ctx, "1+1", time.Minute)
			d2 := time.Since(t0)
			if err != nil {
				return err
			}
			if r.Error != nil || string(r.Output) != "2" {
				return fmt.Errorf("exec 1+1 = %s, error %+v", r.Output, r.Error)
			}
			if i >= 20 { // after a warm-up
				jsT, execT = append(jsT, ms(d1)), append(execT, ms(d2))
			}
		}
		b.add("js_p50_ms", percentile(jsT, 50))
		b.add("js_exec_p50_ms", percentile(execT, 50))
	}
	return nil
}
