#!/usr/bin/env bash
# Session 52: counted histograms (Note [Counted histograms]) with the launch thread. GPU unit
# tests; the cuda suite; the counting sort against CUB in three processes (20 timed runs each)
# and one without the launch thread; the recursion rows with and without the thread; Nsight
# Compute's warm pass. Returns $OUT/c.tgz.
export LD_LIBRARY_PATH=$PWD/build-gpu/lib:/usr/local/cuda/lib64 NDP_CACHE_DIR=/tmp/c1
R=$OUT/c; mkdir -p $R
NDP=build-gpu/cli/ndp
nvidia-smi --query-gpu=name,driver_version --format=csv > $R/gpu.txt
for t in unit_runtime_gpu unit_runtime_cuda; do
  build-gpu/tests/$t > $R/$t.txt 2>&1; echo "$t rc=$?" | tee -a $R/$t.txt
  grep -B3 -A8 "ERROR\|FAILED" $R/$t.txt | head -30
done
NDP_JIT_FALLBACK=error timeout 300 $NDP test tests examples --backend=cuda > $R/suite.txt 2>&1
echo "suite rc=$?" >> $R/suite.txt; tail -2 $R/suite.txt; grep "^FAIL" $R/suite.txt | head -5
for round in 1 2 3 off; do
  if [ $round = off ]; then export NDP_LAUNCH_THREAD=0; fi
  python3 bench/run_gpu_map_blocks.py --ndp $NDP --baselines build-gpu/bench/map_blocks --out $R/mb$round --only radix --runs 20 > $R/mb$round.log 2>&1
  echo "round $round: $(grep -h per-block $R/mb$round.log)"
done
unset NDP_LAUNCH_THREAD
for t in 1 0; do
  NDP_LAUNCH_THREAD=$t timeout 150 python3 bench/run_gpu_recursion.py --runs 5 --only qsort,batcher,quickhull --out $R/rec$t > /dev/null 2>&1
  echo "NDP_LAUNCH_THREAD=$t"; grep -h "| cuda |" $R/rec$t.md
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
cd $OUT && tar czf c.tgz c && rm -rf c
