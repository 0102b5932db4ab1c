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

.PHONY: all build runtime fixtures browser pyclients shells test fleet-test image image-test demo bench bench-tokens proto lint fuzz clean install

all: build

## runtime: install the pinned sandbox runtime from the npm registry
runtime: $(STAMP)

$(STAMP): $(RUNTIME)/package.json $(RUNTIME)/package-lock.json
	@command -v $(NPM) >/dev/null || { echo "npm not found: install Node.js + npm (used only to fetch the pinned runtime)"; exit 1; }
	cd $(RUNTIME) && $(NPM) ci --ignore-scripts --no-audit --no-fund
	@touch $@

# Bridge binaries installed next to parselbox: name -> package.
BRIDGES := greeter=./sdk/example/greeter shell=./plugins/shell http=./plugins/http mcpproxy=./plugins/mcpproxy graphql=./plugins/graphql

## build: the runtime, bin/parselbox and every bridge binary
build: runtime
	@mkdir -p $(BIN)
	$(GO) build $(GOFLAGS) -ldflags "-X main.commit=$$(git rev-parse --short HEAD 2>/dev/null)" -o $(BIN)/parselbox ./cmd/parselbox
	@for b in $(BRIDGES); do \
		echo "$(GO) build -o $(BIN)/parselbox-bridge-$${b%%=*} $${b#*=}"; \
		$(GO) build $(GOFLAGS) -o $(BIN)/parselbox-bridge-$${b%%=*} $${b#*=} || exit 1; \
	done

## install: parselbox and the bridges into PREFIX/bin, the runtime into
## PREFIX/lib/parselbox/runtime, where parselbox finds it (DESTDIR for staging)
PREFIX ?= /usr/local
install: build
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib/parselbox
	install -m 0755 $(BIN)/parselbox $(BIN)/parselbox-bridge-* $(DESTDIR)$(PREFIX)/bin/
	rm -rf $(DESTDIR)$(PREFIX)/lib/parselbox/runtime
	mkdir -p $(DESTDIR)$(PREFIX)/lib/parselbox/runtime
	cp -a $(RUNTIME)/package.json $(RUNTIME)/package-lock.json $(RUNTIME)/node_modules $(DESTDIR)$(PREFIX)/lib/parselbox/runtime/

## fixtures: npm packages the tests run against (MCP servers and clients), pinned
## by the lock files under tests/fixtures
FIXTURES := $(dir $(wildcard tests/fixtures/*/package-lock.json))
fixtures: $(addsuffix node_modules/.installed,$(FIXTURES))

tests/fixtures/%/node_modules/.installed: tests/fixtures/%/package-lock.json
	@command -v $(NPM) >/dev/null || { echo "npm not found: install Node.js + npm"; exit 1; }
	cd tests/fixtures/$* && $(NPM) ci --ignore-scripts --no-audit --no-fund
	@touch $@

## browser: Debian's chromium for the tests that look at pages (installed
## with apt-get when missing; where it cannot be, those tests skip and say so)
browser:
	@command -v chromium >/dev/null 2>&1 || { command -v apt-get >/dev/null 2>&1 && \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; } || \
		echo "make browser: chromium could not be installed: the browser tests will skip"

## pyclients: Debian's requests and httpx (pure Python), from which the tests
## build the wheels of the HTTP-library tests (installed with apt-get when
## missing; where they cannot be, those tests skip and say so)
PYCLIENTS := python3-requests python3-urllib3 python3-six python3-idna python3-certifi \
	python3-charset-normalizer python3-httpx python3-httpcore python3-h11 python3-anyio \
	python3-sniffio python3-rfc3986
pyclients:
	@test -d /usr/lib/python3/dist-packages/httpx -a -d /usr/lib/python3/dist-packages/requests || \
		{ command -v apt-get >/dev/null 2>&1 && apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(PYCLIENTS) >/dev/null; } || \
		echo "make pyclients: requests and httpx could not be installed: their tests will skip"

## shells: Debian's zsh and fish, in which the tests run the completion
## scripts (installed with apt-get when missing; where they cannot be, those
## tests skip and say so)
shells:
	@command -v zsh >/dev/null 2>&1 && command -v fish >/dev/null 2>&1 || { command -v apt-get >/dev/null 2>&1 && \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq zsh fish >/dev/null; } || \
		echo "make shells: zsh and fish could not be installed: their completion tests will skip"

## test: build what the tests need, then run every test against the real runtime
# (atexit_sleep_ms=0: the race detector otherwise sleeps 1 s in every plugin exit;
# with chromium present, a browser test cannot skip)
test: build fixtures browser pyclients shells
	PARSELBOX_REQUIRE_BROWSER=$$(command -v chromium >/dev/null 2>&1 && echo 1) \
	PARSELBOX_REQUIRE_PYCLIENTS=$$(test -d /usr/lib/python3/dist-packages/httpx && echo 1) \
	PARSELBOX_REQUIRE_SHELLS=$$(command -v zsh >/dev/null 2>&1 && command -v fish >/dev/null 2>&1 && echo 1) \
	PARSELBOX_REQUIRE_RUNTIME=1 PARSELBOX_REQUIRE_NPM=1 PARSELBOX_RUNTIME=$(CURDIR)/$(RUNTIME) GORACE=atexit_sleep_ms=0 \
		$(GO) test -race -timeout=$(TEST_TIMEOUT) ./...

## fleet-test: three parselbox hosts on loopback behind Debian's HAProxy
## (installed here when missing) with deploy/haproxy/haproxy.cfg, driven by
## MCP clients: affinity, a killed host, a drain, /metrics. Several minutes,
## so not part of make test (nor of CI: .ci/run says why).
fleet-test: build
	@command -v haproxy >/dev/null || { apt-get update -qq && apt-get install -y -qq haproxy >/dev/null; }
	PARSELBOX_REQUIRE_FLEET=1 PARSELBOX_RUNTIME=$(CURDIR)/$(RUNTIME) \
		$(GO) test -tags fleet -count=1 -timeout=30m -v ./tests/fleet

## image: the OCI image, built without a container daemon
## (go-containerregistry): bin/image (OCI layout) and bin/image.tar
## (docker load); the binaries, the runtime, a prebuilt snapshot, user 65532
IMAGE_CACHE := $(BIN)/image-cache
image: build
	./$(BIN)/parselbox exec --cache-dir $(IMAGE_CACHE) 'None' >/dev/null
	$(GO) run $(GOFLAGS) ./deploy/image -bin $(BIN) -runtime $(RUNTIME) -cache $(IMAGE_CACHE) -out $(BIN)/image

## image-test: unpack the image and run parselbox exec in its root
## filesystem (chroot, unshare: needs root); not run by CI (.ci/run)
image-test: image
	$(GO) test -tags image -count=1 -v ./tests/image

## demo: a short scripted tour
demo: build fixtures
	@./demo/demo.sh

## bench: measure boot, exec and calls against a bare Deno + Pyodide floor
## (BENCH_FLAGS="-only exec,calls -cpuprofile cpu.out" selects parts, profiles)
bench: build fixtures
	$(GO) run ./bench -runtime $(CURDIR)/$(RUNTIME) -out bench-results.json $(BENCH_FLAGS)

## bench-tokens: the tokens a model reads for one fixed task against the demo's
## servers (seeded: 500 pets, 75 countries), every tool as an MCP tool vs
## execute_code (counted with the pinned gpt-tokenizer, o200k_base); merged
## into bench-results.json
bench-tokens: build fixtures
	$(GO) run ./bench/tokens -runtime $(CURDIR)/$(RUNTIME) -bin $(BIN) -out bench-results.json

## proto: regenerate the bridge protocol's Go code (needs protoc 3.21.12:
## apt-get install protobuf-compiler; the Go generators are pinned in go.mod)
proto:
	sh proto/generate.sh

## lint: gofmt, vet, the import boundaries (sdk/ and proto/ never import
## host/; internal/ imports nothing above it; plugins/ use sdk/ and proto/
## only) and the generated protobuf code in sync with bridge.proto
## (needs protoc 3.21.12, as make proto does), and deno check of the sandbox
## runner with the pinned runtime, which it installs first
lint: runtime
	./.ci/lint

## fuzz: every fuzz target for FUZZTIME each (default 30s); plain go test
## runs their seed corpora
FUZZTIME ?= 30s
fuzz:
	FUZZTIME=$(FUZZTIME) ./.ci/fuzz

clean:
	rm -rf $(BIN) bench-results.json
