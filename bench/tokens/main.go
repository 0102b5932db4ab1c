// Command tokens measures what "code mode" saves in tokens: one fixed
// multi-step task against the demo's local pet store (REST), countries
// (GraphQL) and the MCP "everything" server, done two ways through real
// MCP clients (the go-sdk's):
//
//   - direct: every underlying tool is an MCP tool, and the model calls
//     them one by one (independent calls in parallel, the best case for
//     this way);
//   - code: Parselbox's one tool, execute_code, called twice (a look at
//     the tools, then one program), with describe_tools "none" and
//     "signatures".
//
// It counts, with a real tokenizer (gpt-tokenizer's o200k_base from the
// npm registry, pinned in tests/fixtures/tokenizer), the tokens the model
// reads: the tool definitions and instructions, every call it writes and
// every result it reads. "once" counts each of them once; "loop" counts
// what an agent loop sends the model: every turn re-reads the definitions
// and the conversation so far. The figures are merged into
// bench-results.json (as metrics of one run) and printed. Run by
// `make bench-tokens`; nothing here is a test.
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/parselbox/parselbox/host"
	"github.com/parselbox/parselbox/host/mcpserver"
)

// The task, as the user would ask it.
const task = `Ops report: (1) how many pets the store has in each status (available, pending, sold), ` +
	`and the available ones by name with their category; (2) for each continent, how many countries ` +
	`the countries API knows, their total population and the most populous one with its capital; ` +
	`(3) the weather in each city the weather tool covers, and the warmest one.`

// The code-mode calls: a look at the tools, then one program.
const (
	lookNone = `{"petstore": help(petstore), "weather": help(everything.get_structured_content), "gql": gql.search("continent")}`
	lookSigs = `gql.search("continent")`
	program  = `pets = {s: petstore.findPetsByStatus(status=s)["data"] for s in ("available", "pending", "sold")}
conts = gql.graphql("{ continents { name countries { name capital population } } }")["data"]["continents"]
weather = {c: everything.get_structured_content(location=c) for c in ("New York", "Chicago", "Los Angeles")}
report = {
    "pets": {s: len(p) for s, p in pets.items()},
    "available": [(p["name"], (p.get("category") or {}).get("name")) for p in pets["available"]],
    "continents": {c["name"]: {"countries": len(c["countries"]),
                               "population": sum(x["population"] or 0 for x in c["countries"]),
                               "largest": max(c["countries"], key=lambda x: x["population"] or 0, default=None)}
                   for c in conts},
    "weather": {c: w["temperature"] for c, w in weather.items()},
}
report["warmest"] = max(report["weather"], key=report["weather"].get)
report`
)

// The direct way's turns: the calls of each turn are independent, so the
// model makes them together (parallel tool calls).
var directTurns = [][]call{
	{
		{"petstore_findPetsByStatus", map[string]any{"status": "available"}},
		{"petstore_findPetsByStatus", map[string]any{"status": "pending"}},
		{"petstore_findPetsByStatus", map[string]any{"status": "sold"}},
		{"gql_search", map[string]any{"pattern": "continent"}},
		{"get-structured-content", map[string]any{"location": "New York"}},
		{"get-structured-content", map[string]any{"location": "Chicago"}},
		{"get-structured-content", map[string]any{"location": "Los Angeles"}},
	},
	{
		{"gql_graphql", map[string]any{"query": "{ continents { name countries { name capital population } } }"}},
	},
}

type call struct {
	Tool string         `json:"name"`
	Args map[string]any `json:"arguments"`
}

// exchange is one turn: the calls the model wrote, the results it read.
type exchange struct {
	calls, results []string
}

// way is one way of doing the task, as text the model reads.
type way struct {
	name         string
	instructions string // the server's instructions (system prompt)
	definitions  string // the tools, as the model is shown them
	description  string // execute_code's description (code ways)
	tools        int    // how many tools the model is shown
	turns        []exchange
}

