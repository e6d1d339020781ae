#!/usr/bin/env python3
"""The whole programs of issues 6 and 21 on the GPU, each beside its baseline in the same run.

Runs bench/programs/qsort.ndp (2^24 random ints) and bench/programs/spmv.ndp (2^20 rows, in
each row-length shape of `bench_shape` and column width of `bench_columns`) with
`ndp run --backend=cuda`: one warm-up run, then --qsort-runs / --spmv-runs timed ones, each timed
by NESL's time() around the algorithm (the host's wall time: launches and the result's read-back
included). The baselines, where their binaries are built (tools/gpu-build.sh bench/cub_bench
bench/cusparse_spmv): CUB's DeviceRadixSort::SortKeys of 2^24 keys (cub_bench) for quicksort,
and cuSPARSE's SpMV on the same matrix with indices of the same width (cusparse_spmv, CUDA
events around its kernels) for SpMV, whose checksum must equal ndp's.

Issue 21's programs, the same way (one warm-up run, then --runs timed ones): delaunay.ndp (10^4
points), barnes_hut.ndp (2*10^4 bodies, one step a run), radix_blocks.ndp (10^6 keys),
quickhull.ndp (10^6 points) and batcher.ndp (2^20 keys), each checked against the sequential C++
of the same algorithm (bench/baselines/cpu/NAME.cpp, built as bench/run_cpu.py builds it,
`--cxx -O2 -std=c++20` into build/bench/cxx_NAME, run on this machine's CPU): the checksums must
be equal, or for a float checksum equal within the relative tolerance of run_cpu.py's entry.
Targets: Delaunay <= 30 ms, Barnes-Hut <= 100 ms a step (the median of the timed runs).

Writes OUT.json (every run) and OUT.md (median, fastest and slowest run, baseline, ratios,
target), rewritten after each program so that a run cut short keeps what it measured. Plain
python3.

    python3 bench/run_gpu_programs.py [--ndp build-gpu/cli/ndp] [--out bench/results/gpu_programs]
    python3 bench/run_gpu_programs.py --only delaunay,barnes_hut --runs 10

Exit status 1 if a program failed, a checksum differs or a baseline that should have run
failed (a missing baseline, or a missing C++ compiler, is reported in the table instead).
"""
import argparse
import datetime
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

import program_answer  # bench/program_answer.py
import run_cpu  # bench/run_cpu.py: the checksum kinds and tolerances of the C++ baselines

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CUSPARSE = re.compile(r"median ([0-9.]+) ms, min ([0-9.]+) ms, max ([0-9.]+) ms")
CHECKSUM = re.compile(r"(?m)^checksum: (-?\d+)$")
SPMV_ROWS = 1 << 20
QSORT_SIZE = 1 << 24
SHAPES = {0: "5–15 nonzeros a row", 1: "8–24 nonzeros, 16 on average: the issue's",
          2: "power-law rows, 16.5 on average"}
ISSUE6 = ["qsort", "spmv"]
# Issue 21's programs: size, how the table writes it, target in ms (a bound on the median of the
# timed runs; None: no target) and the seconds `ndp run` may take (the warm-up run compiles the
# kernels).
ISSUE21 = [
    {"name": "delaunay", "what": "Delaunay triangulation, points in the unit square", "size": 10**4,
     "label": "10^4", "target_ms": 30, "target": "≤ 30 ms", "timeout": 240},
    {"name": "barnes_hut", "what": "Barnes–Hut forces, one step, bodies", "size": 20000, "label": "2·10^4",
     "target_ms": 100, "target": "≤ 100 ms a step", "timeout": 240},
    {"name": "radix_blocks", "what": "radix sort by per-block counting, keys", "size": 10**6, "label": "10^6",
     "target_ms": None, "target": "—", "timeout": 180},
    {"name": "quickhull", "what": "quickhull, points in the unit square", "size": 10**6, "label": "10^6",
     "target_ms": None, "target": "—", "timeout": 180},
    {"name": "batcher", "what": "Batcher's bitonic sort, keys", "size": 1 << 20, "label": "2^20",
     "target_ms": None, "target": "—", "timeout": 180},
]


