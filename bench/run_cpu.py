#!/usr/bin/env python3
"""CPU benchmark suite: ndp's cpu and interp backends against sequential C++ (issue 4).

Builds the C++ baselines, runs every benchmark program on `ndp run --backend=cpu` and
`--backend=interp`, checks that all checksums agree, and writes bench/results/cpu.md and
bench/results/cpu.json. See bench/README.md.
"""

import argparse
import datetime
import json
import os
import platform
import re
import shlex
import subprocess
import sys
import time
from pathlib import Path

import program_answer  # bench/program_answer.py

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
WORK = ROOT / "build" / "bench"  # build outputs and rewritten programs; build/ is git-ignored

# Per benchmark: the full size the requirement names, the smaller size the interpreter falls
# back to when the full size runs past its timeout, and how the size is written.
BENCHMARKS = [
    {"name": "qsort", "what": "quicksort of random ints", "size": 10**6, "small": 10**5, "label": "10^{e}"},
    {"name": "primes", "what": "primes below n", "size": 10**7, "small": 10**6, "label": "10^{e}"},
    {"name": "batcher", "what": "bitonic sort of random ints", "size": 2**20, "small": 2**16, "label": "2^{b}"},
    {"name": "spmv", "what": "sparse matrix-vector product, rows (~10 nonzeros/row)", "size": 10**6,
     "small": 10**5, "label": "10^{e}"},
    {"name": "quickhull", "what": "convex hull of random points in the unit square", "size": 10**6,
     "small": 10**5, "label": "10^{e}"},
    {"name": "radix_blocks", "what": "radix sort by per-block counting (issue 21: loops with rep)", "size": 10**6,
     "small": 10**5, "label": "10^{e}"},
    {"name": "delaunay", "what": "Delaunay triangulation of random points in the unit square (issue 21)",
     "size": 10**4, "small": 10**3, "label": "10^{e}", "ratio_target": 1.0},
    # Float checksums (sums of doubles, added in another order on cpu): equal within rel_tol.
    # ratio_target: issue 21's "at least as fast as sequential C++ of the same algorithm".
    {"name": "blackscholes", "what": "Black-Scholes call prices in doubles, options (issue 21)", "size": 10**7,
     "small": 10**6, "label": "10^{e}", "checksum": "float", "rel_tol": 1e-9, "ratio_target": 1.0},
    {"name": "barnes_hut", "what": "Barnes-Hut forces, a quadtree build and a walk per body, bodies (issue 21)",
     "size": 20000, "small": 2000, "label": "{n}", "checksum": "float", "rel_tol": 1e-9, "ratio_target": 1.0},
    {"name": "muladd", "what": "x * y + z over three vectors of doubles (issue 21)", "size": 10**7, "small": 10**6,
     "label": "10^{e}", "ratio_target": 1.0},
    {"name": "dotp", "what": "dot product of two vectors of doubles (issue 21)", "size": 10**7, "small": 10**6,
     "label": "10^{e}", "checksum": "float", "rel_tol": 1e-9, "ratio_target": 1.0},
]

QSORT_TARGET_S = 0.15  # cpu quicksort of 10^6 ints must take less than this
RATIO_TARGET = 3.0  # every cpu benchmark within this factor of its sequential C++ algorithm

def same_checksum(bench, a, b):
    """Integer checksums must be equal; a benchmark with "checksum": "float" (a sum of doubles,
    which ndp may add in another order) allows a relative difference of its rel_tol."""
    if bench.get("checksum") == "float":
        return abs(a - b) <= bench["rel_tol"] * max(abs(a), abs(b))
    return a == b


def size_label(bench, n):
    """10^6 / 2^20 style when exact, otherwise the plain number."""
    for base, key in ((10, "e"), (2, "b")):
        e, m = 0, 1
        while m < n:
            m *= base
            e += 1
        if m == n and ("{%s}" % key) in bench["label"]:
            return bench["label"].format(**{key: e})
    return str(n)


