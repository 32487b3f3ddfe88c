"""cuBLAS reference for scripts/gpu-check.sh: the challenge products through
PyTorch, timed with CUDA events over at least --min-seconds, as JSON lines.

fp16: fp16 inputs, fp32 accumulation (reduced-precision reductions off), the
same M, N, K and value ranges as pog's fp16 class; fp32: TF32 off. Also
reports which libcublas PyTorch loaded, so pog can load the same one.

pog's fp16 class must write fp32 output (sums reach 2^24, beyond fp16), so
the fp16 product is also timed with fp32 output (torch.mm out_dtype, PyTorch
2.8+): the like-for-like reference. Its row has "output": "fp32"."""
import argparse
import json
import sys
import time


def tflops(torch, a, bt, min_seconds, mm):
    for _ in range(3):  # warm-up: cuBLAS picks and caches its kernel
        mm(a, bt.t())
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    n, total = 0, 0.0
    while total < min_seconds * 1000:
        start.record()
        for _ in range(10):
            mm(a, bt.t())
        end.record()
        end.synchronize()
        total += start.elapsed_time(end)
        n += 10
    m, k = a.shape
    return 2.0 * m * bt.shape[0] * k * n / (total / 1000) / 1e12, n


def cublas_path():
    with open("/proc/self/maps") as f:
        for line in f:
            path = line.split()[-1]
            if "/libcublas.so" in path:
                return path
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--size-fp16", type=int, default=16384)
    ap.add_argument("--size-fp32", type=int, default=8192)
    ap.add_argument("--min-seconds", type=float, default=1.0)
    args = ap.parse_args()
    try:
        import torch
    except ImportError as e:
        print(json.dumps({"check": "reference", "ok": False, "error": str(e)}))
        return 1
    if not torch.cuda.is_available():
        print(json.dumps({"check": "reference", "ok": False, "error": "torch.cuda is not available"}))
        return 1
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction = False
    dev = torch.device("cuda")
    # pog's value sets: fp16 A in [-256, 255], B in [-8, 7]; fp32 A in
    # [-4096, 4095], B in {-1, +1}.
    cases = [
        ("fp16", torch.float16, args.size_fp16, 8192, 256, lambda s: torch.randint(-8, 8, s, device=dev)),
        ("fp32", torch.float32, args.size_fp32, 4096, 4096, lambda s: 2 * torch.randint(0, 2, s, device=dev) - 1),
    ]
    plain = lambda a, b: a @ b
    f32out = lambda a, b: torch.mm(a, b, out_dtype=torch.float32)
    for name, dtype, n, k, amax, draw_b in cases:
        a = torch.randint(-amax, amax, (n, k), device=dev).to(dtype)
        bt = draw_b((n, k)).to(dtype)
        outputs = [(name, plain)] + ([("fp32", f32out)] if dtype == torch.float16 else [])
        for output, mm in outputs:
            row = {"check": "reference", "precision": name, "output": output, "m": n, "n": n, "k": k,
                   "torch": torch.__version__, "cuda": torch.version.cuda, "cublas_path": cublas_path()}
            t0 = time.time()
            try:
                tf, iters = tflops(torch, a, bt, args.min_seconds, mm)
                row.update(ok=True, tflops=tf, iterations=iters, seconds=time.time() - t0)
            except (TypeError, RuntimeError) as e:  # out_dtype needs PyTorch 2.8+
                row.update(ok=False, error=str(e))
            print(json.dumps(row), flush=True)
        del a, bt
        torch.cuda.empty_cache()
    return 0


if __name__ == "__main__":
    sys.exit(main())
