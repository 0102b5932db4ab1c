# Parselbox: `make demo` shows what it does, `make test` proves it.
# Every dependency is fetched here: Go modules from the module proxy, the
# sandbox runtime (Deno, Pyodide, just-bash) from the npm registry.

GO        ?= go
NPM       ?= npm
BIN       := bin
RUNTIME   := runtime
STAMP     := $(RUNTIME)/node_modules/.installed
GOFLAGS   ?=
TEST_TIMEOUT ?= 20m

.PHONY: all build runtime test demo bench proto lint clean

all: build

## runtime: install the pinned sandbox runtime from the npm registry
runtime: $(STAMP)

$(STAMP): $(RUNTIME)/package.json $(RUNTIME)/package-lock.json
	@command -v $(NPM) >/dev/null || { echo "npm not found: install Node.js + npm (used only to fetch the pinned runtime)"; exit 1; }
	cd $(RUNTIME) && $(NPM) ci --ignore-scripts --no-audit --no-fund
	@touch $@

## build: the runtime, bin/parselbox and every bridge binary
build: runtime
	@mkdir -p $(BIN)
	$(GO) build $(GOFLAGS) -o $(BIN)/parselbox ./cmd/parselbox

## test: build what the tests need, then run every test against the real runtime
test: build
	PARSELBOX_REQUIRE_RUNTIME=1 PARSELBOX_RUNTIME=$(CURDIR)/$(RUNTIME) \
		$(GO) test -race -timeout=$(TEST_TIMEOUT) ./...

## demo: a short scripted tour
demo: build
	@./demo/demo.sh

## bench: measure boot, exec and calls against a bare Deno + Pyodide floor
bench: build
	$(GO) run ./bench -runtime $(CURDIR)/$(RUNTIME) -out bench-results.json

## lint: vet, formatting, and the rule that sdk/ and proto/ never import host/
lint:
	$(GO) vet ./...
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); exit 1; }
	@! $(GO) list -deps ./sdk/... ./proto/... | grep -q 'parselbox/host' || { echo "sdk/ or proto/ imports host/"; exit 1; }

clean:
	rm -rf $(BIN) bench-results.json
