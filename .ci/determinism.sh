#!/usr/bin/env bash
# Cross-architecture determinism: the golden epoch-record test
# (node/epoch/epoch_golden_test.go) built for arm64, where Go fuses multiply-adds
# unless the source forbids it, runs under qemu-user and must write the same
# bytes as the amd64 run, and both must match node/epoch/testdata/epoch_golden.txt;
# the scoring, consensus (its golden hash) and proof (its verdicts and spec
# vectors) tests run on arm64 too.
# Skips with a notice when qemu-user cannot be installed.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v qemu-aarch64-static >/dev/null && command -v apt-get >/dev/null && [ "$(id -u)" = 0 ]; then
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends qemu-user-static >/dev/null) \
    || echo "determinism: could not install qemu-user-static"
fi
if ! command -v qemu-aarch64-static >/dev/null; then
  echo "determinism: notice: no qemu-aarch64-static, so the arm64 golden epoch-record run was skipped"
  exit 0
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
run='^TestEpochRecordGolden$'
POG_GOLDEN_OUT="$tmp/native.txt" go test -count=1 -run "$run" ./node/epoch
# node/epoch is pure Go, so it cross-builds without a C toolchain; the test binary
# runs directly under qemu (no binfmt needed), from the package directory as
# go test would.
GOOS=linux GOARCH=arm64 CGO_ENABLED=0 go test -c -o "$tmp/node.arm64" ./node/epoch
(cd node/epoch && POG_GOLDEN_OUT="$tmp/arm64.txt" qemu-aarch64-static "$tmp/node.arm64" -test.run "$run" -test.count=1 -test.v) | tail -3
# The pure packages' own tests (consensus's TestGoldenHash among them) on
# arm64 too; -test.short skips the tests that shell out to the go tool.
# proof's tests there cover the generic verification kernel, which amd64's
# vector kernels must agree with (proof's spec vectors and verdicts).
for pkg in protocol/scoring protocol/consensus proof; do
  GOOS=linux GOARCH=arm64 CGO_ENABLED=0 go test -c -o "$tmp/pkg.arm64" "./$pkg"
  (cd "$pkg" && qemu-aarch64-static "$tmp/pkg.arm64" -test.short -test.count=1) | tail -1
done
if ! cmp "$tmp/native.txt" "$tmp/arm64.txt"; then
  echo "determinism: arm64 epoch records differ from $(go env GOARCH)'s"; exit 1
fi
echo "determinism: arm64 (qemu) and $(go env GOARCH) epoch records are identical ($(wc -l <"$tmp/arm64.txt") lines)"