def sh(cmd, timeout, env=None, cwd=None):
    print("+ " + shlex.join(cmd), file=sys.stderr, flush=True)
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=timeout, env=env,
                           cwd=cwd)
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


def run_ndp(ndp, path, timeout, backend="cuda"):
    cmd = [ndp, "run", "--backend=" + backend, path]
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


def run_cusparse(exe, shape, bits, runs, batch=1):
    cmd = [exe, str(SPMV_ROWS), str(runs), str(shape), str(bits), str(batch)]
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


def build_cxx(cxx, name):
    """Builds bench/baselines/cpu/NAME.cpp as bench/run_cpu.py does; returns (executable, None), or
    (None, {"error": why, "missing_tool": whether the compiler itself is missing})."""
    if shutil.which(cxx) is None:
        return None, {"error": "C++ compiler %s not found" % cxx, "missing_tool": True}
    os.makedirs(os.path.join(ROOT, "build", "bench"), exist_ok=True)
    exe = os.path.join("build", "bench", "cxx_" + name)
    cmd = [cxx, "-O2", "-std=c++20", "-o", exe, os.path.join("bench", "baselines", "cpu", name + ".cpp")]
    rc, out, err = sh(cmd, 300, cwd=ROOT)
    if rc != 0:
        why = (err.strip() or out.strip() or "exit status %s" % rc).splitlines()
        return None, {"command": shlex.join(cmd), "error": "building failed: " + (why[0] if why else "?"),
                      "missing_tool": False}
    return exe, None


def run_cxx(exe, size, runs):
    """Runs a C++ baseline (`cxx_NAME SIZE RUNS`) and reads its `algorithm CHECKSUM SECONDS` line
    (SECONDS: the best of RUNS)."""
    cmd = [os.path.join(".", exe), str(size), str(runs)]
    rc, out, err = sh(cmd, 300, cwd=ROOT)
    rec = {"command": shlex.join(cmd), "runs": runs}
    if rc != 0:
        rec["error"] = (err.strip() or out.strip() or "exit status %s" % rc).splitlines()[-1]
        return rec
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[0] == "algorithm":
            try:
                check = program_answer.checksum_value(parts[1])
                rec.update(checksum=check, best_ms=1e3 * float(parts[2]))
            except ValueError:
                break
            return rec
    rec["error"] = "no `algorithm CHECKSUM SECONDS` line in its output"
    return rec


