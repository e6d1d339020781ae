#!/usr/bin/env python3
"""Issue 6: ndp's GPU primitives against CUB and Thrust, in the same run on the same GPU.

Runs bench/gpu/primitives_bench.cpp (ndp), bench/baselines/gpu/cub_bench.cu (CUB and
cudaMemcpy) and bench/baselines/gpu/thrust_bench.cu (Thrust; skipped, with a note, where that
binary is missing), joins their JSON lines by (benchmark, segment length), and writes
bench/results/gpu.json (every row, raw) and bench/results/gpu.md (the table against issue 6's
targets). Plain python3, no packages: it runs on the GPU machine.

    python3 bench/run_gpu.py [NDP_BENCH] [CUB_BENCH] [THRUST_BENCH] [--log2 28] [--sort-log2 26] [--reps 10] [--out bench/results/gpu]

Every time is the median of --reps runs after a warm-up; the table gives ndp's spread (the
fastest and slowest run) beside it. ratio = CUB time / ndp time (above 1: ndp is faster); the
targets are against CUB, Thrust's column is for reference. % copy = ndp's bandwidth (the bytes the
row counts, read + written, descriptor included) / the device-to-device copy's, measured by the
ndp binary in the same process (cuMemcpyDtoDAsync of 2^log2 f32). Exit status 1 if a result was
wrong or a binary failed.
"""
import argparse
import datetime
import json
import os
import shlex
import subprocess
import sys

SEG_LENS = [1, 4, 32, 1024, 32768, 1 << 20]

# (bench, target kind, threshold, description); kinds: ratio (CUB time / ndp time),
# seg_reduce (both % copy and ratio), None (informational).
ROWS = (
    [("scan_f32", "ratio", 0.95, "≥ 0.95× CUB DeviceScan::InclusiveSum"),
     ("scan_i64", "ratio", 0.95, "≥ 0.95× CUB DeviceScan::InclusiveSum"),
     ("reduce_f32", "ratio", 0.95, "≥ 0.95× CUB DeviceReduce::Sum")]
    + [("seg_reduce_f32", "seg_reduce", 0.8, "≥ 80% copy bw and ≥ 1× CUB DeviceSegmentedReduce::Sum")]
    + [("seg_reduce_f32_regular", None, None, "(regular descriptor; vs CUB with offsets)")]
    + [("seg_scan_f32", "ratio", 1.0, "≥ 1× CUB DeviceScan::InclusiveSumByKey")]
    + [("seg_scan_f32_regular", None, None, "(regular descriptor; vs CUB by key)")]
    + [("pack_f32", "ratio", 0.9, "≥ 0.9× CUB DeviceSelect::Flagged"),
       ("pack_data_f32", None, None, "(pack alone, count known; vs CUB Flagged)"),
       ("sort_u32", "ratio", 0.8, "≥ 0.8× CUB DeviceRadixSort::SortKeys"),
       ("sort_f32", "ratio", 0.8, "≥ 0.8× CUB DeviceRadixSort::SortKeys")])
SEGMENTED = {"seg_reduce_f32", "seg_reduce_f32_regular", "seg_scan_f32", "seg_scan_f32_regular"}
# Informational rows compare with the CUB row of this name.
CUB_ROW = {"seg_reduce_f32_regular": "seg_reduce_f32", "seg_scan_f32_regular": "seg_scan_f32",
           "pack_data_f32": "pack_f32"}


def run(cmd):
    """Runs a benchmark binary, echoing its lines as they come (its stderr goes straight
    through); returns (rows, return code)."""
    print("+ " + " ".join(shlex.quote(c) for c in cmd), file=sys.stderr, flush=True)
    try:
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
    except OSError as e:
        print("cannot run %s: %s" % (cmd[0], e), file=sys.stderr)
        return [], 127
    rows = []
    for line in p.stdout:
        sys.stderr.write(line)
        sys.stderr.flush()
        line = line.strip()
        if line.startswith("{"):
            try:
                rows.append(json.loads(line))
            except ValueError:
                print("unparsable line: " + line, file=sys.stderr)
    return rows, p.wait()


def gpu_name():
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,memory.total", "--format=csv,noheader"],
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, timeout=30).stdout.strip()
        if out:
            first = out.splitlines()[0].split(", ")
            return "%s (driver %s, %s)" % (first[0], first[1], first[2]) if len(first) >= 3 else out.splitlines()[0]
    except (OSError, subprocess.SubprocessError):
        pass
    return None


def fmt_ms(x):
    return "—" if x is None else ("%.3f" % x if x < 100 else "%.1f" % x)


