# pog: the first two targets are the README's two commands.
GO      ?= go
BIN     := bin/pog
PKGS    := ./...

.PHONY: all testnet testnet-production testnet-determinism explore bench test docs build lint fuzz bench-go bench-openblas bench-philox bench-net proto clean ptx ptx-check build-cuda gpu-bundle

all: build

# A local network: 2 validators and 6 miners on simulated GPUs, every
# adversary class beside them, 3 epochs of 40 s under the slot schedule;
# report in testnet-out/.
testnet: build
	$(BIN) testnet --adversaries all

# The same network at production's round targets, steps, deadlines, host
# rounds and announces, with 6 min 40 s epochs (docs/testnet.md, "Scaled
# settings"): 2.6 times make testnet's CPU.
testnet-production: build
	$(BIN) testnet --adversaries all --production-timing --out testnet-production-out

# Fault exploration: 20 seeds of small random networks under random faults
# (partitions, loss, latency spikes, a crash and restart, a failing store),
# each judged on the invariants; SEED picks the first.
SEED ?= 1
explore: build
	$(BIN) testnet --explore 20 --seed $(SEED)

# Same seed, same result: make testnet's network twice at once with seed
# SEED; fails, printing both, if any epoch's consensus differs beyond the
# spread docs/testnet.md names (TOL=0: bit for bit).
testnet-determinism: build
	bash .ci/testnet-determinism.sh $(SEED)

# One full local proof round on the CPU backend.
bench: build
	$(BIN) bench

# The testnet package's networks run in virtual time, so a loaded machine
# only stretches their wall time: past go test's 10-minute default once in
# CI, with the same-seed pair of full testnets beside it on 2 cores.
test:
	$(GO) test -count=1 -timeout 25m $(PKGS)

# Regenerate the configuration reference in docs/operator/configuration.md
# from the code; go test ./node/config fails while it is stale.
docs:
	$(GO) test -count=1 ./node/config -run 'TestConfigReference$$' -update-docs

# The commit for `pog version` where Go's VCS stamp is off or unavailable.
LDCOMMIT := -X main.ldCommit=$(shell git rev-parse HEAD 2>/dev/null)$(shell git diff --quiet HEAD 2>/dev/null || echo -modified)
build:
	$(GO) build -ldflags '$(LDCOMMIT)' -o $(BIN) ./cmd/pog

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt wants to rewrite:"; echo "$$out"; exit 1; fi
	$(GO) vet $(PKGS)

# Each fuzz target for FUZZTIME (go test runs one target per invocation):
# a count, since a duration can fail a clean target on go1.26
# (golang/go#75804). The two kernel targets check whole tiles under every
# verification kernel, so each input costs milliseconds, not microseconds:
# they take their own count.
FUZZTIME ?= 300000x
KERNEL_FUZZTIME ?= 20000x
fuzz:
	$(GO) test ./proof -run XXX -fuzz FuzzDecodeParams -fuzztime $(FUZZTIME)
	$(GO) test ./proof -run XXX -fuzz FuzzCheckTileKernels -fuzztime $(KERNEL_FUZZTIME)
	$(GO) test ./proof -run XXX -fuzz FuzzLineKernels -fuzztime $(KERNEL_FUZZTIME)
	$(GO) test ./proof/commit -run XXX -fuzz FuzzDecodeProof -fuzztime $(FUZZTIME)
	$(GO) test ./proof/commit -run XXX -fuzz FuzzDecodeIndices -fuzztime $(FUZZTIME)
	$(GO) test ./proof/commit -run XXX -fuzz FuzzVerify -fuzztime $(FUZZTIME)
	$(GO) test ./protocol -run XXX -fuzz FuzzOpen -fuzztime $(FUZZTIME)
	$(GO) test ./protocol/record -run XXX -fuzz FuzzDecodeRound -fuzztime $(FUZZTIME)
	$(GO) test ./protocol/record -run XXX -fuzz FuzzDecodeHost -fuzztime $(FUZZTIME)
	$(GO) test ./proof/host -run XXX -fuzz FuzzDecodeOpening -fuzztime $(FUZZTIME)
	$(GO) test ./proof/host/plot -run XXX -fuzz FuzzDecodeOpening -fuzztime $(FUZZTIME)
	$(GO) test ./node -run XXX -fuzz FuzzDecodeHostChallenge -fuzztime $(FUZZTIME)
	$(GO) test ./node/recordsync -run XXX -fuzz FuzzOffSchedulePage -fuzztime $(FUZZTIME)
	$(GO) test ./store -run XXX -fuzz FuzzDecodeOffSchedule -fuzztime $(FUZZTIME)
	$(GO) test ./store -run XXX -fuzz FuzzDecodeEnvelopeValue -fuzztime $(FUZZTIME)
	$(GO) test ./store -run XXX -fuzz FuzzDecodeFinal -fuzztime $(FUZZTIME)
	$(GO) test ./store -run XXX -fuzz FuzzDecodeCheckpoint -fuzztime $(FUZZTIME)

