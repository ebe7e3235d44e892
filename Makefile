# mcpvcr needs cgo (github.com/mattn/go-sqlite3): a C compiler such as gcc.
export CGO_ENABLED := 1

GO        ?= go
BIN       := bin
PKGS      := ./...
FUZZTIME  ?= 10s
BENCHFLAGS ?=

.PHONY: all build test lint fmt golden demo bench fuzz peers clean

all: build

## build: compile mcpvcr into bin/
build:
	$(GO) build -o $(BIN)/mcpvcr ./cmd/mcpvcr

## test: run every test with the race detector
test:
	$(GO) test -race -timeout 20m $(PKGS)

## lint: gofmt check and go vet
lint:
	@out="$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go' -not -path './node_modules/*'))"; \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet $(PKGS)

## fmt: format the code
fmt:
	gofmt -w $$(git ls-files '*.go')

## golden: rewrite golden files after an intended change (review the diff)
golden:
	$(GO) test $(PKGS) -update

## peers: install the npm test peers from the lock file
peers:
	npm ci --no-audit --no-fund --loglevel=error

## demo: record a real session against a bundled MCP server, show it, replay it
demo:
	@./scripts/demo.sh

## bench: measure direct, passthrough, record and replay in one run and print one table
##        (BENCHFLAGS="-rss-mb 1024" for the 1 GB peak-memory row; -quick for a smoke run)
bench:
	$(GO) run ./bench $(BENCHFLAGS)

## fuzz: run each fuzz target for FUZZTIME
fuzz:
	@./scripts/fuzz.sh $(FUZZTIME)

clean:
	rm -rf $(BIN) demo
