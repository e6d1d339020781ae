#!/usr/bin/env python3
"""Compile time against program size (issue 23): how `ndp run` grows with a sequence literal.

Two shapes of program, each at three sizes ten times apart:
  constant:   x = [0, 1, ..., n-1] $          (a data file pasted into a program)
  expression: x = 5 $  y = [x+0, x+1, ..., x+(n-1)] $   (n elements that each compute)
Each is run with `ndp run --backend=B` (whole process: start-up, parse, check, flatten, compile,
run, print), best of --runs. The growth column is time(10n) / time(n): 10 means linear.

    python3 bench/compile_time.py                    # interp and cpu (and cuda where present)
    python3 bench/compile_time.py --backends cpu --runs 1

Writes bench/results/compile_time.md and .json (or --out PREFIX).
"""
import argparse
import datetime
import json
import os
import platform
import subprocess
import sys
import tempfile
import time

SHAPES = {
    "constant": ([10_000, 100_000, 1_000_000], lambda n: "x = [" + ", ".join(str(i) for i in range(n)) + "] $\n"),
    "expression": ([1_000, 10_000, 100_000],
                   lambda n: "x = 5 $\ny = [" + ", ".join(f"x+{i}" for i in range(n)) + "] $\n"),
}


def time_run(ndp, backend, path, runs):
    best = None
    for _ in range(runs):
        start = time.perf_counter()
        r = subprocess.run([ndp, "run", f"--backend={backend}", path], stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE)
        took = time.perf_counter() - start
        if r.returncode != 0:
            sys.exit(f"compile_time: {path} failed on {backend}: {r.stderr.decode()[:500]}")
        best = took if best is None else min(best, took)
    return best


def cuda_available(ndp):
    r = subprocess.run([ndp, "--backend=cuda"], input=b"1 $\n", stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    return r.returncode == 0 and b"it = 1" in r.stdout


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ndp", default="build/cli/ndp")
    ap.add_argument("--backends", default=None, help="comma list (default: interp,cpu and cuda if present)")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--out", default="bench/results/compile_time")
    args = ap.parse_args()
    backends = args.backends.split(",") if args.backends else ["interp", "cpu"] + (["cuda"] if cuda_available(args.ndp) else [])
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for shape, (sizes, make) in SHAPES.items():
            for n in sizes:
                path = os.path.join(tmp, f"{shape}_{n}.ndp")
                with open(path, "w") as f:
                    f.write(make(n))
                for b in backends:
                    t = time_run(args.ndp, b, path, args.runs)
                    rows.append({"shape": shape, "n": n, "backend": b, "seconds": t})
                    print(f"{shape:10} n={n:>9} {b:6} {t:8.3f} s", flush=True)
    by = {(r["shape"], r["n"], r["backend"]): r["seconds"] for r in rows}
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), platform.processor())
    cmd = "python3 bench/compile_time.py " + " ".join(sys.argv[1:])
    lines = ["# Compile time against program size", "",
             f"Command: `{cmd.strip()}` · {now} · {cpu}, {os.cpu_count()} cores · best of {args.runs}.", "",
             "Whole `ndp run` process (start-up, parse, type check, flatten, compile, run, print). Growth is",
             "time(10n) / time(n): 10 is linear.", "",
             "| program | n | backend | seconds | growth from n/10 |", "|---|---|---|---|---|"]
    for r in rows:
        prev = by.get((r["shape"], r["n"] // 10, r["backend"]))
        growth = f"{r['seconds'] / prev:.1f}×" if prev else ""
        lines.append(f"| {r['shape']} literal | {r['n']:,} | {r['backend']} | {r['seconds']:.3f} | {growth} |")
    with open(args.out + ".md", "w") as f:
        f.write("\n".join(lines) + "\n")
    with open(args.out + ".json", "w") as f:
        json.dump({"command": cmd.strip(), "date": now, "machine": cpu, "rows": rows}, f, indent=1)
    print(f"wrote {args.out}.md and .json")


if __name__ == "__main__":
    main()