# Go benchmarks with their references in the same run (BENCHMARKS.md).
# bench-openblas needs libopenblas-dev; the b3sum comparison needs b3sum.
bench-go:
	$(GO) test -run XXX -bench . -benchtime 5x ./proof/... ./kernels/...

bench-openblas:
	$(GO) test -tags openblas -run XXX -bench 'SgemmNT|OpenBLAS' -benchtime 20x ./kernels/cpu/

# Philox on one core in GB/s of generated bits: numpy's Philox4x64-10
# (needs numpy: apt-get install python3-numpy, PYTHON=/usr/bin/python3
# where python3 is another interpreter) beside ours, Philox4x32-10 as
# proof.Line draws it, under each verification kernel.
PYTHON ?= python3
bench-philox:
	$(PYTHON) scripts/philox_ref.py
	$(GO) test -run XXX -bench Philox -benchtime 1s -count 5 ./cmd/pog/internal/bench/

# Gossip latency (100 nodes, ours vs raw gossipsub) and round overhead.
bench-net:
	$(GO) test -run XXX -bench 'Gossip|RoundOverhead' -benchtime 1x ./node/

# Regenerate protocol/pb from pog.proto; needs protoc (apt-get install
# protobuf-compiler) and protoc-gen-go (go install google.golang.org/protobuf/cmd/protoc-gen-go@v1.36.12).
proto:
	cd protocol/pb && protoc --go_out=. --go_opt=paths=source_relative pog.proto

# CUDA. The PTX is committed, so only kernel changes need nvcc (11.8 or newer:
# Debian bookworm's nvidia-cuda-toolkit from contrib non-free). One module per
# target architecture; kernels/cuda embeds them.
NVCC      ?= nvcc
PTX_ARCHS := 80 90
PTX_DIR   := kernels/cuda/ptx
ptx:
	for a in $(PTX_ARCHS); do \
	  $(NVCC) -ptx -O3 -std=c++14 -arch=compute_$$a -o $(PTX_DIR)/pog_sm$$a.ptx kernels/cuda/src/pog.cu || exit 1; \
	done

# Fails if the committed PTX is not what `make ptx` generates here; skipped
# (with a notice) under another nvcc release, whose output differs anyway.
ptx-check:
	@want=$$(grep -m1 -o 'release [0-9.]*, V[0-9.]*' $(PTX_DIR)/pog_sm90.ptx); \
	have=$$($(NVCC) --version | grep -o 'release [0-9.]*, V[0-9.]*'); \
	if [ "$$want" != "$$have" ]; then echo "ptx-check: skipped: the PTX is from nvcc $$want, this nvcc is $$have"; exit 0; fi; \
	tmp=$$(mktemp -d); trap 'rm -rf $$tmp' EXIT; \
	$(MAKE) -s ptx PTX_DIR=$$tmp && diff -r -q $(PTX_DIR) $$tmp && echo "ptx-check: committed PTX matches make ptx"

# The GPU miner: needs cuda.h and libcuda (nvidia-cuda-dev) to build, the
# NVIDIA driver to run.
build-cuda:
	CGO_CFLAGS='-O2 -g -Wno-deprecated-declarations' $(GO) build -tags cuda -trimpath -ldflags '-s -w $(LDCOMMIT)' -o bin/pog-cuda ./cmd/pog

# What a GPU machine without Go needs for scripts/gpu-check.sh.
gpu-bundle: build-cuda
	@ls -l bin/pog-cuda scripts/gpu-check.sh scripts/gpu_reference.py

clean:
	rm -rf bin
