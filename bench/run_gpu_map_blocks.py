#!/usr/bin/env python3
"""Issue 25's map-block benchmarks on the GPU, each beside its baseline in the same run.

Programs (bench/programs/NAME.ndp, run with `ndp run --backend=cuda`: one warm-up run, then
--runs timed ones, NESL's time() around the algorithm) and baselines
(bench/baselines/gpu/map_blocks.cu, built by tools/gpu-build.sh bench/map_blocks):
  allpairs: 16384 3-D points in doubles, auto and each level, against the hand-written CUDA
    kernel with the points tiled in shared memory (target: ndp <= 2x its time);
  fractal: 2000 x 2000 pixels, at most 2000 iterations, against a hand-written CUDA kernel
    (target <= 2x);
  matmul: 2048 x 2048 f32, against cuBLAS SGEMM (target: >= 0.2x its speed);
  spmv: bench/programs/spmv.ndp, 2^20 rows of 8-24 nonzeros, 64-bit columns, auto and pinned
    to sub-warps and a warp, against cuSPARSE (target: >= 0.9x its speed);
  segsum: 2^24 ints in segments of 1, 2, 4 ... 2^17, auto, flattened and every level in turn in
    one process a length (--sweep-rounds rounds after a warm-up), against CUB's segmented sum
    and a device copy of the ints (bandwidth: the ints' bytes over the time; the copy moves them
    twice, in and out, so its bandwidth is 16 bytes an int);
  segsort: {sort(s) : s in segs}, 2^16 segments of 2^8 ints, against CUB's DeviceSegmentedSort
    (target: >= 1x its speed);
  radix: bench/programs/radix_blocks.ndp (per-block counting with `rep` in loops), 10^6 keys,
    against CUB's DeviceRadixSort of the same keys on their 32 low bits (target: <= 5x its time).
The checksums of ndp and its baseline must agree (floats within a relative 1e-9).

Writes OUT.json, OUT.md and OUT_sweep.svg (the sweep: bandwidth against segment length, a line
per level, the copy as the roof). Plain python3.

    python3 bench/run_gpu_map_blocks.py --ndp build-gpu/cli/ndp --baselines build-gpu/bench/map_blocks \
        --out bench/results/session21/map_blocks [--only allpairs,segsum]
"""
import argparse
import datetime
import json
import math
import re
import os
import shlex
import sys
import tempfile

import program_answer
from run_gpu_programs import SPMV_ROWS, program, run_cusparse, run_ndp, sh

# The callee of each program's timing line (`function at_level(...) = NAME(...) $`), by level.
ALLPAIRS_LEVELS = {"allpairs": "auto", "allpairs_thread": "thread", "allpairs_warp": "warp", "allpairs_block": "block"}
SEGSUM_LEVELS = {"segsum": "auto", "segsum_grid": "flattened", "segsum_thread": "thread", "segsum_sub2": "subwarp(2)",
                 "segsum_sub4": "subwarp(4)", "segsum_sub8": "subwarp(8)", "segsum_sub16": "subwarp(16)",
                 "segsum_warp": "warp", "segsum_block": "block"}
# The threads a segment gets at each level: a level with more than twice the segment's length
# idles most of them, and is skipped (as `ndp autotune` skips it).
SEGSUM_LANES = {"thread": 1, "subwarp(2)": 2, "subwarp(4)": 4, "subwarp(8)": 8, "subwarp(16)": 16, "warp": 32, "block": 256}
SPMV_LEVELS = {"spmv": "auto", "spmv_grid": "flattened", "spmv_sub2": "subwarp(2)", "spmv_sub4": "subwarp(4)",
               "spmv_sub8": "subwarp(8)", "spmv_sub16": "subwarp(16)", "spmv_warp": "warp"}
SEG_LENGTHS = [1 << k for k in range(18)]
SEG_INTS = 1 << 24
SEGSORT = (1 << 16, 1 << 8)  # segments, their length
RADIX_KEYS = 1000000


def baseline(exe, args):
    cmd = [exe] + [str(a) for a in args]
    env = dict(os.environ)
    env["LD_LIBRARY_PATH"] = "/usr/local/cuda/lib64" + (":" + env["LD_LIBRARY_PATH"] if env.get("LD_LIBRARY_PATH") else "")
    rc, out, err = sh(cmd, 300, env)
    rec = {"command": shlex.join(cmd)}
    fields = out.split()
    if rc != 0 or "median" not in fields:
        rec["error"] = (err.strip() or out.strip() or "exit status %s" % rc).splitlines()[-1]
        return rec
    rec["median_ms"] = float(fields[fields.index("median") + 1])
    rec["min_ms"] = float(fields[fields.index("min") + 1])
    rec["max_ms"] = float(fields[fields.index("max") + 1])
    rec["checksum"] = float(fields[fields.index("checksum") + 1])
    return rec