func main() {
	var (
		out     = flag.String("out", "bench-results.json", "the results file to merge the figures into")
		binDir  = flag.String("bin", "bin", "directory of parselbox's bridge plugins (make build)")
		runtime = flag.String("runtime", "", "runtime directory (default: $PARSELBOX_RUNTIME)")
	)
	flag.Parse()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	if err := run(ctx, *out, *binDir, *runtime); err != nil {
		fmt.Fprintln(os.Stderr, "bench-tokens:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, out, binDir, runtimeDir string) error {
	root, err := os.Getwd()
	if err != nil {
		return err
	}
	binDir, _ = filepath.Abs(binDir)
	everything := filepath.Join(root, "tests/fixtures/mcp/node_modules/@modelcontextprotocol/server-everything/dist/index.js")
	counter := filepath.Join(root, "tests/fixtures/tokenizer/count.mjs")
	for _, f := range []string{everything, counter} {
		if _, err := os.Stat(f); err != nil {
			return fmt.Errorf("%w (run make fixtures)", err)
		}
	}
	node, err := exec.LookPath("node")
	if err != nil {
		return err
	}
	work, err := os.MkdirTemp("", "bench-tokens-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	const token = "bench-token-5d1e0c7a93"
	os.Setenv("DEMO_API_TOKEN", token)
	petURL, stop1, err := demoServer(ctx, work, "./plugins/http/internal/demoserver", token)
	if err != nil {
		return err
	}
	defer stop1()
	gqlURL, stop2, err := demoServer(ctx, work, "./plugins/graphql/internal/demoserver", token)
	if err != nil {
		return err
	}
	defer stop2()
	cfg := host.Config{
		RuntimeDir: runtimeDir,
		PluginDirs: []string{binDir},
		Bridges: map[string]host.BridgeConfig{
			"petstore": {Plugin: "http", Env: []string{"DEMO_API_TOKEN"},
				Config: map[string]any{"spec": petURL + "/openapi.json", "token_env": "DEMO_API_TOKEN"}},
			"gql": {Plugin: "graphql", Env: []string{"DEMO_API_TOKEN"},
				Config: map[string]any{"endpoint": gqlURL, "token_env": "DEMO_API_TOKEN"}},
		},
	}
	everythingServer := host.MCPServer{Command: node, Args: []string{everything, "stdio"}}

	direct, err := directWay(ctx, cfg, node, everything)
	if err != nil {
		return fmt.Errorf("direct: %w", err)
	}
	ways := []*way{direct}
	for _, mode := range []string{host.DescribeNone, host.DescribeSignatures} {
		c := cfg
		c.DescribeTools = mode
		c.MCPServers = map[string]host.MCPServer{"everything": everythingServer}
		look := lookNone
		if mode == host.DescribeSignatures {
			look = lookSigs
		}
		w, err := codeWay(ctx, c, "code_"+mode, look)
		if err != nil {
			return fmt.Errorf("code (%s): %w", mode, err)
		}
		ways = append(ways, w)
	}
	return report(ctx, node, counter, out, ways)
}

// demoServer builds and starts one of the demo's servers; it prints its URL.
func demoServer(ctx context.Context, work, pkg, token string) (string, func(), error) {
	bin := filepath.Join(work, filepath.Base(filepath.Dir(pkg)))
	if b, err := exec.CommandContext(ctx, "go", "build", "-o", bin, pkg).CombinedOutput(); err != nil {
		return "", nil, fmt.Errorf("building %s: %v\n%s", pkg, err, b)
	}
	cmd := exec.CommandContext(ctx, bin, "-token", token)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return "", nil, err
	}
	if err := cmd.Start(); err != nil {
		return "", nil, err
	}
	stop := func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		stop()
		return "", nil, fmt.Errorf("%s printed no URL: %v", pkg, err)
	}
	return strings.TrimSpace(line), stop, nil
}

// toolJSON is a tool as a model is shown it.
func toolJSON(t *mcp.Tool) any {
	return map[string]any{"name": t.Name, "description": t.Description, "input_schema": t.InputSchema}
}

// directWay serves every tool of the pet store and the countries bridges
// as an MCP tool of its own (a go-sdk server over in-memory pipes; each
// call runs in a Parselbox sandbox, which only passes it to the bridge),
// and connects to the everything server itself (stdio).
func directWay(ctx context.Context, cfg host.Config, node, everything string) (*way, error) {
	sb, err := host.New(ctx, cfg)
	if err != nil {
		return nil, err
	}
	defer sb.Close()
	r, err := sb.Execute(ctx, `found = sbx.search(".")
paths = [t["path"] for k, v in found.items() if not k.startswith("sbx") for t in v if "path" in t]
{p: sbx.inspect(p)[p] for p in paths}`)
	if err != nil {
		return nil, err
	}
	if r.Error != nil {
		return nil, fmt.Errorf("listing the tools: %s: %s", r.Error.Type, r.Error.Message)
	}
	var docs map[string]struct {
		Description string          `json:"description"`
		Parameters  json.RawMessage `json:"parameters"`
	}
	if err := json.Unmarshal(r.Output, &docs); err != nil {
		return nil, fmt.Errorf("listing the tools: %w: %s", err, r.Output)
	}
	srv := mcp.NewServer(&mcp.Implementation{Name: "apis", Version: "1"}, nil)
	for path, d := range docs {
		schema := d.Parameters
		if len(schema) == 0 || string(schema) == "null" {
			schema = json.RawMessage(`{"type":"object"}`)
		}
		srv.AddTool(&mcp.Tool{Name: strings.ReplaceAll(path, ".", "_"), Description: d.Description, InputSchema: schema},
			func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				args := string(req.Params.Arguments)
				if args == "" || args == "null" {
					args = "{}"
				}
				res, err := sb.Execute(ctx, fmt.Sprintf("import json\n%s(**json.loads(%q))", path, args))
				if err != nil {
					return nil, err
				}
				if res.Error != nil {
					return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: res.Error.Type + ": " + res.Error.Message}}}, nil
				}
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(res.Output)}}}, nil
			})
	}
	st, ct := mcp.NewInMemoryTransports()
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() { _ = srv.Run(sctx, st) }()
	client := mcp.NewClient(&mcp.Implementation{Name: "bench-tokens", Version: "1"}, nil)
	apis, err := client.Connect(ctx, ct, nil)
	if err != nil {
		return nil, err
	}
	defer apis.Close()
	ev, err := client.Connect(ctx, &mcp.CommandTransport{Command: exec.Command(node, everything, "stdio")}, nil)
	if err != nil {
		return nil, fmt.Errorf("starting the everything server: %w", err)
	}
	defer ev.Close()

	w := &way{name: "direct"}
	owner := map[string]*mcp.ClientSession{}
	var defs []any
	for _, cs := range []*mcp.ClientSession{apis, ev} {
		tools, err := cs.ListTools(ctx, nil)
		if err != nil {
			return nil, err
		}
		for _, t := range tools.Tools {
			owner[t.Name] = cs
			defs = append(defs, toolJSON(t))
		}
	}
	b, _ := json.Marshal(defs)
	w.definitions, w.tools = string(b), len(defs)
	for _, turn := range directTurns {
		var ex exchange
		for _, c := range turn {
			cs := owner[c.Tool]
			if cs == nil {
				return nil, fmt.Errorf("no tool %s", c.Tool)
			}
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: c.Tool, Arguments: c.Args})
			if err != nil {
				return nil, fmt.Errorf("%s: %w", c.Tool, err)
			}
			text := resultText(res)
			if res.IsError {
				return nil, fmt.Errorf("%s failed: %s", c.Tool, text)
			}
			cb, _ := json.Marshal(c)
			ex.calls = append(ex.calls, string(cb))
			ex.results = append(ex.results, text)
		}
		w.turns = append(w.turns, ex)
	}
	return w, nil
}

