#!/usr/bin/env python3
"""Issue 6's whole programs on the GPU, each beside its baseline in the same run.

Runs bench/programs/qsort.ndp (2^24 random ints) and bench/programs/spmv.ndp (2^20 rows, in
each row-length shape of `bench_shape` and column width of `bench_columns`) with
`ndp run --backend=cuda`: one warm-up run, then --qsort-runs / --spmv-runs timed ones, each timed
by NESL's time() around the algorithm (the host's wall time: launches and the result's read-back
included). The baselines, where their binaries are built (tools/gpu-build.sh bench/cub_bench
bench/cusparse_spmv): CUB's DeviceRadixSort::SortKeys of 2^24 keys (cub_bench) for quicksort,
and cuSPARSE's SpMV on the same matrix with indices of the same width (cusparse_spmv, CUDA
events around its kernels) for SpMV, whose checksum must equal ndp's. Writes OUT.json (every
run) and OUT.md (median, fastest and slowest run, baseline, ratios, target). Plain python3.

    python3 bench/run_gpu_programs.py [--ndp build-gpu/cli/ndp] [--out bench/results/gpu_programs]

Exit status 1 if a program failed or a checksum differs.
"""
import argparse
import datetime
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile

import program_answer  # bench/program_answer.py

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CUSPARSE = re.compile(r"median ([0-9.]+) ms, min ([0-9.]+) ms, max ([0-9.]+) ms")
CHECKSUM = re.compile(r"(?m)^checksum: (-?\d+)$")
SPMV_ROWS = 1 << 20
QSORT_SIZE = 1 << 24
SHAPES = {0: "5–15 nonzeros a row", 1: "8–24 nonzeros, 16 on average: the issue's",
          2: "power-law rows, 16.5 on average"}


def sh(cmd, timeout, env=None):
    print("+ " + shlex.join(cmd), file=sys.stderr, flush=True)
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=timeout, env=env)
        return p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired:
        return None, "", "timed out after %d s" % timeout
    except OSError as e:
        return 127, "", str(e)


def program(name, settings, workdir):
    """bench/programs/NAME.ndp with its `bench_X = ... $` lines set, written under workdir."""
    with open(os.path.join(ROOT, "bench", "programs", name + ".ndp")) as f:
        text = f.read()
    for key, value in settings.items():
        text, k = re.subn(r"(?m)^%s = .* \$$" % key, "%s = %d $" % (key, value), text)
        if k != 1:
            sys.exit("run_gpu_programs: %s.ndp must have exactly one `%s = N $` line" % (name, key))
    path = os.path.join(workdir, "%s-%s.ndp" % (name, "-".join("%d" % v for v in settings.values())))
    with open(path, "w") as f:
        f.write(text)
    return path


def run_ndp(ndp, path, timeout):
    cmd = [ndp, "run", "--backend=cuda", path]
    rc, out, err = sh(cmd, timeout)
    rec = {"command": shlex.join(cmd)}
    if rc != 0:
        rec["error"] = (err.strip() or out.strip() or "exit status %s" % rc).splitlines()[-1]
        return rec
    try:
        checksum, seconds = program_answer.parse(out)
    except ValueError as e:
        rec["error"] = str(e)
        return rec
    t = program_answer.timed_spread(seconds)
    rec.update(checksum=checksum, median_ms=1e3 * t["median"], min_ms=1e3 * t["best"], max_ms=1e3 * t["slowest"],
               timed_runs=t["timed_runs"], all_s=seconds)
    return rec


def run_cusparse(exe, shape, bits, runs):
    cmd = [exe, str(SPMV_ROWS), str(runs), str(shape), str(bits)]
    env = dict(os.environ)
    env["LD_LIBRARY_PATH"] = "/usr/local/cuda/lib64" + (":" + env["LD_LIBRARY_PATH"] if env.get("LD_LIBRARY_PATH") else "")
    rc, out, err = sh(cmd, 120, env)
    m, c = CUSPARSE.search(out), CHECKSUM.search(out)
    if rc != 0 or not m or not c:
        return {"command": shlex.join(cmd), "error": (err.strip() or out.strip() or "exit status %s" % rc).splitlines()[-1]}
    return {"command": shlex.join(cmd), "median_ms": float(m.group(1)), "min_ms": float(m.group(2)),
            "max_ms": float(m.group(3)), "runs": runs, "checksum": int(c.group(1))}


