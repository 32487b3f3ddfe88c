# pog: the first two targets are the README's two commands.
GO      ?= go
BIN     := bin/pog
PKGS    := ./...

.PHONY: all testnet bench test build lint fuzz bench-go bench-openblas bench-net proto clean

all: build

# A local network: 2 validators and 6 miners on simulated GPUs, every
# adversary class beside them, 3 short epochs; report in testnet-out/.
testnet: build
	$(BIN) testnet --adversaries all

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
	$(GO) test ./protocol -run XXX -fuzz FuzzOpen -fuzztime $(FUZZTIME)
	$(GO) test ./store -run XXX -fuzz FuzzDecodeRound -fuzztime $(FUZZTIME)

# Go benchmarks with their references in the same run (BENCHMARKS.md).
# bench-openblas needs libopenblas-dev; the b3sum comparison needs b3sum.
bench-go:
	$(GO) test -run XXX -bench . -benchtime 5x ./proof/... ./kernels/...

bench-openblas:
	$(GO) test -tags openblas -run XXX -bench 'SgemmNT|OpenBLAS' -benchtime 20x ./kernels/cpu/

# Gossip latency (100 nodes, ours vs raw gossipsub) and round overhead.
bench-net:
	$(GO) test -run XXX -bench 'Gossip|RoundOverhead' -benchtime 1x ./node/

# Regenerate protocol/pb from pog.proto; needs protoc (apt-get install
# protobuf-compiler) and protoc-gen-go (go install google.golang.org/protobuf/cmd/protoc-gen-go@v1.36.12).
proto:
	cd protocol/pb && protoc --go_out=. --go_opt=paths=source_relative pog.proto

clean:
	rm -rf bin