// resultText is what a model reads of a tool result: its text blocks.
func resultText(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, t.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// codeWay runs the task through Parselbox's MCP server: execute_code with
// a look at the tools, then the program.
func codeWay(ctx context.Context, cfg host.Config, name, look string) (*way, error) {
	srv, err := mcpserver.New(mcpserver.Options{Config: cfg, Version: "bench"})
	if err != nil {
		return nil, err
	}
	defer srv.Close()
	st, ct := mcp.NewInMemoryTransports()
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- srv.Run(sctx, st) }()
	client := mcp.NewClient(&mcp.Implementation{Name: "bench-tokens", Version: "1"}, nil)
	cs, err := client.Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		return nil, err
	}
	defer cs.Close()
	w := &way{name: name, instructions: cs.InitializeResult().Instructions}
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		return nil, err
	}
	var defs []any
	for _, t := range tools.Tools {
		defs = append(defs, toolJSON(t))
		if t.Name == mcpserver.ToolName {
			w.description = t.Description
		}
	}
	b, _ := json.Marshal(defs)
	w.definitions, w.tools = string(b), len(defs)
	for _, code := range []string{look, program} {
		args := map[string]any{"code": code}
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: mcpserver.ToolName, Arguments: args})
		if err != nil {
			return nil, err
		}
		text := resultText(res)
		if res.IsError {
			return nil, fmt.Errorf("execute_code failed: %s", text)
		}
		cb, _ := json.Marshal(call{Tool: mcpserver.ToolName, Args: args})
		w.turns = append(w.turns, exchange{calls: []string{string(cb)}, results: []string{text}})
	}
	if os.Getenv("BENCH_TOKENS_SHOW") != "" {
		fmt.Fprintf(os.Stderr, "== %s: the program's result\n%s\n", name, w.turns[len(w.turns)-1].results[0])
	}
	return w, nil
}