def run_cub_sort(exe):
    cmd = [exe, "--log2", "26", "--sort-log2", "24", "--only", "sort_f32", "--reps", "10"]
    rc, out, err = sh(cmd, 120)
    rows = [json.loads(l) for l in out.splitlines() if l.startswith("{")]
    if rc != 0 or not rows:
        return {"command": shlex.join(cmd), "error": (err.strip() or "exit status %s" % rc).splitlines()[-1]}
    return {"command": shlex.join(cmd), "rows": {r["bench"]: r for r in rows}}


def fmt(ms):
    return "—" if ms is None else ("%.4f" % ms if ms < 10 else "%.1f" % ms)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ndp", default="build-gpu/cli/ndp")
    ap.add_argument("--cub", default="build-gpu/bench/cub_bench", help="CUB's sort baseline (skipped where missing)")
    ap.add_argument("--cusparse", default="build-gpu/bench/cusparse_spmv", help="SpMV baseline (skipped where missing)")
    ap.add_argument("--qsort-runs", type=int, default=3, help="timed quicksort runs after the warm-up, 1..99 (default 3)")
    ap.add_argument("--spmv-runs", type=int, default=20, help="timed SpMV runs after the warm-up, 1..99 (default 20)")
    ap.add_argument("--cusparse-runs", type=int, default=100)
    ap.add_argument("--only", default="qsort,spmv", help="qsort, spmv or both (default)")
    ap.add_argument("--out", default="bench/results/gpu_programs", help="output prefix (.json and .md)")
    a = ap.parse_args()
    for name, runs in (("--qsort-runs", a.qsort_runs), ("--spmv-runs", a.spmv_runs)):
        if not 1 <= runs <= program_answer.MAX_TIMED_RUNS:
            ap.error("%s must be in 1..%d" % (name, program_answer.MAX_TIMED_RUNS))
    only = set(a.only.split(","))
    problems, rows = [], []
    work = tempfile.mkdtemp(prefix="ndp-programs-")

    if "qsort" in only:
        rec = run_ndp(a.ndp, program("qsort", {"bench_size": QSORT_SIZE, "bench_runs": a.qsort_runs + 1}, work), 300)
        base = run_cub_sort(a.cub) if os.path.exists(a.cub) else {"error": "%s is missing" % a.cub}
        cub = base.get("rows", {}).get("sort_f32")
        rows.append({"benchmark": "NESL quicksort (`examples/` algorithm)", "size": "2^24 random ints", "ndp": rec,
                     "baseline": base, "baseline_name": "CUB DeviceRadixSort::SortKeys, 2^24 f32 keys",
                     "baseline_median_ms": cub["ms"] if cub else None,
                     "baseline_min_ms": cub.get("min_ms") if cub else None,
                     # The target is a bound on ndp's time: ndp / CUB, at most 4.
                     "slower_by": rec["median_ms"] / cub["ms"] if cub and "median_ms" in rec else None,
                     "target": "≤ 4× CUB radix sort time",
                     "met": rec["median_ms"] / cub["ms"] <= 4 if cub and "median_ms" in rec else None})
        if "error" in rec:
            problems.append("quicksort: " + rec["error"])
        if "error" in base and os.path.exists(a.cub):
            problems.append("CUB's sort: " + base["error"])

    if "spmv" in only:
        for columns in (64, 32):
            for shape in (0, 1, 2):
                settings = {"bench_size": SPMV_ROWS, "bench_runs": a.spmv_runs + 1, "bench_shape": shape,
                            "bench_columns": columns}
                rec = run_ndp(a.ndp, program("spmv", settings, work), 300)
                base = (run_cusparse(a.cusparse, shape, columns, a.cusparse_runs) if os.path.exists(a.cusparse)
                        else {"error": "%s is missing" % a.cusparse})
                ok = "median_ms" in rec and "median_ms" in base
                same = ok and rec["checksum"] == base["checksum"]
                if ok and not same:
                    problems.append("SpMV shape %d, %d-bit columns: checksum %d, cuSPARSE %d" % (
                        shape, columns, rec["checksum"], base["checksum"]))
                if "error" in rec:
                    problems.append("SpMV shape %d, %d-bit columns: %s" % (shape, columns, rec["error"]))
                if "error" in base and os.path.exists(a.cusparse):
                    problems.append("cuSPARSE, shape %d, %d-bit indices: %s" % (shape, columns, base["error"]))
                ratio = base["median_ms"] / rec["median_ms"] if ok else None
                rows.append({"benchmark": "SpMV, shape %d (%s), %s columns" % (
                                 shape, SHAPES[shape], "`int`" if columns == 64 else "`i32`"),
                             "size": "2^20 rows", "ndp": rec, "baseline": base,
                             "baseline_name": "cuSPARSE SpMV, CSR, %d-bit indices" % columns,
                             "baseline_median_ms": base.get("median_ms"), "baseline_min_ms": base.get("min_ms"),
                             "ratio": ratio, "best_ratio": base["min_ms"] / rec["min_ms"] if ok else None,
                             "checksums_agree": same if ok else None, "target": "≥ 0.7× cuSPARSE",
                             "met": (ratio >= 0.7 and same) if ok else None})

    rc, out, _ = sh(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"], 30)
    gpu = out.strip().splitlines()[0] if rc == 0 and out.strip() else "unknown (nvidia-smi unavailable)"
    when = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    command = "python3 " + shlex.join(sys.argv)
    os.makedirs(os.path.dirname(a.out) or ".", exist_ok=True)
    with open(a.out + ".json", "w") as f:
        json.dump({"command": command, "gpu": gpu, "date": when, "rows": rows, "problems": problems}, f, indent=1)
        f.write("\n")
    md = ["# Whole programs on the GPU (issue 6)", "", "- GPU: %s" % gpu, "- date: %s" % when,
          "- command: `%s`" % command,
          "- ndp: `ndp run --backend=cuda`, one warm-up run, then %d timed runs (quicksort) or %d (SpMV), each "
          "timed by NESL's `time` around the algorithm (the host's wall time, launches and the result's read-back "
          "included); median (the upper middle run of an even number), with the fastest and slowest run"
          % (a.qsort_runs, a.spmv_runs),
          "- baselines in the same run: CUB's radix sort (CUDA events, median of 10); cuSPARSE's SpMV on the same "
          "matrix and x with indices of the same width (CUDA events around its kernels, %d runs), whose checksum "
          "must equal ndp's" % a.cusparse_runs, "",
          "SpMV's ratio is cuSPARSE's median / ndp's median (best/best beside it); quicksort's is ndp's median / "
          "CUB's.", "",
          "| benchmark | size | ndp ms, median (min–max) | baseline | baseline ms, median (min) | ratio | "
          "target | met? |", "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        n = r["ndp"]
        ndp_cell = ("%s (%s–%s)" % (fmt(n["median_ms"]), fmt(n["min_ms"]), fmt(n["max_ms"])) if "median_ms" in n
                    else "error: " + n["error"])
        base_cell = ("%s (%s)" % (fmt(r["baseline_median_ms"]), fmt(r["baseline_min_ms"]))
                     if r["baseline_median_ms"] is not None else "not run: " + r["baseline"].get("error", "?"))
        if "slower_by" in r:
            ratio = "—" if r["slower_by"] is None else "%.0f× slower" % r["slower_by"]
        else:
            ratio = "—" if r["ratio"] is None else "%.2f× (best %.2f×)" % (r["ratio"], r["best_ratio"])
        met = "—" if r["met"] is None else ("yes" if r["met"] else "**no**")
        md.append("| %s | %s | %s | %s | %s | %s | %s | %s |" % (
            r["benchmark"], r["size"], ndp_cell, r["baseline_name"], base_cell, ratio, r["target"], met))
    if problems:
        md += ["", "Problems:", ""] + ["- " + p for p in problems]
    with open(a.out + ".md", "w") as f:
        f.write("\n".join(md) + "\n")
    print("\n".join(md))
    print("wrote %s.json and %s.md" % (a.out, a.out), file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
