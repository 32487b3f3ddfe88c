# pog: the first two targets are the README's two commands.
GO      ?= go
BIN     := bin/pog
PKGS    := ./...

.PHONY: all bench test build lint fuzz bench-go bench-openblas clean

all: build

# One full local proof round on the CPU backend.
bench: build
	$(BIN) bench

test:
	$(GO) test -count=1 $(PKGS)

build:
	$(GO) build -o $(BIN) ./cmd/pog

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt wants to rewrite:"; echo "$$out"; exit 1; fi
	$(GO) vet $(PKGS)

# Each fuzz target for FUZZTIME (go test runs one target per invocation).
FUZZTIME ?= 20s
fuzz:
	$(GO) test ./proof -run XXX -fuzz FuzzDecodeParams -fuzztime $(FUZZTIME)
	$(GO) test ./proof/commit -run XXX -fuzz FuzzDecodeProof -fuzztime $(FUZZTIME)
	$(GO) test ./proof/commit -run XXX -fuzz FuzzDecodeIndices -fuzztime $(FUZZTIME)
	$(GO) test ./proof/commit -run XXX -fuzz FuzzVerify -fuzztime $(FUZZTIME)

# Go benchmarks with their references in the same run (BENCHMARKS.md).
# bench-openblas needs libopenblas-dev; the b3sum comparison needs b3sum.
bench-go:
	$(GO) test -run XXX -bench . -benchtime 5x ./proof/... ./kernels/...

bench-openblas:
	$(GO) test -tags openblas -run XXX -bench 'SgemmNT|OpenBLAS' -benchtime 20x ./kernels/cpu/

clean:
	rm -rf bin
