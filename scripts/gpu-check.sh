#!/usr/bin/env bash
# GPU check: bit-exactness and speed of the CUDA backend on this machine,
# against the CPU path and a cuBLAS reference measured in the same run.
#
#   scripts/gpu-check.sh [path/to/pog-cuda]      (default: bin/pog-cuda)
#
# Needs the NVIDIA driver and PyTorch; no Go (build the binary elsewhere with
# `make build-cuda`). Prints JSON lines — reference, device, correctness,
# speed, bandwidth — then a summary line with the targets. Exits 1 if any
# result is not bit-identical. About 3 minutes on one H200; the timeouts
# below keep it under 8.
set -uo pipefail
bin=$(realpath "${1:-$(dirname "$0")/../bin/pog-cuda}")
cd "$(dirname "$0")/.."
log=$(mktemp)
trap 'rm -f "$log"' EXIT

# 1. The reference, and the libcublas PyTorch uses.
timeout 150 python3 scripts/gpu_reference.py | tee -a "$log"
# field PRECISION OUTPUT KEY: a value from the reference row of that product.
field() { python3 -c "
import json, sys
for l in open('$log'):
    r = json.loads(l)
    if r.get('check') == 'reference' and r.get('ok') and r.get('precision') == '$1' and r.get('output') == '$2':
        print(r['$3'] or ''); break
"; }
# pog's fp16 class writes fp32 output, so its like-for-like reference is the
# fp16 product with fp32 output, where this PyTorch can time it.
ref16=$(field fp16 fp32 tflops)
[ -n "$ref16" ] || ref16=$(field fp16 fp16 tflops)
ref32=$(field fp32 fp32 tflops)
cublas=$(field fp16 fp16 cublas_path)

# 2. pog: devices, correctness for each GEMM, speed, bandwidth.
args=()
[ -n "$ref16" ] && args+=(--reference-fp16 "$ref16")
[ -n "$ref32" ] && args+=(--reference-fp32 "$ref32")
[ -n "$cublas" ] && args+=(--cublas "$cublas")
timeout 270 "$bin" gpu-check ${args[@]+"${args[@]}"} | tee -a "$log"
rc=${PIPESTATUS[0]}

# 3. Summary against the targets (BENCHMARKS.md): bit-identical everywhere,
# an fp16 round at >= 90% of cuBLAS's TFLOPS (fp32 output), tile hashing
# >= 200 GB/s. Also the round against the fp16-output product, for the record.
python3 - "$log" "$rc" "$cublas" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
correct = [r for r in rows if r.get("check") in ("correctness", "extremes")]
speed = [r for r in rows if r.get("check") == "speed" and r.get("ok")]
ref16 = [r["tflops"] for r in rows if r.get("check") == "reference" and r.get("ok")
         and r.get("precision") == "fp16" and r.get("output") == "fp16"]
fp16 = [r for r in speed if r["precision"] == "fp16"]
best_round = max((r.get("round_vs_reference", 0) for r in fp16), default=0)
best_hash = max((r.get("hash_gbps", 0) for r in speed), default=0)
gemms = sorted({r.get("gemm") for r in correct})
summary = {
    "check": "summary",
    "exit_code": int(sys.argv[2]),
    "correctness_cases": len(correct),
    "gemms_checked": gemms,
    # PyTorch's cuBLAS was found, so pog's cuBLAS path must have been checked.
    "cublas_checked": "cublas" in gemms or not sys.argv[3],
    "bit_identical": bool(correct) and all(r.get("ok") for r in correct),
    "fp16_round_vs_cublas": best_round,
    "fp16_round_target_met": best_round >= 0.9,
    "fp16_round_vs_cublas_fp16_output": max((r.get("round_tflops", 0) for r in fp16), default=0) / ref16[0] if ref16 else None,
    "hash_gbps": best_hash,
    "hash_target_met": best_hash >= 200,
}
print(json.dumps(summary))
sys.exit(0 if summary["bit_identical"] and summary["cublas_checked"] and summary["exit_code"] == 0 else 1)
PY
