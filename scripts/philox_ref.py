"""The Philox reference for make bench-philox: numpy's Philox bit generator
(Philox4x64-10) drawing raw 64-bit words on one core, in GB/s of generated
random bits, the median of --runs runs of at least --seconds each. pog's
Philox is Philox4x32-10 (proof/philox); BenchmarkPhilox in
cmd/pog/internal/bench prints its GB/s per verification kernel beside this.
Needs numpy (Debian: apt-get install python3-numpy).
Usage: python3 scripts/philox_ref.py [--runs N] [--seconds S]"""
import argparse
import platform
import statistics
import time

import numpy as np

WORDS = 1 << 17  # 1 MiB of 64-bit words per call: L2-sized, and the per-call cost is negligible


def gbps(bg, seconds):
    """One run: draw WORDS words at a time for at least seconds."""
    n, start = 0, time.perf_counter()
    while True:
        bg.random_raw(WORDS)
        n += 1
        elapsed = time.perf_counter() - start
        if elapsed >= seconds:
            return n * WORDS * 8 / elapsed / 1e9


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--seconds", type=float, default=1.0)
    args = ap.parse_args()
    bg = np.random.Philox(2026)
    bg.random_raw(WORDS)  # warm-up: page in the output buffer
    runs = [gbps(bg, args.seconds) for _ in range(args.runs)]
    print(f"numpy {np.__version__} Philox4x64-10 random_raw, one core ({platform.processor() or platform.machine()}): "
          f"{statistics.median(runs):.3f} GB/s of generated bits, median of {args.runs} runs "
          f"({min(runs):.3f}-{max(runs):.3f})")


if __name__ == "__main__":
    main()
