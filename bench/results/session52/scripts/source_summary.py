"""Summarises `ncu --page source --csv --print-source sass` output: per kernel, the warp-stall
samples by how often each instruction ran (a loop's body shows as one count), and the
instructions with the most samples.  python3 source_summary.py source.csv"""
import csv, sys
from collections import defaultdict

kernels, cur = [], None
for line in open(sys.argv[1]).read().split('\n'):
    if line.startswith('"Kernel Name"'):
        cur = []
        kernels.append(cur)
    elif cur is not None:
        cur.append(line)
for number, lines in enumerate(kernels):
    rows = list(csv.reader(lines))
    header = rows[0]
    samples, runs = header.index('Warp Stall Sampling (All Samples)'), header.index('Instructions Executed')
    rows = [r for r in rows[1:] if len(r) > runs]
    total = sum(int(r[samples] or 0) for r in rows)
    print(f"kernel {number}: {total} samples, {sum(int(r[runs] or 0) for r in rows)} warp instructions")
    groups = defaultdict(lambda: [0, 0])
    for r in rows:
        g = groups[int(r[runs] or 0)]
        g[0] += int(r[samples] or 0)
        g[1] += 1
    for count, (s, n) in sorted(groups.items(), key=lambda x: -x[1][0])[:6]:
        print(f"  run {count:>7} times: {n:4} instructions, {s:5} samples ({100 * s / max(total, 1):.0f}%)")
    for r in sorted(rows, key=lambda r: -int(r[samples] or 0))[:8]:
        print(f"  {int(r[samples] or 0):5} samples, run {r[runs]:>7}: {r[1].strip()[:70]}")
