# mcpvcr needs cgo (github.com/mattn/go-sqlite3): a C compiler such as gcc.
export CGO_ENABLED := 1

GO        ?= go
BIN       := bin
PKGS      := ./...
FUZZTIME  ?= 10s
BENCHFLAGS ?=

.PHONY: all build test matrix lint fmt golden recassette demo bench soak fuzz peers clean

all: build

# The version and commit make build stamps into the binary, from git: a
# build with GOFLAGS=-buildvcs=false records neither on its own.
VERSION   ?= $(shell git describe --tags 2>/dev/null || echo devel)
COMMIT    ?= $(shell c=$$(git rev-parse HEAD 2>/dev/null) && { git diff --quiet HEAD -- 2>/dev/null && echo $$c || echo $$c-modified; })
LDFLAGS   := -X main.stampVersion=$(VERSION) -X main.stampCommit=$(COMMIT)

## build: compile mcpvcr into bin/, stamped with its version and commit
build:
	$(GO) build -ldflags '$(LDFLAGS)' -o $(BIN)/mcpvcr ./cmd/mcpvcr

## test: run every test with the race detector; installs the npm test peer
##       first when it is missing and npm exists (else says which tests skip);
##       prints each package as it ends, slow tests, and every 30 s what is
##       still running (TESTFLAGS adds go test flags, e.g. TESTFLAGS=-v)
TESTFLAGS ?=
test:
	@./scripts/peers.sh
	$(GO) run ./scripts/testprogress -race -timeout 30m $(TESTFLAGS) $(PKGS)

## matrix: run the whole matrix of real clients × servers × transports ×
##         revisions × scenarios (plain make test runs a cheap slice of it);
##         MATRIXFLAGS="-run TestMatrix/gosdk/ -matrix.verify-runs 5" narrows it
MATRIXFLAGS ?=
matrix:
	@./scripts/peers.sh
	$(GO) test -race -timeout 3h ./matrix -matrix.full -v $(MATRIXFLAGS)

## lint: gofmt check and go vet
lint:
	@out="$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go' -not -path './node_modules/*'))"; \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet $(PKGS)

## fmt: format the code
fmt:
	gofmt -w $$(git ls-files '*.go')

# The packages whose tests define -update, the one flag that rewrites golden
# files; go test fails in a package that does not define it.
GOLDEN_PKGS = $(shell grep -rl --include='*_test.go' --exclude-dir=node_modules 'flag\.Bool."update"' . | xargs -n1 dirname | sort -u)

## golden: rewrite golden files after an intended change (review the diff)
golden:
	$(GO) test $(GOLDEN_PKGS) -update

## recassette: re-record cassettes/ from live servers (the Go SDK test server,
##             server-everything); review the diff like code
recassette:
	@./scripts/peers.sh
	$(GO) test ./cmd/mcpvcr -recassette

## peers: install the npm test peers from the lock file
peers:
	npm ci --no-audit --no-fund --loglevel=error

## demo: record a real session against a bundled MCP server, show it, replay it
demo:
	@./scripts/demo.sh

## bench: measure direct, passthrough, record and replay in one run and print one table
##        (BENCHFLAGS="-rss-mb 1024" for the 1 GB peak-memory row; -quick for a smoke run;
##        -mcpsnoop PATH to run an mcpsnoop binary as a further proxy in the same rounds)
bench:
	$(GO) run ./bench $(BENCHFLAGS)

## soak: a long-running replay (SOAKMODE=record: record) under 16 looping
##       clients for SOAKTIME (60s): its RSS sampled, first against last
##       (SOAKFLAGS="-delete=false" keeps sessions open)
SOAKTIME  ?= 60s
SOAKMODE  ?= replay
SOAKFLAGS ?=
soak: build
	$(GO) run ./bench/soak -bin $(BIN)/mcpvcr -mode $(SOAKMODE) -duration $(SOAKTIME) $(SOAKFLAGS)

## fuzz: run each fuzz target for FUZZTIME
fuzz:
	@./scripts/fuzz.sh $(FUZZTIME)

clean:
	rm -rf $(BIN) demo
