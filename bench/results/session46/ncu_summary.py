"""Sums Nsight Compute's `--csv --metrics gpu__time_duration.sum` output by kernel, then lists every
launch's time in order (µs): python3 ncu_summary.py ncu.csv"""
import collections
import csv
import sys

rows = list(csv.reader(l for l in open(sys.argv[1]) if l.startswith('"')))
h, data = rows[0], rows[1:]
ki, mi, vi = h.index("Kernel Name"), h.index("Metric Name"), h.index("Metric Value")
total, count, launches = collections.defaultdict(float), collections.defaultdict(int), []
for r in data:
    if r[mi] == "gpu__time_duration.sum":
        v = float(r[vi].replace(",", ""))
        total[r[ki]] += v
        count[r[ki]] += 1
        launches.append((r[ki], v))
for k in total:
    print(k, count[k], "launches", total[k] / 1e3, "us total")
for k, v in launches:
    print(k, v / 1e3)