def agree(a, b):
    if a is None or b is None:
        return None
    return abs(float(a) - float(b)) <= 1e-9 * max(abs(float(a)), abs(float(b)), 1.0)


def ndp_row(a, work, name, settings, callee=None, timeout=600):
    """NAME.ndp with `settings`, its timing line (`function at_level(...) = F(...) $`, or spmv_at's)
    calling `callee` instead, run on cuda."""
    path = program(name, dict(settings, bench_runs=a.runs + 1), work)
    if callee:
        with open(path) as f:
            text = f.read()
        text, k = re.subn(r"(?m)^(function (?:at_level|spmv_at)\(([^)]*)\) = )\w+\(", r"\g<1>%s(" % callee, text)
        if k != 1:
            sys.exit("run_gpu_map_blocks: %s.ndp must have one timing line" % name)
        path = path[:-4] + "-" + callee + ".ndp"
        with open(path, "w") as f:
            f.write(text)
    return run_ndp(a.ndp, path, timeout)


def svg_sweep(rows, copy_gbs, path):
    """Bandwidth (GB/s) against segment length, log2 on x: a polyline per level, the copy roof."""
    w, h, left, bottom, top, right = 720, 420, 60, 50, 20, 170
    xs = [math.log2(r["length"]) for r in rows]
    ymax = max([copy_gbs or 0] + [r["gbs"] for r in rows if r.get("gbs")]) * 1.1 or 1
    x0, x1 = min(xs), max(xs)
    def px(l):
        return left + (math.log2(l) - x0) / max(x1 - x0, 1) * (w - left - right)
    def py(g):
        return h - bottom - g / ymax * (h - top - bottom)
    colors = ["#000000", "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b"]
    out = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="11">' % (w, h),
           '<rect width="100%" height="100%" fill="white"/>',
           '<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="black"/>' % (left, h - bottom, w - right, h - bottom),
           '<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="black"/>' % (left, top, left, h - bottom),
           '<text x="%d" y="%d" text-anchor="middle">segment length (ints)</text>' % ((left + w - right) / 2, h - 10),
           '<text x="14" y="%d" transform="rotate(-90 14 %d)" text-anchor="middle">GB/s (8 bytes an int)</text>' % (h / 2, h / 2)]
    for r in sorted({r["length"] for r in rows}):
        out.append('<text x="%.1f" y="%d" text-anchor="middle">%s</text>' % (px(r), h - bottom + 15, "2^%d" % round(math.log2(r)) if r > 1 else "1"))
    for g in range(0, int(ymax) + 1, max(1, int(ymax / 5 / 100) * 100 or 100)):
        out.append('<text x="%d" y="%.1f" text-anchor="end">%d</text>' % (left - 5, py(g) + 4, g))
    if copy_gbs:
        out.append('<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="gray" stroke-dasharray="5,4"/>' % (left, py(copy_gbs), w - right, py(copy_gbs)))
        out.append('<text x="%d" y="%.1f" fill="gray">copy %.0f GB/s</text>' % (w - right + 5, py(copy_gbs) + 4, copy_gbs))
    order = list(SEGSUM_LEVELS.values()) + ["CUB"]
    series = sorted({r["level"] for r in rows}, key=lambda s: order.index(s) if s in order else len(order))
    for i, level in enumerate(series):
        pts = [(px(r["length"]), py(r["gbs"])) for r in sorted(rows, key=lambda r: r["length"]) if r["level"] == level and r.get("gbs")]
        if not pts:
            continue
        c = colors[i % len(colors)]
        out.append('<polyline fill="none" stroke="%s" stroke-width="2" points="%s"/>' % (c, " ".join("%.1f,%.1f" % p for p in pts)))
        out.append('<text x="%d" y="%d" fill="%s">%s</text>' % (w - right + 5, top + 30 + 16 * i, c, level))
    out.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ndp", default="build-gpu/cli/ndp")
    ap.add_argument("--baselines", default="build-gpu/bench/map_blocks")
    ap.add_argument("--out", default="bench/results/map_blocks")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--sweep-rounds", type=int, default=10, help="timed rounds of every level a length (at most 10)")
    ap.add_argument("--cusparse", default="build-gpu/bench/cusparse_spmv")
    ap.add_argument("--only", default="allpairs,fractal,matmul,spmv,segsum,segsort,radix")
    ap.add_argument("--lengths", default=",".join(str(l) for l in SEG_LENGTHS))
    ap.add_argument("--batch", type=int, default=10,
                    help="segsum and spmv: calls a timing makes back to back, on both sides (1: a call alone, its "
                         "launch and the wait for its end in its time)")
    a = ap.parse_args()
    only = a.only.split(",")
    work = tempfile.mkdtemp(prefix="ndp_map_blocks_")
    gpu = sh(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"], 30)[1].strip()
    result = {"date": datetime.date.today().isoformat(), "gpu": gpu, "rows": [], "sweep": []}
    lines = ["# Map blocks (issue 25) on %s, %s" % (gpu, result["date"]), "",
             "`python3 bench/run_gpu_map_blocks.py %s`" % " ".join(shlex.quote(x) for x in sys.argv[1:]), "",
             "| program | level | ndp median (min–max) ms | baseline | baseline ms | ratio | target | checksums |",
             "|---|---|---|---|---|---|---|---|"]
    failed = False

    def row(name, level, rec, base, base_name, ratio_text, target):
        nonlocal failed
        ok = agree(rec.get("checksum"), base.get("checksum"))
        failed = failed or "error" in rec or "error" in base or ok is False
        result["rows"].append({"program": name, "level": level, "ndp": rec, "baseline": base, "baseline_name": base_name,
                               "checksums_agree": ok})
        t = ("%.3f (%.3f–%.3f)" % (rec["median_ms"], rec["min_ms"], rec["max_ms"])) if "median_ms" in rec else rec.get("error", "?")
        b = "%.3f" % base["median_ms"] if "median_ms" in base else base.get("error", "?")
        lines.append("| %s | %s | %s | %s | %s | %s | %s | %s |" % (name, level, t, base_name, b, ratio_text, target,
                                                                   {True: "agree", False: "DIFFER", None: "—"}[ok]))
        print(lines[-1], flush=True)

    if "allpairs" in only:
        base = baseline(a.baselines, ["allpairs", 16384])
        for lv, name in ALLPAIRS_LEVELS.items():
            rec = ndp_row(a, work, "allpairs", {"bench_size": 16384}, lv)
            r = rec["median_ms"] / base["median_ms"] if "median_ms" in rec and "median_ms" in base else None
            row("allpairs 16384", name, rec, base, "CUDA, tiled in shared memory", "%.2f× its time" % r if r else "—", "≤ 2×")
    if "fractal" in only:
        base = baseline(a.baselines, ["fractal", 2000])
        rec = ndp_row(a, work, "fractal", {"bench_size": 2000})
        r = rec["median_ms"] / base["median_ms"] if "median_ms" in rec and "median_ms" in base else None
        row("fractal 2000²", "auto", rec, base, "CUDA, a thread a pixel", "%.2f× its time" % r if r else "—", "≤ 2×")
    if "matmul" in only:
        base = baseline(a.baselines, ["sgemm", 2048])
        rec = ndp_row(a, work, "matmul", {"bench_size": 2048})
        r = base["median_ms"] / rec["median_ms"] if "median_ms" in rec and "median_ms" in base else None
        row("matmul 2048² f32", "auto", rec, base, "cuBLAS SGEMM", "%.3f× its speed" % r if r else "—", "≥ 0.2×")
    if "spmv" in only:
        cus = run_cusparse(a.cusparse, 1, 64, a.runs, a.batch)
        for lv, name in SPMV_LEVELS.items():
            rec = ndp_row(a, work, "spmv", {"bench_size": SPMV_ROWS, "bench_shape": 1, "bench_columns": 64,
                                            "bench_batch": a.batch}, lv)
            r = cus["median_ms"] / rec["median_ms"] if "median_ms" in rec and "median_ms" in cus else None
            row("spmv 2^20 rows, 8–24 a row", name, rec, cus, "cuSPARSE CSR, 64-bit indices",
                "%.2f× its speed" % r if r else "—", "≥ 0.9×")
    if "segsort" in only:
        count, length = SEGSORT
        base = baseline(a.baselines, ["segsort", count, length])
        rec = ndp_row(a, work, "segsort", {"bench_count": count, "bench_length": length})
        r = base["median_ms"] / rec["median_ms"] if "median_ms" in rec and "median_ms" in base else None
        row("{sort(s) : s in segs}, 2^16 segments of 2^8 ints", "auto", rec, base, "CUB DeviceSegmentedSort, 64-bit keys",
            "%.2f× its speed" % r if r else "—", "≥ 1×")
    if "radix" in only:
        base = baseline(a.baselines, ["radixsort", RADIX_KEYS])
        rec = ndp_row(a, work, "radix_blocks", {"bench_size": RADIX_KEYS})
        r = rec["median_ms"] / base["median_ms"] if "median_ms" in rec and "median_ms" in base else None
        row("per-block counting sort with `rep`, 10^6 keys", "auto", rec, base, "CUB DeviceRadixSort, 64-bit keys, 32 bits",
            "%.1f× its time" % r if r else "—", "≤ 5×")
    if "segsum" in only:
        copy = baseline(a.baselines, ["copy", SEG_INTS, "--batch", a.batch])
        copy_gbs = 16.0 * SEG_INTS / (copy["median_ms"] * 1e6) if "median_ms" in copy else None
        result["copy"] = copy
        lines += ["", "Segmented sum of 2^24 ints: GB/s = the bytes read and written (8 an int, 8 a segment's sum) over the "
                  "median time of a call in %d rounds, in each of which every level runs once, %d calls back to back; the "
                  "copy (%s GB/s, %d copies back to back) moves 16 bytes an int. In parentheses: a level with more "
                  "than twice the segment's length in lanes, shown but not counted as a version." % (a.sweep_rounds,
                  a.batch, "%.0f" % copy_gbs if copy_gbs else "?", a.batch), "",
                  "| length | " + " | ".join(list(SEGSUM_LEVELS.values()) + ["CUB"]) +
                  " | best level | auto / best | auto / copy |",
                  "|---" * (len(SEGSUM_LEVELS) + 5) + "|"]
        levels_in_order = list(SEGSUM_LEVELS.values())
        for L in [int(x) for x in a.lengths.split(",")]:
            moved = 8.0 * SEG_INTS + 8.0 * (SEG_INTS // L)  # the ints read, the sums written
            cub = baseline(a.baselines, ["segsum", SEG_INTS, L, "--batch", a.batch])
            # One process a length: every level in turn each round (segsum.ndp's bench_loop).
            path = program("segsum", {"bench_size": SEG_INTS, "bench_length": L, "bench_runs": a.sweep_rounds + 1,
                                      "bench_batch": a.batch}, work)
            rec = run_ndp(a.ndp, path, 600)
            ok = agree(rec.get("checksum"), cub.get("checksum"))
            failed = failed or "error" in rec or ok is False
            cells, gbs = [], {}
            for li, name in enumerate(levels_in_order):
                times = rec.get("all_s", [])[li::len(levels_in_order)][1:]  # round 0 is a warm-up
                if not times:
                    cells.append(rec.get("error", "?")[:40])
                    continue
                med = sorted(times)[len(times) // 2]
                g = moved / (med * 1e9)
                gbs[name] = g
                result["sweep"].append({"length": L, "level": name, "median_ms": 1e3 * med, "min_ms": 1e3 * min(times),
                                        "gbs": g, "checksums_agree": ok, "command": rec.get("command")})
                idle = SEGSUM_LANES.get(name, 1) > max(2 * L, 1)  # most of its lanes idle: shown, not a candidate
                cells.append(("(%.0f)" if idle else "%.0f") % g + ("" if ok is not False else " DIFFER"))
                if idle:
                    del gbs[name]
            cg = moved / (cub["median_ms"] * 1e6) if "median_ms" in cub else None
            result["sweep"].append({"length": L, "level": "CUB", "baseline": cub, "gbs": cg})
            cells.append("%.0f" % cg if cg else cub.get("error", "?")[:40])
            levels = {k: v for k, v in gbs.items() if v and k != "auto"}
            best = max(levels, key=levels.get) if levels else None
            auto = gbs.get("auto")
            lines.append("| %d | %s | %s | %s | %s |" % (L, " | ".join(cells), best or "—",
                                                          "%.2f" % (auto / levels[best]) if best and auto else "—",
                                                          "%.2f" % (auto / copy_gbs) if auto and copy_gbs else "—"))
            print(lines[-1], flush=True)
        svg_sweep([r for r in result["sweep"] if r.get("gbs")], copy_gbs, a.out + "_sweep.svg")
    os.makedirs(os.path.dirname(a.out) or ".", exist_ok=True)
    with open(a.out + ".json", "w") as f:
        json.dump(result, f, indent=1)
    with open(a.out + ".md", "w") as f:
        f.write("\n".join(lines) + "\n")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
