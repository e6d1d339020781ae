#!/usr/bin/env python3
"""Issue 24's table: recursive NESL programs on the GPU and on the CPU, each beside its baseline
in the same run.

GPU rows (`ndp run --backend=cuda`, one warm-up run, then --runs timed ones, each timed by
NESL's time() around the algorithm: the host's wall time, launches and the answer's read-back
included), against bench/baselines/gpu/recursion.cu (tools/gpu-build.sh bench/recursion), whose
checksum must equal ndp's:
  - quicksort (bench/programs/qsort.ndp), 2^24 ints: CUB DeviceRadixSort of the same 2^24 int64
    keys on all 64 bits; target ndp <= 4x CUB's time;
  - Batcher's bitonic sort (batcher.ndp), 2^20 ints: a hand-written CUDA bitonic sort of the same
    keys; target <= 1.5x;
  - quickhull (quickhull.ndp), 10^7 points: a hand-written CUDA quickhull of the same recursion;
    target <= 3x.
CPU rows (`ndp run --backend=cpu`, the same programs and sizes, on every core of this machine)
against the sequential C++ of the same algorithm (bench/baselines/cpu/NAME.cpp; std::sort for
quicksort), built and run as bench/run_gpu_programs.py does; target: ndp >= 4x faster.

Writes OUT.json and OUT.md, rewritten after each row. Plain python3.

    python3 bench/run_gpu_recursion.py [--ndp build-gpu/cli/ndp] [--baselines build-gpu/bench/recursion]
                                       [--only qsort,batcher,quickhull,cpu] [--out bench/results/recursion]

Exit status 1 if a program failed or a checksum differs.
"""
import argparse
import datetime
import json
import os
import re
import shlex
import sys
import tempfile

import run_gpu_programs as rgp  # program(), run_ndp(), build_cxx(), run_cxx(), sh()

BASELINE = re.compile(r"^(\w+) n (\d+) median ([0-9.]+) min ([0-9.]+) max ([0-9.]+) checksum (-?\d+)$", re.M)
# name, size, how the table writes it, the baseline's subcommand and description, the target
# (ndp's median over the baseline's, at most), the C++ baseline's variant for the CPU row.
ROWS = [
    {"name": "qsort", "size": 1 << 24, "label": "2^24", "what": "NESL quicksort, random ints",
     "base": "radixsort", "base_name": "CUB DeviceRadixSort, int64 keys, all 64 bits", "target": 4.0,
     "cxx_variant": "std_sort"},
    {"name": "batcher", "size": 1 << 20, "label": "2^20", "what": "NESL Batcher's bitonic sort, random ints",
     "base": "bitonic", "base_name": "hand-written CUDA bitonic sort (shared-memory tiles)", "target": 1.5,
     "cxx_variant": "algorithm"},
    {"name": "quickhull", "size": 10**7, "label": "10^7", "what": "NESL quickhull, points in the unit square",
     "base": "quickhull", "base_name": "hand-written CUDA quickhull (the same recursion, flattened by hand)",
     "target": 3.0, "cxx_variant": "algorithm"},
]
CPU_TARGET = 4.0


def run_baseline(exe, sub, n):
    cmd = [exe, sub, str(n)]
    rc, out, err = rgp.sh(cmd, 300)
    m = BASELINE.search(out)
    if rc != 0 or not m:
        return {"command": shlex.join(cmd), "error": (err.strip() or out.strip() or "exit status %s" % rc).splitlines()[-1]}
    return {"command": shlex.join(cmd), "median_ms": float(m.group(3)), "min_ms": float(m.group(4)),
            "max_ms": float(m.group(5)), "checksum": int(m.group(6))}


def run_cxx_variant(exe, size, runs, variant):
    """The C++ baseline's line for `variant` (`VARIANT CHECKSUM SECONDS`, the best of RUNS)."""
    cmd = [os.path.join(".", exe), str(size), str(runs)]
    rc, out, err = rgp.sh(cmd, 600, cwd=rgp.ROOT)
    rec = {"command": shlex.join(cmd), "variant": variant}
    for line in out.splitlines():
        parts = line.split()
        if rc == 0 and len(parts) == 3 and parts[0] == variant:
            rec.update(checksum=int(parts[1]), best_ms=1e3 * float(parts[2]))
            return rec
    rec["error"] = (err.strip() or "no `%s CHECKSUM SECONDS` line" % variant).splitlines()[-1]
    return rec


def gpu_row(r, a, work):
    rec = rgp.run_ndp(a.ndp, rgp.program(r["name"], {"bench_size": r["size"], "bench_runs": a.runs + 1}, work), 900)
    base = run_baseline(a.baselines, r["base"], r["size"]) if os.path.exists(a.baselines) else {
        "error": "%s is missing" % a.baselines}
    ok = "median_ms" in rec and "median_ms" in base
    row = {"row": r["name"], "backend": "cuda", "benchmark": r["what"], "size": r["label"], "ndp": rec,
           "baseline": base, "baseline_name": r["base_name"], "target": "≤ %g× the baseline's time" % r["target"],
           "checksums_agree": rec["checksum"] == base["checksum"] if ok else None,
           "slower_by": rec["median_ms"] / base["median_ms"] if ok else None}
    row["met"] = row["slower_by"] <= r["target"] and row["checksums_agree"] if ok else None
    return row


