package inproc_test

import (
	"context"
	"fmt"

	"github.com/parselbox/parselbox/host/inproc"
	"github.com/parselbox/parselbox/sdk"
)

// Calc is a namespace of tools.
type Calc struct {
	Stats *Stats // a nested namespace: calc.stats.mean
}

// Point is a struct parameter: a JSON object passed for it arrives as a
// Point.
type Point struct {
	X float64 `json:"x"`
	Y float64 `json:"y"`
}

func (c *Calc) Add(a, b int) int { return a + b }

func (c *Calc) Norm(p Point, scale float64) float64 { return (p.X*p.X + p.Y*p.Y) * scale }

func (c *Calc) ParamNames() map[string][]string {
	return map[string][]string{"Add": {"a", "b"}, "Norm": {"point", "scale"}}
}

func (c *Calc) ToolDocs() map[string]string {
	return map[string]string{"": "Arithmetic.", "Add": "Add two integers."}
}

type Stats struct{}

func (Stats) Mean(xs []float64) float64 {
	var sum float64
	for _, x := range xs {
		sum += x
	}
	return sum / float64(len(xs))
}

func Example() {
	b, err := inproc.New("calc", &Calc{Stats: &Stats{}})
	if err != nil {
		panic(err)
	}
	ctx := context.Background()

	d, _ := b.Describe(ctx)
	for _, t := range d.Tools {
		fmt.Printf("%s %v %q\n", t.Name, t.Params, t.Description)
	}

	for _, call := range []struct{ name, args string }{
		{"add", `{"a": 1, "b": 2}`},
		{"norm", `{"point": {"x": 3, "y": 4}, "scale": 2}`},
		{"stats.mean", `{"arg0": [1, 2, 3]}`},
		{"norm", `{"point": {"x": "3", "y": 4}, "scale": 2}`},
		{"Add", `{}`},
	} {
		res, err := b.CallTool(ctx, &sdk.CallToolRequest{Name: call.name, Arguments: []byte(call.args)})
		if err != nil {
			panic(err)
		}
		if res.IsError {
			fmt.Printf("%s: %s: %s\n", call.name, res.Error.Code, res.Error.Message)
			continue
		}
		fmt.Printf("%s: %s\n", call.name, res.Content)
	}
	// Output:
	// add [a b] "Add two integers."
	// norm [point scale] ""
	// stats.mean [arg0] ""
	// add: 3
	// norm: 50
	// stats.mean: 2
	// norm: invalid_argument: argument "point": field "x": expected number, got string
	// Add: not_found: tool "calc.Add" not found (did you mean "calc.add"?)
}

// A func is a namespace that is itself callable: its one tool is named "".
func Example_func() {
	b, err := inproc.New("add", inproc.Func{
		Fn:          func(a, b int) int { return a + b },
		Params:      []string{"a", "b"},
		Description: "Add two integers.",
	})
	if err != nil {
		panic(err)
	}
	res, _ := b.CallTool(context.Background(), &sdk.CallToolRequest{Name: "", Arguments: []byte(`{"a": 1, "b": 2}`)})
	fmt.Println(string(res.Content))
	// Output: 3
}
