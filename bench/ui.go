package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"time"

	"github.com/parselbox/parselbox/host"
	"github.com/parselbox/parselbox/host/mcpserver"
)

// What the model reads of a result whose display() view is 20 kB (the
// view itself goes to the UI in the result's _meta), and one GET to an
// @api route of the served app that returns a constant.
func init() {
	targets = append(targets,
		target{"display_result_bytes_to_model", "", "≤ 200 B (view: 20 kB)", func(r results) bool {
			return r.v("display_result_bytes_to_model") <= 200
		}},
		target{"serve_api_p50_ms", "exec_p50_ms", "≤ exec + 2 ms", func(r results) bool {
			return r.v("serve_api_p50_ms") <= r.v("exec_p50_ms")+2
		}},
	)
}

// measureUI records display_result_bytes_to_model and serve_api_p50_ms;
// a failure is reported and leaves the figures out.
func (b *bench) measureUI(ctx context.Context) {
	if err := b.ui(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "bench: ui:", err)
	}
}

func (b *bench) ui(ctx context.Context) error {
	sb, err := host.New(ctx, host.Config{
		RuntimeDir: b.rt.Dir, CacheDir: b.cacheDir,
		Serve: &host.ServeConfig{Addr: "127.0.0.1:0"},
	})
	if err != nil {
		return err
	}
	defer sb.Close()
	tool := mcpserver.NewTool(sb, nil)
	args, _ := json.Marshal(map[string]string{"code": "display('<div class=\"p-4\">' + 'x' * 20000 + '</div>')\n'ok'"})
	resp, err := tool.Call(ctx, args)
	if err != nil {
		return err
	}
	text, _ := resp.MarshalJSON()
	if len(resp.View) < 20000 {
		return fmt.Errorf("the view is %d bytes", len(resp.View))
	}
	b.add("display_result_bytes_to_model", float64(len(text)))

	if r, err := sb.Execute(ctx, "@api.get('/const')\ndef const(params):\n    return 1"); err != nil || r.Error != nil {
		return fmt.Errorf("registering the route: %v %v", err, r.Error)
	}
	url := sb.ServeURL() + "/api/const"
	get := func() (time.Duration, error) {
		began := time.Now()
		res, err := http.Get(url)
		if err != nil {
			return 0, err
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != 200 || string(body) != "1" {
			return 0, fmt.Errorf("GET /api/const: %d %s", res.StatusCode, body)
		}
		return time.Since(began), nil
	}
	for range 20 { // warm up
		if _, err := get(); err != nil {
			return err
		}
	}
	for range b.runs {
		var v []float64
		for range b.execs {
			d, err := get()
			if err != nil {
				return err
			}
			v = append(v, ms(d))
		}
		b.add("serve_api_p50_ms", percentile(v, 50))
	}
	return nil
}