def cpu_row(r, a, work):
    rec = rgp.run_ndp(a.ndp, rgp.program(r["name"], {"bench_size": r["size"], "bench_runs": a.runs + 1}, work), 900,
                      "cpu")
    exe, base = rgp.build_cxx(a.cxx, r["name"])
    if exe:
        base = run_cxx_variant(exe, r["size"], a.cxx_runs, r["cxx_variant"])
    ok = "median_ms" in rec and "best_ms" in base
    row = {"row": r["name"] + "_cpu", "backend": "cpu", "benchmark": r["what"], "size": r["label"], "ndp": rec,
           "baseline": base, "baseline_name": "sequential C++ (%s), bench/baselines/cpu/%s.cpp" % (
               "std::sort" if r["cxx_variant"] == "std_sort" else "the same algorithm", r["name"]),
           "target": "≥ %g× faster than the C++" % CPU_TARGET,
           "checksums_agree": rec["checksum"] == base["checksum"] if ok else None,
           "faster_by": base["best_ms"] / rec["median_ms"] if ok else None}
    row["met"] = row["faster_by"] >= CPU_TARGET and row["checksums_agree"] if ok else None
    return row


def fmt(ms):
    return "—" if ms is None else ("%.3f" % ms if ms < 10 else "%.1f" % ms)


def write(a, gpu, cores, rows):
    when = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    command = "python3 " + shlex.join(sys.argv)
    problems = []
    for r in rows:
        for side in ("ndp", "baseline"):
            if "error" in r[side] and not r[side].get("missing_tool"):
                problems.append("%s, %s: %s" % (r["row"], side, r[side]["error"]))
        if r["checksums_agree"] is False:
            problems.append("%s: checksum %r, baseline %r" % (r["row"], r["ndp"]["checksum"], r["baseline"]["checksum"]))
    os.makedirs(os.path.dirname(a.out) or ".", exist_ok=True)
    with open(a.out + ".json", "w") as f:
        json.dump({"command": command, "gpu": gpu, "cpu_cores": cores, "date": when, "rows": rows,
                   "problems": problems}, f, indent=1)
        f.write("\n")
    md = ["# Recursion on the GPU and the CPU (issue 24)", "", "- GPU: %s; CPU: %s cores" % (gpu, cores),
          "- date: %s" % when, "- command: `%s`" % command,
          "- ndp: `ndp run`, one warm-up run, then %d timed runs, each timed by NESL's `time` around the algorithm "
          "(the host's wall time, launches and the answer's read-back included); median, with the fastest and "
          "slowest run" % a.runs,
          "- GPU baselines (bench/baselines/gpu/recursion.cu): CUDA events, median of 10 runs after a warm-up, "
          "until the answer is on the device (quickhull's is assembled on the host, where it keeps its segments); "
          "CPU baselines: the best of %d runs"
          % a.cxx_runs, "",
          "| benchmark | size | backend | ndp ms, median (min–max) | baseline | baseline ms | ratio | target | met? |",
          "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        n, b = r["ndp"], r["baseline"]
        ndp_cell = ("%s (%s–%s)" % (fmt(n["median_ms"]), fmt(n["min_ms"]), fmt(n["max_ms"])) if "median_ms" in n
                    else "error: " + n.get("error", "?"))
        base_ms = b.get("median_ms", b.get("best_ms"))
        if r["backend"] == "cuda":
            ratio = "ndp %.2f× its time" % r["slower_by"] if r["slower_by"] else "—"
        else:
            ratio = "ndp %.2f× faster" % r["faster_by"] if r["faster_by"] else "—"
        met = {True: "yes", False: "no", None: "—"}[r["met"]]
        md.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            r["benchmark"], r["size"], r["backend"], ndp_cell, r["baseline_name"],
            fmt(base_ms) if base_ms is not None else "error: " + b.get("error", "?"), ratio, r["target"], met))
    if problems:
        md += ["", "Problems:", ""] + ["- " + p for p in problems]
    with open(a.out + ".md", "w") as f:
        f.write("\n".join(md) + "\n")
    return md, problems


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ndp", default="build-gpu/cli/ndp")
    ap.add_argument("--baselines", default="build-gpu/bench/recursion")
    ap.add_argument("--runs", type=int, default=3, help="timed runs after the warm-up (default 3)")
    ap.add_argument("--cxx", default="g++")
    ap.add_argument("--cxx-runs", type=int, default=3)
    names = [r["name"] for r in ROWS] + ["cpu"]
    ap.add_argument("--only", default=",".join(names), help="comma-separated rows (default all: %s; cpu: the "
                    "three on the cpu backend)" % ",".join(names))
    ap.add_argument("--out", default="bench/results/recursion")
    a = ap.parse_args()
    only = set(x for x in a.only.split(",") if x)
    if only - set(names) or not 1 <= a.runs <= 99:
        ap.error("--only takes %s; --runs 1..99" % ",".join(names))
    rc, out, _ = rgp.sh(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"], 30)
    gpu = out.strip().splitlines()[0] if rc == 0 and out.strip() else "unknown (nvidia-smi unavailable)"
    work = tempfile.mkdtemp(prefix="ndp-recursion-")
    rows = []
    for r in ROWS:
        if r["name"] in only:
            rows.append(gpu_row(r, a, work))
            write(a, gpu, os.cpu_count(), rows)
    if "cpu" in only:
        for r in ROWS:
            rows.append(cpu_row(r, a, work))
            write(a, gpu, os.cpu_count(), rows)
    md, problems = write(a, gpu, os.cpu_count(), rows)
    print("\n".join(md))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