def fmt_len(l):
    if l is None:
        return ""
    if l >= 1024 and l & (l - 1) == 0:
        return "2^%d" % (l.bit_length() - 1)
    return str(l)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("ndp_bench", nargs="?", default="build-gpu/bench/gpu_primitives_bench")
    ap.add_argument("cub_bench", nargs="?", default="build-gpu/bench/cub_bench")
    ap.add_argument("thrust_bench", nargs="?", default="build-gpu/bench/thrust_bench")
    ap.add_argument("--log2", type=int, default=28, help="elements = 2^LOG2 (default 28)")
    ap.add_argument("--sort-log2", type=int, default=None, help="sort size (default LOG2 - 2)")
    ap.add_argument("--reps", type=int, default=10, help="timed runs per row, median taken (default 10)")
    ap.add_argument("--only", default=None, help="comma-separated benchmark names")
    ap.add_argument("--out", default="bench/results/gpu", help="output prefix (.json and .md; default bench/results/gpu)")
    a = ap.parse_args()
    sort_log2 = a.sort_log2 if a.sort_log2 is not None else max(1, a.log2 - 2)
    extra = ["--log2", str(a.log2), "--sort-log2", str(sort_log2), "--reps", str(a.reps)]
    if a.only:
        extra += ["--only", a.only]

    problems = []
    ndp_rows, ndp_rc = run([a.ndp_bench] + extra)
    if ndp_rc != 0:
        problems.append("%s exited with %d%s" % (a.ndp_bench, ndp_rc, " (wrong results)" if ndp_rc == 1 else ""))
    cub_rows, cub_rc = run([a.cub_bench] + extra)
    if cub_rc != 0:
        problems.append("%s exited with %d" % (a.cub_bench, cub_rc))
    thrust_rows, thrust_note = [], None
    if os.path.exists(a.thrust_bench):
        thrust_rows, thrust_rc = run([a.thrust_bench] + extra)
        if thrust_rc != 0:
            problems.append("%s exited with %d" % (a.thrust_bench, thrust_rc))
    else:
        thrust_note = "Thrust not run: %s is missing (tools/gpu-build.sh bench/thrust_bench builds it)." % a.thrust_bench
    for r in ndp_rows:
        if r.get("ok") is False:
            problems.append("WRONG RESULT from ndp: %s%s (details on the benchmark's stderr)" % (
                r["bench"], "" if r.get("seg_len") is None else " at segment length %d" % r["seg_len"]))

    def key(r):
        return (r["bench"], r.get("seg_len"))
    ndp = {key(r): r for r in ndp_rows if r.get("impl") == "ndp"}
    cub = {key(r): r for r in cub_rows if r.get("impl") == "cub"}
    thrust = {key(r): r for r in thrust_rows if r.get("impl") == "thrust"}
    copies = [r for r in ndp_rows + cub_rows if r.get("impl") == "copy"]
    anchor = next((r for r in ndp_rows if r.get("impl") == "copy"), None) or (copies[0] if copies else None)
    copy_gbps = anchor["gbps"] if anchor else None

    table = []
    for bench, kind, thr, desc in ROWS:
        for L in (SEG_LENS if bench in SEGMENTED else [None]):
            n = ndp.get((bench, L))
            c = cub.get((CUB_ROW.get(bench, bench), L))
            th = thrust.get((CUB_ROW.get(bench, bench), L))
            if n is None and (c is None or bench in CUB_ROW):
                continue
            ratio = c["ms"] / n["ms"] if n and c and n["ms"] > 0 else None
            pct = 100.0 * n["gbps"] / copy_gbps if n and copy_gbps else None
            met = None
            if kind == "ratio" and ratio is not None:
                met = ratio >= thr
            elif kind == "seg_reduce" and ratio is not None and pct is not None:
                met = pct >= 100 * thr and ratio >= 1.0
            if n is not None and n.get("ok") is False:
                met = False
            table.append({
                "bench": bench, "seg_len": L, "elements": (n or c)["elements"],
                "ndp_ms": n["ms"] if n else None, "cub_ms": c["ms"] if c else None,
                "ndp_min_ms": n.get("min_ms") if n else None, "ndp_max_ms": n.get("max_ms") if n else None,
                "cub_min_ms": c.get("min_ms") if c else None, "cub_max_ms": c.get("max_ms") if c else None,
                "thrust_ms": th["ms"] if th else None,
                "thrust_ratio": th["ms"] / n["ms"] if n and th and n["ms"] > 0 else None,
                "ndp_gbps": n["gbps"] if n else None, "cub_gbps": c["gbps"] if c else None,
                "ndp_bytes": n["bytes"] if n else None, "cub_bytes": c["bytes"] if c else None,
                "ratio": ratio, "pct_copy": pct, "target": desc if kind else None, "met": met,
                "ok": n.get("ok") if n else None, "note": (n or {}).get("note"),
            })

    gpu = gpu_name() or "unknown (nvidia-smi unavailable)"
    when = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    command = "python3 " + " ".join(shlex.quote(x) for x in sys.argv)
    result = {"command": command, "gpu": gpu, "date": when, "log2": a.log2, "sort_log2": sort_log2, "reps": a.reps,
              "copy_anchor": anchor, "copies": copies, "problems": problems, "table": table,
              "ndp_rows": ndp_rows, "cub_rows": cub_rows, "thrust_rows": thrust_rows}
    os.makedirs(os.path.dirname(a.out) or ".", exist_ok=True)
    with open(a.out + ".json", "w") as f:
        json.dump(result, f, indent=1)
        f.write("\n")

    md = ["# GPU primitives vs CUB (issue 6)", "",
          "- GPU: %s" % gpu, "- date: %s" % when, "- command: `%s`" % command,
          "- sizes: 2^%d elements (sort: 2^%d), median of %d runs after a warm-up, each timed on the GPU "
          "between two CUDA events (every side; ndp's on its own stream, so that host work inside an ndp call "
          "that leaves the GPU idle counts)" % (a.log2, sort_log2, a.reps)]
    for cp in copies:
        md.append("- device copy (%s, %d f32): %.3f ms, %.1f GB/s%s" % (
            cp.get("via", "?"), cp["elements"], cp["ms"], cp["gbps"], " ← the % copy anchor" if cp is anchor else ""))
    md += ["",
           "ratio = CUB ms / ndp ms (above 1: ndp faster); vs Thrust = Thrust ms / ndp ms. ndp's spread is its "
           "fastest and slowest of the runs. % copy = ndp's bandwidth (every byte read or written, "
           "the int64 offsets of the segment descriptor included) / the device copy's.", "",
           "| benchmark | seg len | ndp ms (min–max) | CUB ms | ratio | Thrust ms | vs Thrust | % of copy bw | target | met? |",
           "|---|---|---|---|---|---|---|---|---|---|"]
    for r in table:
        met = "—" if r["met"] is None else ("yes" if r["met"] else "**no**")
        if r["ok"] is False:
            met = "**WRONG RESULT**"
        spread = "" if r["ndp_min_ms"] is None else " (%s–%s)" % (fmt_ms(r["ndp_min_ms"]), fmt_ms(r["ndp_max_ms"]))
        md.append("| %s | %s | %s%s | %s | %s | %s | %s | %s | %s | %s |" % (
            r["bench"], fmt_len(r["seg_len"]), fmt_ms(r["ndp_ms"]), spread, fmt_ms(r["cub_ms"]),
            "—" if r["ratio"] is None else "%.2f" % r["ratio"], fmt_ms(r["thrust_ms"]),
            "—" if r["thrust_ratio"] is None else "%.2f" % r["thrust_ratio"],
            "—" if r["pct_copy"] is None else "%.0f%%" % r["pct_copy"], r["target"] or "", met))
    md += ["", "Notes:", "",
           "- f32 inputs are random small integers (-8..8), so every sum is exact and ndp's results are checked bit "
           "for bit against the host (all elements); i64 inputs are random 64-bit values (wrapping sums).",
           "- seg_* rows: ndp uses the irregular descriptor (count + 1 int64 offsets on the device); CUB's segmented "
           "reduce reads the same offsets, its scan-by-key an int32 segment key per element (counted in its bytes). "
           "The *_regular rows are ndp with the regular descriptor (no array), against the same CUB rows.",
           "- pack_f32: ndp's pack_counted, into room for every element, counting as it packs and reading the "
           "count back to the host inside the timing (what a flat PACK with no known count does); CUB's "
           "DeviceSelect::Flagged writes the count to the device; pack_data_f32 is ndp's pack with the count known. "
           "50% of flags true.",
           "- sort_u32: ndp sorts i32, not u32: both sides sort the same keys, non-negative (31 random bits); CUB "
           "sorts them as u32 over all 32 bits. Sorts are checked for order and for being a permutation of the input.",
           "- ndp's scratch space comes from its stream-ordered pool inside each call, except the look-back records "
           "of scans and selections, which are kept from call to call (Note [Look-back epochs] in "
           "`runtime/gpu/device/tile/look_back_records.cuh`); CUB's temporary storage is allocated once outside the timing. Thrust is called as a program would call it: its temporary storage "
           "is allocated inside each call, reduce returns its sum to the host, the segmented rows go by an int32 "
           "key per element (reduce_by_key also writes each segment's key), pack is copy_if with the flags as "
           "stencil, and each sort sorts a fresh copy of the keys, made before the timing."]
    if thrust_note:
        md.append("- " + thrust_note)
    if problems:
        md += ["", "Problems:", ""] + ["- " + p for p in problems]
    with open(a.out + ".md", "w") as f:
        f.write("\n".join(md) + "\n")
    print("wrote %s.json and %s.md" % (a.out, a.out), file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
