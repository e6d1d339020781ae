#!/usr/bin/env bash
# Session 49: the GPU unit tests, the cuda program suite, the counting sort (3 rounds), a trace
# of its passes and Nsight Compute's kernel times of one sort. Returns $OUT/r.tgz only.
export LD_LIBRARY_PATH=$PWD/build-gpu/lib:/usr/local/cuda/lib64 NDP_CACHE_DIR=/tmp/c1
R=$OUT/r; mkdir -p $R
NDP=build-gpu/cli/ndp
nvidia-smi --query-gpu=name,driver_version --format=csv > $R/gpu.txt
build-gpu/tests/unit_runtime_gpu > $R/unit_runtime_gpu.txt 2>&1; echo "unit_runtime_gpu rc=$?" | tee -a $R/unit_runtime_gpu.txt
tail -3 $R/unit_runtime_gpu.txt
NDP_JIT_FALLBACK=error timeout 300 $NDP test tests examples --backend=cuda > $R/suite.txt 2>&1
echo "suite rc=$?" >> $R/suite.txt; tail -2 $R/suite.txt; grep "^FAIL" $R/suite.txt | head -5
for round in 1 2 3; do
python3 bench/run_gpu_map_blocks.py --ndp $NDP --baselines build-gpu/bench/map_blocks --out $R/mb$round --only radix --runs 5 > $R/mb$round.log 2>&1
done
grep -h "per-block" $R/mb1.log $R/mb2.log $R/mb3.log
sed -e 's/^bench_size = .*/bench_size = 1000000 $/' -e 's/^bench_runs = .*/bench_runs = 3 $/' bench/programs/radix_blocks.ndp > /tmp/rx.ndp
NDP_PROFILE=trace timeout 60 $NDP run /tmp/rx.ndp --backend=cuda > $R/trace.txt 2>&1
sed -e 's/^bench_size = .*/bench_size = 1000000 $/' -e 's/^bench_runs = .*/bench_runs = 1 $/' bench/programs/radix_blocks.ndp > /tmp/rx1.ndp
timeout 240 ncu --clock-control none --csv --metrics gpu__time_duration.sum $NDP run /tmp/rx1.ndp --backend=cuda > $R/ncu.csv 2>&1
python3 - $R/ncu.csv > $R/ncu_pass.txt <<'PY'
import csv, sys
rows = [r for r in csv.reader(open(sys.argv[1])) if len(r) > 10 and r[0].isdigit()]
# the second pass: from the second 977-block digit kernel's predecessor to the next one's
digits = [i for i, r in enumerate(rows) if r[4] == 'ndp_kernel' and r[8] == '(977, 1, 1)']
a, b = digits[2] - 2, digits[3] - 2
tot = 0
for r in rows[a:b]:
    t = float(r[-1].replace(',', '')) / 1000; tot += t
    print(f"{r[4][:32]:32} grid {r[8]:>14} {t:8.2f} us")
print(f"launches {b - a}, total {tot:.1f} us")
PY
tail -1 $R/ncu_pass.txt
timeout 150 python3 bench/run_gpu_recursion.py --runs 5 --only qsort,batcher,quickhull --out $R/rec > /dev/null 2>&1; grep -h "| cuda |" $R/rec.md
cd $OUT && tar czf r.tgz r && rm -rf r