def run_issue21(prog, a, work):
    """One of issue 21's programs on ndp, and its C++ baseline; the row for the table."""
    name = prog["name"]
    settings = {"bench_size": prog["size"], "bench_runs": a.runs + 1}
    rec = run_ndp(a.ndp, program(name, settings, work), a.timeout or prog["timeout"], a.ndp_backend)
    exe, base = build_cxx(a.cxx, name)
    if exe:
        base = run_cxx(exe, prog["size"], a.cxx_runs)
    entry = next((b for b in run_cpu.BENCHMARKS if b["name"] == name), {"name": name})
    row = {"program": name, "benchmark": prog["what"], "size": prog["label"], "n": prog["size"], "ndp": rec,
           "baseline": base, "baseline_name": "sequential C++, bench/baselines/cpu/%s.cpp" % name,
           "target": prog["target"], "target_ms": prog["target_ms"], "problems": []}
    if entry.get("checksum") == "float":
        row["rel_tol"] = entry["rel_tol"]
    if "error" in rec:
        row["problems"].append("%s: %s" % (name, rec["error"]))
    if "error" in base and not base.get("missing_tool"):
        row["problems"].append("%s's C++ baseline: %s" % (name, base["error"]))
    ok = "checksum" in rec and "checksum" in base
    row["checksums_agree"] = run_cpu.same_checksum(entry, rec["checksum"], base["checksum"]) if ok else None
    if row["checksums_agree"] is False:
        row["problems"].append("%s: checksum %r, C++ %r" % (name, rec["checksum"], base["checksum"]))
    row["cxx_over_ndp"] = base["best_ms"] / rec["median_ms"] if ok and rec["median_ms"] > 0 else None
    row["met"] = (rec["median_ms"] <= prog["target_ms"] and row["checksums_agree"] is not False
                  if prog["target_ms"] is not None and "median_ms" in rec and a.ndp_backend == "cuda" else None)
    return row


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
    ap.add_argument("--runs", type=int, default=5,
                    help="timed runs of each of issue 21's programs after the warm-up, 1..99 (default 5)")
    ap.add_argument("--cxx", default="g++", help="C++ compiler of issue 21's baselines (reported where missing)")
    ap.add_argument("--cxx-runs", type=int, default=3, help="runs of each C++ baseline, the best reported (default 3)")
    ap.add_argument("--timeout", type=int, default=0,
                    help="seconds each of issue 21's programs may run, warm-up included (default: 180, "
                         "240 for delaunay and barnes_hut)")
    ap.add_argument("--ndp-backend", default="cuda",
                    help="ndp's backend (default cuda; another, e.g. cpu, only to try the runner without a GPU)")
    names = ISSUE6 + [p["name"] for p in ISSUE21]
    ap.add_argument("--only", default=",".join(names), help="comma-separated programs (default all: %s)" % ",".join(names))
    ap.add_argument("--out", default="bench/results/gpu_programs", help="output prefix (.json and .md)")
    a = ap.parse_args()
    for name, runs in (("--qsort-runs", a.qsort_runs), ("--spmv-runs", a.spmv_runs), ("--runs", a.runs)):
        if not 1 <= runs <= program_answer.MAX_TIMED_RUNS:
            ap.error("%s must be in 1..%d" % (name, program_answer.MAX_TIMED_RUNS))
    if a.cxx_runs < 1 or a.timeout < 0:
        ap.error("--cxx-runs must be at least 1 and --timeout not negative")
    only = set(n for n in a.only.split(",") if n)
    if only - set(names):
        ap.error("unknown program(s) %s; choose from %s" % (",".join(sorted(only - set(names))), ",".join(names)))
    problems, rows, rows21 = [], [], []
    work = tempfile.mkdtemp(prefix="ndp-programs-")
    rc, out, _ = sh(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"], 30)
    gpu = out.strip().splitlines()[0] if rc == 0 and out.strip() else "unknown (nvidia-smi unavailable)"

    def save():
        return write_results(a, gpu, rows, rows21, problems + [p for r in rows21 for p in r["problems"]])

    if "qsort" in only:
        rec = run_ndp(a.ndp, program("qsort", {"bench_size": QSORT_SIZE, "bench_runs": a.qsort_runs + 1}, work), 300,
                      a.ndp_backend)
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
        save()

    if "spmv" in only:
        for columns in (64, 32):
            for shape in (0, 1, 2):
                settings = {"bench_size": SPMV_ROWS, "bench_runs": a.spmv_runs + 1, "bench_shape": shape,
                            "bench_columns": columns}
                rec = run_ndp(a.ndp, program("spmv", settings, work), 300, a.ndp_backend)
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
                save()

    for prog in ISSUE21:
        if prog["name"] in only:
            rows21.append(run_issue21(prog, a, work))
            save()

    md, all_problems = save()
    print("\n".join(md))
    print("wrote %s.json and %s.md" % (a.out, a.out), file=sys.stderr)
    return 1 if all_problems else 0


def write_results(a, gpu, rows, rows21, problems):
    """Writes OUT.json and OUT.md; returns the Markdown lines and the problems."""
    when = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    command = "python3 " + shlex.join(sys.argv)
    os.makedirs(os.path.dirname(a.out) or ".", exist_ok=True)
    record = {"command": command, "gpu": gpu, "date": when, "rows": rows, "problems": problems}
    if rows21:
        record["issue21_rows"] = rows21
    with open(a.out + ".json", "w") as f:
        json.dump(record, f, indent=1)
        f.write("\n")
    title = {(True, False): "issue 6", (False, True): "issue 21", (True, True): "issues 6 and 21"}.get(
        (bool(rows), bool(rows21)), "issue 6")
    md = ["# Whole programs on the GPU (%s)" % title, "", "- GPU: %s" % gpu, "- date: %s" % when,
          "- command: `%s`" % command]
    if rows or not rows21:
        md += issue6_markdown(a, rows)
    if rows21:
        md += issue21_markdown(a, rows21)
    if problems:
        md += ["", "Problems:", ""] + ["- " + p for p in problems]
    with open(a.out + ".md", "w") as f:
        f.write("\n".join(md) + "\n")
    return md, problems


def issue6_markdown(a, rows):
    md = ["- ndp: `ndp run --backend=%s`, one warm-up run, then %d timed runs (quicksort) or %d (SpMV), each "
          "timed by NESL's `time` around the algorithm (the host's wall time, launches and the result's read-back "
          "included); median (the upper middle run of an even number), with the fastest and slowest run"
          % (a.ndp_backend, a.qsort_runs, a.spmv_runs),
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
    return md


def issue21_markdown(a, rows21):
    md = ["", "## Issue 21's programs", "",
          "- ndp: `ndp run --backend=%s`, one warm-up run (on cuda it compiles the kernels), then %d timed runs, each "
          "timed by NESL's `time` around the algorithm (the host's wall time, launches and the result's read-back "
          "included); median (the upper middle run of an even number), with the fastest and slowest run"
          % (a.ndp_backend, a.runs),
          "- baseline: the sequential C++ of the same algorithm (`bench/baselines/cpu/NAME.cpp`, `%s -O2 "
          "-std=c++20`, on this machine's CPU, best of %d runs), whose checksum must equal ndp's (a float "
          "checksum within the relative tolerance of `bench/run_cpu.py`'s entry); C++/ndp is its time over "
          "ndp's median" % (a.cxx, a.cxx_runs),
          "- targets (issue 21, on an H100): the median of the timed runs; Barnes–Hut's run is one step (the "
          "forces on every body)", "",
          "| program | size | ndp ms, median (min–max) | C++ ms, best | C++/ndp | checksum | target | met? |",
          "|---|---|---|---|---|---|---|---|"]
    for r in rows21:
        n, b = r["ndp"], r["baseline"]
        ndp_cell = ("%s (%s–%s)" % (fmt(n["median_ms"]), fmt(n["min_ms"]), fmt(n["max_ms"])) if "median_ms" in n
                    else "error: " + n["error"])
        base_cell = fmt(b["best_ms"]) if "best_ms" in b else "not run: " + b.get("error", "?")
        ratio = "—" if r["cxx_over_ndp"] is None else "%.2f×" % r["cxx_over_ndp"]
        if r["checksums_agree"] is None:
            check = "not checked" + ("" if "checksum" not in n else " (ndp %r)" % n["checksum"])
        elif r["checksums_agree"]:
            check = ("≈ C++ within %g relative (%r)" % (r["rel_tol"], b["checksum"]) if "rel_tol" in r
                     else "= C++ (%r)" % b["checksum"])
        else:
            check = "**differs**: ndp %r, C++ %r" % (n["checksum"], b["checksum"])
        met = "—" if r["met"] is None else ("yes" if r["met"] else "**no**")
        md.append("| %s (`%s.ndp`) | %s | %s | %s | %s | %s | %s | %s |" % (
            r["benchmark"], r["program"], r["size"], ndp_cell, base_cell, ratio, check, r["target"], met))
    return md


if __name__ == "__main__":
    sys.exit(main())
