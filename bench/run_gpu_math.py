#!/usr/bin/env python3
"""Issue 21's math programs on the GPU, each beside its baseline in the same run.

Runs bench/programs/blackscholes.ndp (10^7 options), bench/programs/dotp.ndp (10^7 doubles) and
bench/programs/scalar_loop.ndp (2000 iterations of a loop of ~20 scalar statements) with
`ndp run --backend=cuda`, each timed by NESL's time() around the algorithm (the first run a
warm-up, then the median of the others), and bench/math_baselines (nvcc-built, CUDA events): the
same Black-Scholes formula as a hand-written kernel over the same options, whose sum of prices
must agree with ndp's (relative 1e-9), and a device copy of 10^7 doubles, the roof of the dot
product (which reads 2 x 8 bytes an element where the copy reads 8 and writes 8), and one kernel
launch with an 8-byte read-back, the least a statement costs that waits for its result (the
loop's time per iteration against it). Prints a markdown table of the times and ratios. Plain
python3.

    python3 bench/run_gpu_math.py [--ndp build-gpu/cli/ndp] [--baselines build-gpu/bench/math_baselines]
"""
import argparse
import re
import statistics
import subprocess
import sys

ANSWER = re.compile(r"(?m)^it\s*=\s*\((.*),\s*\[([-+0-9.eE,\s]*)\]\)\s*:.*\[float\]\s*$")
BASELINE = re.compile(r"^(\S+) n (\d+) median ([0-9.]+) min ([0-9.]+) max ([0-9.]+) checksum (\S+)$", re.M)


def run(cmd):
    print("+ " + " ".join(cmd), file=sys.stderr, flush=True)
    return subprocess.run(cmd, check=True, capture_output=True, text=True, timeout=600).stdout


def program(ndp, path):
    """(checksum, median seconds of the timed runs, their spread) of a bench program."""
    # A long answer is broken before its type (language.md §5): join it back.
    out = re.sub(r"\n\s+:\s", " : ", run([ndp, "run", "--backend=cuda", path]))
    m = list(ANSWER.finditer(out))
    if not m:
        sys.exit(f"{path}: no (checksum, [seconds]) answer")
    times = [float(t) for t in m[-1].group(2).split(",")][1:]
    return m[-1].group(1), statistics.median(times), min(times), max(times)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ndp", default="build-gpu/cli/ndp")
    ap.add_argument("--baselines", default="build-gpu/bench/math_baselines")
    a = ap.parse_args()
    base = {m.group(1): (float(m.group(3)), float(m.group(6))) for m in BASELINE.finditer(run([a.baselines, "10000000"]))}
    bs = program(a.ndp, "bench/programs/blackscholes.ndp")
    dp = program(a.ndp, "bench/programs/dotp.ndp")
    loop = program(a.ndp, "bench/programs/scalar_loop.ndp")
    iterations = 2000  # bench_size of scalar_loop.ndp
    bs_ms, bs_sum = base["black-scholes"]
    copy_ms = base["copy"][0]
    launch_ms = base["launch-readback"][0]
    agree = abs(float(bs[0]) - bs_sum) <= 1e-9 * abs(bs_sum)
    print("| program (10^7) | ndp cuda, median (min–max) | baseline | ndp / baseline | target |")
    print("|---|---|---|---|---|")
    print(f"| Black-Scholes, doubles | {bs[1]*1e3:.3f} ms ({bs[2]*1e3:.3f}–{bs[3]*1e3:.3f}) | hand-written CUDA kernel "
          f"{bs_ms:.3f} ms | {bs[1]*1e3/bs_ms:.2f}× | ≤ 1.3× |")
    # The copy moves 2 x 8 bytes an element as the dot product does: equal times, equal bandwidth.
    print(f"| dot product, doubles | {dp[1]*1e3:.3f} ms ({dp[2]*1e3:.3f}–{dp[3]*1e3:.3f}) | device copy of 10^7 doubles "
          f"{copy_ms:.3f} ms | {copy_ms/(dp[1]*1e3):.2f}× of copy bandwidth | ≥ 0.8× |")
    per = loop[1] / iterations * 1e6
    print(f"| a loop of ~20 scalar statements, per iteration | {per:.1f} µs ({loop[2] / iterations * 1e6:.1f}–"
          f"{loop[3] / iterations * 1e6:.1f}) | one launch and an 8-byte read-back {launch_ms * 1e3:.1f} µs | "
          f"{per / (launch_ms * 1e3):.1f}× | ≤ 50 µs |")
    print(f"\nsum of prices: ndp {bs[0]!r}, baseline {bs_sum!r} ({'agree' if agree else 'DIFFER'}); dot product {dp[0]!r}; loop state {loop[0]}")
    return 0 if agree else 1


if __name__ == "__main__":
    sys.exit(main())