def sh(cmd, timeout=None, cwd=ROOT):
    """Runs cmd; returns (rc or None on timeout, stdout, stderr, wall seconds)."""
    t0 = time.monotonic()
    try:
        p = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=timeout)
        return p.returncode, p.stdout, p.stderr, time.monotonic() - t0
    except OSError as e:  # e.g. the executable vanished: ndp being relinked by a concurrent build
        return -1, "", f"cannot run {cmd[0]}: {e}", time.monotonic() - t0
    except subprocess.TimeoutExpired as e:
        out = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
        err = e.stderr.decode() if isinstance(e.stderr, bytes) else (e.stderr or "")
        return None, out, err, time.monotonic() - t0


def mtime_text(path):
    try:
        stamp = os.path.getmtime(path)
    except OSError:
        return "missing"
    return datetime.datetime.fromtimestamp(stamp, datetime.timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")


def first_line(text):
    for line in text.splitlines():
        if line.strip():
            return line.strip()
    return ""


def machine_info(cxx):
    model = "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    nproc = first_line(sh(["nproc"])[1]) or str(os.cpu_count())
    compiler = first_line(sh([cxx, "--version"])[1])
    return {"nproc": nproc, "cpu_model": model, "kernel": platform.release(), "cxx": compiler}


def build_baselines(cxx, names):
    """g++ -O2 -std=c++20, one executable per benchmark, into build/bench/."""
    WORK.mkdir(parents=True, exist_ok=True)
    exes = {}
    for name in names:
        src = BENCH / "baselines" / "cpu" / f"{name}.cpp"
        exe = WORK / f"cxx_{name}"
        cmd = [cxx, "-O2", "-std=c++20", "-o", str(exe), str(src)]
        rc, _, err, _ = sh(cmd)
        if rc != 0:
            sys.exit(f"run_cpu: building {src} failed:\n{err}")
        exes[name] = exe
    return exes


def run_cxx(exe, n, runs):
    """Returns {variant: (checksum, seconds)} from a baseline's `variant checksum seconds` lines."""
    rc, out, err, _ = sh([str(exe), str(n), str(runs)])
    if rc != 0:
        sys.exit(f"run_cpu: {exe} {n} failed (rc {rc}):\n{err}")
    result = {}
    for line in out.splitlines():
        variant, check, secs = line.split()
        result[variant] = (program_answer.checksum_value(check), float(secs))
    return result


def program_for(name, n, runs):
    """bench/programs/NAME.ndp with its bench_size and bench_runs lines rewritten."""
    text = (BENCH / "programs" / f"{name}.ndp").read_text()
    text, k1 = re.subn(r"(?m)^bench_size = \d+ \$$", f"bench_size = {n} $", text)
    text, k2 = re.subn(r"(?m)^bench_runs = \d+ \$$", f"bench_runs = {runs} $", text)
    if k1 != 1 or k2 != 1:
        sys.exit(f"run_cpu: {name}.ndp must have exactly one `bench_size = N $` and one `bench_runs = N $` line")
    path = WORK / "programs" / f"{name}-{n}-{runs}.ndp"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def run_ndp(ndp, backend, name, n, runs, timeout):
    """Runs one benchmark program on one backend: a warm-up run, then `runs` timed ones. Returns a
    dict with status 'ok' (checksum; seconds, median_s, max_s: the best, median and slowest of
    the timed runs as NESL's time() measured them; all_s: every run), 'timeout' or 'error'
    (note)."""
    path = program_for(name, n, runs + 1)
    # Other work may relink ndp while the suite runs: wait for the executable to come back,
    # and record which build each measurement used.
    for _ in range(60):
        if os.access(ndp, os.X_OK):
            break
        time.sleep(5)
    built = mtime_text(ndp)
    # Paths relative to the repository root (the working directory), so commands read as typed.
    cmd = [os.path.relpath(ndp, ROOT), "run", f"--backend={backend}", os.path.relpath(path, ROOT)]
    rc, out, err, wall = sh(cmd, timeout=timeout)
    rec = {"backend": backend, "size": n, "runs": runs, "command": shlex.join(cmd), "process_wall_s": round(wall, 3),
           "ndp_built": built}
    if rc is None:
        rec.update(status="timeout", note=f"timed out after {timeout} s")
        return rec
    if rc != 0:
        why = first_line(err) or first_line(out) or f"exit status {rc}"
        rec.update(status="error", note=f"exit status {rc}: {why}")
        return rec
    try:
        checksum, seconds = program_answer.parse(out)
    except ValueError as e:
        rec.update(status="error", note=str(e))
        return rec
    t = program_answer.timed_spread(seconds)
    rec.update(status="ok", checksum=checksum, seconds=t["best"], median_s=t["median"], max_s=t["slowest"], all_s=seconds)
    return rec


def fmt_s(x):
    return "—" if x is None else (f"{x:.4f}" if x < 10 else f"{x:.2f}")


def fmt_ratio(x):
    return "—" if x is None else (f"{x:.2f}x" if x < 100 else f"{x:.0f}x")


def measure(bench, args, exes):
    """Measures one benchmark. Every number is kept with its size, and every ratio divides two
    measurements at the same size: when a backend runs past its timeout at the full size it is
    measured at the benchmark's smaller size, and the other side is then also run there."""
    name, n, small = bench["name"], bench["size"], bench["small"]
    row = {"name": name, "what": bench["what"], "size": n, "size_label": size_label(bench, n), "notes": []}

    cxx_cache = {}

    def cxx_at(size):
        if size not in cxx_cache:
            cxx_cache[size] = run_cxx(exes[name], size, args.runs)
        return cxx_cache[size]

    cxx = cxx_at(n)
    row["cxx"] = {"size": n, "runs": args.runs, "checksum": cxx["algorithm"][0], "seconds": cxx["algorithm"][1]}
    if "std_sort" in cxx:
        row["cxx_std_sort"] = {"size": n, "runs": args.runs, "checksum": cxx["std_sort"][0],
                               "seconds": cxx["std_sort"][1]}
        if not same_checksum(bench, cxx["std_sort"][0], cxx["algorithm"][0]):
            row["notes"].append("C++ std::sort and the C++ algorithm disagree")

    limits = {"cpu": (args.runs, args.cpu_timeout), "interp": (args.interp_runs, args.interp_timeout)}
    ndp_cache = {}

    def ndp_at(backend, size):
        if (backend, size) not in ndp_cache:
            runs, timeout = limits[backend]
            ndp_cache[(backend, size)] = run_ndp(args.ndp, backend, name, size, runs, timeout)
        return ndp_cache[(backend, size)]

    for backend in ("cpu", "interp"):
        row[backend] = None
        if backend not in args.backends:
            continue
        rec = ndp_at(backend, n)
        if rec["status"] == "timeout":
            row["notes"].append(f"{backend} at {size_label(bench, n)} ran past the {limits[backend][1]} s timeout; "
                                f"{backend} is measured at {size_label(bench, small)} instead, and its ratios "
                                f"compare measurements at that size (not extrapolated)")
            rec = dict(ndp_at(backend, small), full_size_attempt="timeout")
        row[backend] = rec

    ok = {k: row[k] for k in ("cpu", "interp") if row[k] and row[k]["status"] == "ok"}

    # Checksums: every ndp result against the C++ result at the same size.
    checks = {}
    for key, rec in ok.items():
        expect = cxx_at(rec["size"])["algorithm"][0]
        checks[key] = same_checksum(bench, rec["checksum"], expect)
        if not checks[key]:
            row["notes"].append(f"{key} checksum {rec['checksum']} differs from C++ {expect} at size {rec['size']}")

    # Ratios, each between two measurements at the same size.
    def seconds(who, size):
        if who == "cxx":
            return cxx_at(size)["algorithm"][1]
        rec = ndp_at(who, size)
        if rec["status"] != "ok":
            return None
        expect = cxx_at(size)["algorithm"][0]
        if not same_checksum(bench, rec["checksum"], expect):
            checks[f"{who}@{size}"] = False
            row["notes"].append(f"{who} checksum {rec['checksum']} differs from C++ {expect} at size {size}")
        return rec["seconds"]

    def ratio(num, den):
        """num/den at the smaller of the sizes the two were measured at, or None."""
        sizes = [ok[k]["size"] for k in (num, den) if k in ok]
        if any(k not in ok and k != "cxx" for k in (num, den)):
            return None, None
        size = min(sizes)
        a, b = seconds(num, size), seconds(den, size)
        return (a / b if a is not None and b else None), size

    row["cpu_over_cxx"], row["cpu_over_cxx_size"] = ratio("cpu", "cxx")
    row["interp_over_cpu"], row["interp_over_cpu_size"] = ratio("interp", "cpu")
    row["interp_over_cxx"], row["interp_over_cxx_size"] = ratio("interp", "cxx")
    if "cpu" in ok and ok["cpu"]["size"] == n and "cxx_std_sort" in row:
        row["cpu_over_std_sort"] = ok["cpu"]["seconds"] / row["cxx_std_sort"]["seconds"]
    row["checksums_agree"] = all(checks.values()) if checks else None
    row["checksums_checked"] = sorted(k for k in checks if "@" not in k)
    # Every measurement made, the headline ones and those at the smaller size, for cpu.json and the notes.
    row["measurements"] = [dict(r, who=f"ndp {b}") for (b, _), r in ndp_cache.items()] + [
        {"who": "C++", "size": sz, "runs": args.runs, "checksum": r["algorithm"][0], "seconds": r["algorithm"][1]}
        for sz, r in cxx_cache.items()]

    # Target: only a cpu measurement at the full size can meet it.
    cpu = ok.get("cpu")
    if not cpu:
        row["target_met"] = False if row["cpu"] and row["cpu"]["status"] == "timeout" or (
            row["cpu"] and row["cpu"].get("full_size_attempt") == "timeout") else None
    elif cpu["size"] != n:
        row["target_met"] = False
    else:
        met = row["cpu_over_cxx"] <= bench.get("ratio_target", RATIO_TARGET) and row["checksums_agree"] is not False
        if name == "qsort":
            met = met and cpu["seconds"] < QSORT_TARGET_S
        row["target_met"] = met
    return row


def target_text(name):
    bench = next((b for b in BENCHMARKS if b["name"] == name), {})
    t = f"cpu/C++ ≤ {bench.get('ratio_target', RATIO_TARGET):g}"
    return f"cpu < {QSORT_TARGET_S} s and {t}" if name == "qsort" else t


def backend_cell(rec, full_size, bench):
    if rec is None:
        return "not run"
    if rec["status"] == "ok":
        text = fmt_s(rec["seconds"])
        return text if rec["size"] == full_size else f"{text} **at {size_label(bench, rec['size'])}**"
    return "skipped (see notes)" if rec["status"] == "error" else "timed out (see notes)"


def write_markdown(rows, info, path):
    by_name = {b["name"]: b for b in BENCHMARKS}
    out = []
    out.append("# ndp CPU benchmarks: `cpu` and `interp` backends against sequential C++\n")
    if info["quick"]:
        out.append("**Smoke test (`--quick`): every size is the small one, not the required size.**\n")
    out.append(f"- date: {info['date']}")
    out.append(f"- machine: {info['machine']['cpu_model']}, `nproc` = {info['machine']['nproc']}, "
               f"Linux {info['machine']['kernel']} (cores shared with other work while measuring)")
    out.append(f"- command: `{info['command']}`")
    out.append(f"- ndp: `{info['ndp']}` ({info['ndp_version']}, built {info['ndp_built']}); C++: `{info['cxx_flags']}` ({info['machine']['cxx']})")
    out.append(f"- times: best of {info['runs']} runs (interp: best of {info['interp_runs']}), in seconds, measured "
               "inside the program (NESL's `time(e)` around the algorithm only; `std::chrono` around the "
               "same algorithm in C++); input generation and checksums are not timed. ndp's programs make one "
               "more run first, a warm-up, which is not counted; the median and slowest of its timed runs are "
               "in the JSON (`median_s`, `max_s`, and every run in `all_s`)")
    out.append("- C++ is the sequential version of the same algorithm (same pivots, same bitonic network, "
               "same sieve, same hull recursion); for quicksort `std::sort` is listed too\n")
    out.append("| benchmark | size | ndp cpu (s) | ndp interp (s) | C++ (s) | cpu/C++ | interp/cpu | interp/C++ "
               "| target | met? | checksums |")
    out.append("|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        b = by_name[r["name"]]

        def ratio_cell(key):
            text = fmt_ratio(r[key])
            size = r.get(key + "_size")
            return text if r[key] is None or size == r["size"] else f"{text} **at {size_label(b, size)}**"

        met = {True: "yes", False: "**no**", None: "n/a"}[r["target_met"]]
        agree = (f"agree within {b['rel_tol']:g} relative (" + ", ".join(r["checksums_checked"]) + " ≈ C++)"
                 if b.get("checksum") == "float" else "agree (" + ", ".join(r["checksums_checked"]) + " = C++)")
        checks = {True: agree, False: "**DIFFER**",
                  None: "not checked"}[r["checksums_agree"]]
        out.append(f"| {r['name']} | {r['size_label']} | {backend_cell(r['cpu'], r['size'], b)} | "
                   f"{backend_cell(r['interp'], r['size'], b)} | {fmt_s(r['cxx']['seconds'])} | "
                   f"{ratio_cell('cpu_over_cxx')} | {ratio_cell('interp_over_cpu')} | {ratio_cell('interp_over_cxx')} | "
                   f"{target_text(r['name'])} | {met} | {checks} |")
        if "cxx_std_sort" in r:
            ratio = fmt_ratio(r.get("cpu_over_std_sort"))
            out.append(f"| qsort vs `std::sort` | {r['size_label']} | {backend_cell(r['cpu'], r['size'], b)} | — | "
                       f"{fmt_s(r['cxx_std_sort']['seconds'])} | {ratio} | — | — | (reference) | — | "
                       f"{'agree' if r['cxx_std_sort']['checksum'] == r['cxx']['checksum'] else '**DIFFER**'} |")
    out.append("")
    notes = []
    skipped = {}  # identical skip reasons are listed once, with the benchmarks they hit
    for r in rows:
        for key in ("cpu", "interp"):
            rec = r[key]
            if rec and rec["status"] != "ok":
                skipped.setdefault((key, rec["note"]), []).append(r["name"])
    for (key, note), names in skipped.items():
        notes.append(f"- {key} backend skipped for {', '.join(names)}: {note}")
    for r in rows:
        for note in r["notes"]:
            notes.append(f"- {r['name']}: {note}")
        others = [m for m in r["measurements"] if m["size"] != r["size"] and m.get("status", "ok") == "ok"]
        if others:
            parts = [f"{m['who']} {fmt_s(m['seconds'])} s" for m in others]
            notes.append(f"- {r['name']}: at {size_label(by_name[r['name']], others[0]['size'])}: " + ", ".join(parts))
    if len(info.get("ndp_builds_used", [])) > 1:
        notes.insert(0, f"- **ndp was rebuilt while the suite ran**: the measurements come from builds made at "
                        f"{', '.join(info['ndp_builds_used'])} (each run's build is in cpu.json)")
    if notes:
        out.append("Notes:\n")
        out.extend(notes)
        out.append("")
    out.append("Ratios compare two measurements at the same size; `met?` is n/a where the cpu backend did not run. "
               "The per-run commands and raw numbers are in `cpu.json`.")
    path.write_text("\n".join(out) + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ndp", default=str(ROOT / "build" / "cli" / "ndp"), help="the ndp executable")
    ap.add_argument("--cxx", default="g++", help="C++ compiler for the baselines")
    ap.add_argument("--runs", type=int, default=5, help="timed runs per measurement (cpu, C++)")
    ap.add_argument("--interp-runs", type=int, default=3, help="timed runs per interp measurement")
    ap.add_argument("--interp-timeout", type=int, default=150,
                    help="seconds before an interp run at full size is abandoned for the smaller size")
    ap.add_argument("--cpu-timeout", type=int, default=300, help="seconds before a cpu run is abandoned")
    ap.add_argument("--backends", default="cpu,interp", help="comma-separated subset of cpu,interp")
    ap.add_argument("--only", default="", help="comma-separated benchmark names (default: all)")
    ap.add_argument("--out", default=None,
                    help="output path without extension (.md and .json are written); "
                         "default bench/results/cpu, or build/bench/cpu-quick with --quick")
    ap.add_argument("--quick", action="store_true",
                    help="smoke test: every benchmark at its small size (results not for bench/results/)")
    args = ap.parse_args()
    # ndp's programs print their run times as one sequence (program_answer.MAX_TIMED_RUNS).
    top = program_answer.MAX_TIMED_RUNS
    if not (1 <= args.runs <= top and 1 <= args.interp_runs <= top):
        ap.error(f"--runs and --interp-runs must be in 1..{top}")
    if args.quick:
        for b in BENCHMARKS:
            b["size"], b["small"] = b["small"], b["small"] // 8
    if args.out is None:
        args.out = str(WORK / "cpu-quick" if args.quick else BENCH / "results" / "cpu")
    args.ndp = os.path.abspath(args.ndp)  # commands run from the repository root
    args.backends = [b for b in args.backends.split(",") if b]
    names = [b["name"] for b in BENCHMARKS]
    chosen = [n for n in args.only.split(",") if n] or names
    unknown = set(chosen) - set(names)
    if unknown:
        sys.exit(f"run_cpu: unknown benchmark(s) {sorted(unknown)}; choose from {names}")
    if not Path(args.ndp).exists():
        sys.exit(f"run_cpu: {args.ndp} not found; build ndp first (ninja -C build cli/ndp)")

    info = {
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC"),
        "command": shlex.join([sys.executable.split("/")[-1], os.path.relpath(__file__, ROOT)] + sys.argv[1:]),
        "machine": machine_info(args.cxx),
        "ndp": os.path.relpath(args.ndp, ROOT),
        "ndp_version": first_line(sh([args.ndp, "--version"])[1]) or "unknown version",
        "ndp_built": mtime_text(args.ndp),
        "cxx_flags": f"{args.cxx} -O2 -std=c++20",
        "quick": args.quick,
        "runs": args.runs,
        "interp_runs": args.interp_runs,
        "interp_timeout_s": args.interp_timeout,
        "cpu_timeout_s": args.cpu_timeout,
        "targets": {"qsort_cpu_seconds_below": QSORT_TARGET_S, "cpu_over_cxx_at_most": RATIO_TARGET},
    }
    exes = build_baselines(args.cxx, chosen)
    rows = []
    for bench in BENCHMARKS:
        if bench["name"] not in chosen:
            continue
        print(f"run_cpu: {bench['name']} ...", file=sys.stderr, flush=True)
        row = measure(bench, args, exes)
        rows.append(row)
        for key in ("cpu", "interp"):
            rec = row[key]
            if rec:
                state = f"{rec['seconds']:.4f} s at {rec['size']}" if rec["status"] == "ok" else rec["note"]
                print(f"  {key}: {state}", file=sys.stderr, flush=True)
        print(f"  C++: {row['cxx']['seconds']:.4f} s; checksums agree: {row['checksums_agree']}",
              file=sys.stderr, flush=True)

    builds = sorted({m["ndp_built"] for r in rows for m in r["measurements"] if "ndp_built" in m})
    info["ndp_builds_used"] = builds
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    write_markdown(rows, info, out.with_suffix(".md"))
    out.with_suffix(".json").write_text(json.dumps({"info": info, "benchmarks": rows}, indent=2) + "\n")
    print(f"run_cpu: wrote {out.with_suffix('.md')} and {out.with_suffix('.json')}", file=sys.stderr)
    bad = [r["name"] for r in rows if r["checksums_agree"] is False]
    if bad:
        print(f"run_cpu: checksums DIFFER for {bad}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
