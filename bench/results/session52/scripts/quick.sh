#!/usr/bin/env bash
# Session 52: a quick look at one change: the multiprefix loop tests on cuda, two counting-sort
# rounds against CUB, and Nsight Compute's warm pass. Returns $OUT/q.tgz.
export LD_LIBRARY_PATH=$PWD/build-gpu/lib:/usr/local/cuda/lib64 NDP_CACHE_DIR=/tmp/c1
R=$OUT/q; mkdir -p $R
NDP=build-gpu/cli/ndp
NDP_JIT_FALLBACK=error $NDP test tests/programs/language --backend=cuda 2>&1 | tail -3
for round in 1 2; do
  python3 bench/run_gpu_map_blocks.py --ndp $NDP --baselines build-gpu/bench/map_blocks --out $R/mb$round --only radix --runs 20 > $R/mb$round.log 2>&1
  echo "round $round: $(grep -h per-block $R/mb$round.log)"
done
sed -e 's/^bench_size = .*/bench_size = 1000000 $/' -e 's/^bench_runs = .*/bench_runs = 1 $/' bench/programs/radix_blocks.ndp > /tmp/rx1.ndp
timeout 240 ncu --clock-control none --cache-control none --csv --metrics gpu__time_duration.sum $NDP run /tmp/rx1.ndp --backend=cuda > $R/ncu_warm.csv 2>&1
python3 - $R/ncu_warm.csv > $R/ncu_pass_warm.txt <<'PY'
import csv, sys
rows = [r for r in csv.reader(open(sys.argv[1])) if len(r) > 10 and r[0].isdigit()]
digits = [i for i, r in enumerate(rows) if r[4] == 'ndp_kernel' and r[8] == '(977, 1, 1)']
a, b = digits[2] - 2, digits[3] - 2
tot = 0
for r in rows[a:b]:
    t = float(r[-1].replace(',', '')) / 1000; tot += t
    print(f"{r[4][:32]:32} grid {r[8]:>14} {t:8.2f} us")
print(f"launches {b - a}, total {tot:.1f} us")
PY
cat $R/ncu_pass_warm.txt
cd $OUT && tar czf q.tgz q && rm -rf q
