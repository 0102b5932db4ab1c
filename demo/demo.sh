#!/usr/bin/env bash
# A short tour of Parselbox: run by `make demo` after `make build`.
set -euo pipefail
cd "$(dirname "$0")/.."
pbx=bin/parselbox
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT

step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
show() { printf '$ %s\n' "$*"; "$@" || true; }

step "Python in a sandbox: the last expression comes back as JSON"
show $pbx exec 'import statistics
data = [3, 1, 4, 1, 5, 9, 2, 6]
{"mean": statistics.mean(data), "sorted": sorted(data)}'

step "Errors come back typed, with a traceback trimmed to your code (exit status 1)"
show $pbx exec 'def f(x):
    return 1 / x
f(0)'

step "Files: inputs in /files, outputs in /workspace (--output-dir keeps them)"
printf 'name,score\nada,91\nbob,78\n' > "$work/scores.csv"
show $pbx exec --file "$work/scores.csv" --output-dir "$work/out" 'import csv
rows = list(csv.DictReader(open("/files/scores.csv")))
best = max(rows, key=lambda r: int(r["score"]))
open("best.txt", "w").write(best["name"])
best'
printf 'on the host: %s/out/best.txt = %s\n' "$work" "$(cat "$work/out/best.txt")"

step "Isolation: no host files, no host environment, no network unless granted"
export DEMO_SECRET=hunter2
show $pbx exec 'import os
out = {"env": dict(os.environ)}
try:
    open("/etc/passwd").read()
except OSError as e:
    out["/etc/passwd"] = type(e).__name__
out'

step "Limits: a runaway loop is interrupted at the timeout and the interpreter survives"
show $pbx exec --timeout 2 'while True: pass'

step "Memory: an allocation over the cap is a MemoryError, not a dead sandbox"
show $pbx exec --memory 256 'try:
    b = bytearray(600 * 1024 * 1024)
except MemoryError:
    b = "MemoryError caught"
b'

step "Bridges: tools that run on the host, as Python objects (a plugin built with sdk/)"
cat > "$work/greeter.hcl" <<HCL
bridge "greeter" {
  plugin = "greeter"   # bin/parselbox-bridge-greeter, next to parselbox
}
HCL
cat "$work/greeter.hcl"
show $pbx exec --config "$work/greeter.hcl" 'import asyncio, time
t0 = time.time()
hello = greeter.greet("ada")                                   # looks synchronous
ticks = await asyncio.gather(*[greeter.slow.task(seconds=1) for _ in range(10)])
{"hello": hello, "ten_tasks_in_s": round(time.time() - t0, 1),
 "found": sbx.search("greet"), "doc": help(greeter.greet)}'

step "Built-in bridges: REST/OpenAPI, GraphQL, shell and MCP, each its own plugin process"
echo "(starting a local pet store API and a GraphQL API, for this demo only)"
go build -o "$work/petstore" ./plugins/http/internal/demoserver
go build -o "$work/countries" ./plugins/graphql/internal/demoserver
export DEMO_API_TOKEN=demo-token-7f3a9c51   # stays on the host: the sandbox never sees it
"$work/petstore" -token "$DEMO_API_TOKEN" > "$work/petstore.url" & servers=$!
"$work/countries" -token "$DEMO_API_TOKEN" > "$work/gql.url" & servers="$servers $!"
trap 'kill $servers 2>/dev/null; rm -rf "$work"' EXIT
until [ -s "$work/petstore.url" ] && [ -s "$work/gql.url" ]; do sleep 0.1; done
everything=tests/fixtures/mcp/node_modules/@modelcontextprotocol/server-everything/dist/index.js
cat > "$work/bridges.hcl" <<HCL
bridge "petstore" {
  plugin = "http"
  env    = ["DEMO_API_TOKEN"]
  config = { spec = "$(cat "$work/petstore.url")/openapi.json", token_env = "DEMO_API_TOKEN" }
}
bridge "gql" {
  plugin = "graphql"
  env    = ["DEMO_API_TOKEN"]
  config = { endpoint = "$(cat "$work/gql.url")", token_env = "DEMO_API_TOKEN" }
}
bridge "sh" {
  plugin = "shell"
  config = { command = "bash", timeout = 10 }
}
mcp_server "everything" {
  command = "$(command -v node)"
  args    = ["$PWD/$everything", "stdio"]
}
HCL
cat "$work/bridges.hcl"
show $pbx exec --config "$work/bridges.hcl" 'import asyncio
pets = petstore.findPetsByStatus("available")["data"]
try:
    petstore.getPetById(petId="abc")          # checked against the OpenAPI spec first
except ValueError as e:
    invalid = str(e)
country = gql.graphql("query($c: ID!) { country(code: $c) { name capital } }", {"c": "FR"})["data"]
session = sh.shell.task()                      # a live shell that keeps state
session.send("x=21"); session.send("echo $((x*2))")
while session.tail(1) != "42":
    await asyncio.sleep(0.05)
session.cancel()
{"pets": [p["name"] for p in pets], "invalid": invalid, "country": country,
 "shell": [sh.exec("uname -s")["stdout"].strip(), session.tail(1)],
 "mcp": [everything.echo(message="hi"), everything.get_sum(2, 3)],
 "token seen by the sandbox": "demo-token" in str(petstore.get("/echo")["data"])}'

step "The MCP server: parselbox with no subcommand, as an MCP client starts it (stdio)"
echo "(an MCP client session: tools, state across calls, isError, files as resources)"
show go run ./demo/mcpclient $pbx --timeout 10

printf '\nNext: README.md shows the Go API, the configuration file, the MCP server and the bridges.\n'