// report counts the tokens of every way, prints a table and merges the
// figures into the results file.
func report(ctx context.Context, node, counter, out string, ways []*way) error {
	var texts []string
	for _, w := range ways {
		texts = append(texts, w.instructions, w.definitions, w.description)
		for _, t := range w.turns {
			texts = append(texts, t.calls...)
			texts = append(texts, t.results...)
		}
	}
	in, _ := json.Marshal(texts)
	cmd := exec.CommandContext(ctx, node, counter)
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	outb, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("counting tokens: %v\n%s", err, stderr.String())
	}
	var counts []int
	if err := json.Unmarshal(outb, &counts); err != nil || len(counts) != len(texts) {
		return errors.Join(fmt.Errorf("the tokenizer answered %q", outb), err)
	}
	next := func() int { n := counts[0]; counts = counts[1:]; return n }
	type figures struct {
		upfront, description, calls, results, once, loop, turns int
		seqLoop, seqTurns                                       int // one call per turn
	}
	fig := map[string]figures{}
	for _, w := range ways {
		var f figures
		instr, defs, desc := next(), next(), next()
		f.upfront, f.description = instr+defs, desc
		context := f.upfront // what every turn reads before the conversation
		seq := f.upfront
		for _, t := range w.turns {
			f.loop += context // the model reads all so far, writes this turn's calls
			var sizes []int
			for range t.calls {
				n := next()
				f.calls += n
				context += n
				sizes = append(sizes, n)
			}
			for i := range t.results {
				n := next()
				f.results += n
				context += n
				// One call per turn: read all so far, write one call.
				f.seqLoop += seq
				seq += sizes[i] + n
				f.seqTurns++
			}
		}
		f.loop += context // the last turn reads every result and answers
		f.seqLoop += seq
		f.turns = len(w.turns) + 1
		f.seqTurns++
		f.once = f.upfront + f.calls + f.results
		fig[w.name] = f
	}
	fmt.Printf("The task: %s\n\n", task)
	fmt.Printf("%-18s %6s %8s %8s %8s %8s %6s %8s\n", "way", "tools", "upfront", "calls", "results", "once", "turns", "loop")
	for _, w := range ways {
		f := fig[w.name]
		fmt.Printf("%-18s %6d %8d %8d %8d %8d %6d %8d\n", w.name, w.tools, f.upfront, f.calls, f.results, f.once, f.turns, f.loop)
	}
	d := fig["direct"]
	fmt.Printf("%-18s %6d %8d %8d %8d %8d %6d %8d\n", "direct, 1 per turn", ways[0].tools, d.upfront, d.calls, d.results, d.once, d.seqTurns, d.seqLoop)
	fmt.Println("(upfront: instructions + tool definitions; once: upfront + calls + results, each read once;")
	fmt.Println(" loop: what an agent loop sends, every turn re-reading all so far; \"direct\" makes the")
	fmt.Println(" independent calls of a turn in parallel, \"direct, 1 per turn\" one call per turn)")
	res := map[string]any{}
	if data, err := os.ReadFile(out); err == nil {
		_ = json.Unmarshal(data, &res)
	}
	metric := func(v float64) map[string]any {
		return map[string]any{"median": v, "min": v, "max": v, "runs": []float64{v}}
	}
	fmt.Println()
	for _, w := range ways {
		f := fig[w.name]
		res["tokens_"+w.name+"_upfront"] = metric(float64(f.upfront))
		res["tokens_"+w.name+"_once"] = metric(float64(f.once))
		res["tokens_"+w.name+"_loop"] = metric(float64(f.loop))
		if w.name == "direct" {
			res["tokens_direct_sequential_loop"] = metric(float64(f.seqLoop))
			continue
		}
		res["tokens_"+w.name+"_description"] = metric(float64(f.description))
		once, loop := ratio(d.once, f.once), ratio(d.loop, f.loop)
		res["tokens_ratio_"+w.name+"_once"] = metric(once)
		res["tokens_ratio_"+w.name+"_loop"] = metric(loop)
		seq := ratio(d.seqLoop, f.loop)
		res["tokens_ratio_"+w.name+"_sequential_loop"] = metric(seq)
		fmt.Printf("%s: %.1fx fewer tokens counted once, %.1fx fewer over the agent loop (%.1fx against one call per turn); execute_code's description: %d tokens\n",
			w.name, once, loop, seq, f.description)
	}
	data, _ := json.MarshalIndent(res, "", "  ")
	if err := os.WriteFile(out, append(data, '\n'), 0o644); err != nil {
		return err
	}
	fmt.Printf("\nmerged into %s\n", out)
	return nil
}

func ratio(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return float64(int(float64(a)/float64(b)*100+0.5)) / 100
}
