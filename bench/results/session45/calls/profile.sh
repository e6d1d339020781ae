#!/usr/bin/env bash
export LD_LIBRARY_PATH=$PWD/build-gpu/lib:/usr/local/cuda/lib64 NDP_CACHE_DIR=/tmp/c1
R=$OUT/r; mkdir -p $R
NDP=build-gpu/cli/ndp
NDP_DEBUG=1 NDP_JIT_FALLBACK=error timeout 300 $NDP test tests/programs/language/partition_levels.ndp --backend=cuda > $R/pt.txt 2>&1
tail -n 1 $R/pt.txt; grep -c "gave up" $R/pt.txt
sed -e 's/^bench_size = .*/bench_size = 16777216 $/' -e 's/^bench_runs = .*/bench_runs = 3 $/' bench/programs/qsort.ndp > /tmp/q24.ndp
sed -e 's/^bench_size = .*/bench_size = 16777216 $/' -e 's/^bench_runs = .*/bench_runs = 1 $/' bench/programs/qsort.ndp > /tmp/q24one.ndp
NDP_DEBUG=1 timeout 120 $NDP run /tmp/q24.ndp --backend=cuda 2>&1 | grep -E "^it =|gave up" | tail -n 4
timeout 300 /usr/local/cuda/bin/ncu --csv --kernel-name regex:ndp_pl --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum $NDP run /tmp/q24one.ndp --backend=cuda > $R/ncu.csv 2> $R/ncu.err
python3 - $R/ncu.csv > $R/ncu_summary.txt <<'PY'
import csv, sys, collections
rows = list(csv.reader(l for l in open(sys.argv[1]) if l.startswith('"')))
h = rows[0]; data = rows[1:]
ki = h.index("Kernel Name"); mi = h.index("Metric Name"); vi = h.index("Metric Value")
tot = collections.defaultdict(float); cnt = collections.defaultdict(int); seq = []
for r in data:
    if r[mi] == "gpu__time_duration.sum":
        v = float(r[vi].replace(",", "")); tot[r[ki]] += v; cnt[r[ki]] += 1; seq.append((r[ki], v))
for k in tot: print(k, cnt[k], "launches", tot[k] / 1e3, "us total")
for k, v in seq[:12]: print(k, v / 1e3)
PY
head -n 20 $R/ncu_summary.txt
cd $OUT && tar czf r.tgz r
