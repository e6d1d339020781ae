#!/usr/bin/env bash
# Session 50: GPU unit tests, the cuda suite, counting sort rounds (RUNS timed runs each; sizes
# 10^3 and 10^6 in one process, 30 runs), a trace, Nsight Compute's warm-cache pass, and with
# REC=1 the recursion rows. Returns $OUT/r.tgz only.
export LD_LIBRARY_PATH=$PWD/build-gpu/lib:/usr/local/cuda/lib64 NDP_CACHE_DIR=/tmp/c1
R=$OUT/r; mkdir -p $R
NDP=build-gpu/cli/ndp
nvidia-smi --query-gpu=name,driver_version --format=csv > $R/gpu.txt
build-gpu/tests/unit_runtime_gpu > $R/unit_runtime_gpu.txt 2>&1; echo "unit_runtime_gpu rc=$?" | tee -a $R/unit_runtime_gpu.txt
grep -A3 "ERROR\|FAILED" $R/unit_runtime_gpu.txt | head -20; tail -2 $R/unit_runtime_gpu.txt
NDP_JIT_FALLBACK=error timeout 300 $NDP test tests examples --backend=cuda > $R/suite.txt 2>&1
echo "suite rc=$?" >> $R/suite.txt; tail -2 $R/suite.txt; grep "^FAIL" $R/suite.txt | head -5
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,pstate --format=csv -lms 50 > $R/clocks.csv 2>&1 &
SMI=$!
for round in 1 2 3; do
python3 bench/run_gpu_map_blocks.py --ndp $NDP --baselines build-gpu/bench/map_blocks --out $R/mb$round --only radix --runs ${RUNS:-5} > $R/mb$round.log 2>&1
done
kill $SMI
grep -h "per-block" $R/mb*.log
for n in 1000 1000000; do
  sed -e "s/^bench_size = .*/bench_size = $n \$/" -e 's/^bench_runs = .*/bench_runs = 30 $/' bench/programs/radix_blocks.ndp > /tmp/rx$n.ndp
  echo "size $n" >> $R/sizes.txt
  timeout 60 $NDP run /tmp/rx$n.ndp --backend=cuda 2>&1 | grep -v "^ *\[\|^bench_input" >> $R/sizes.txt
done
python3 - $R/sizes.txt <<'PY' | tee $R/sizes_summary.txt
import sys, re, statistics
size = None; buf = ''
for line in open(sys.argv[1]):
    if line.startswith('size'): size = line.split()[1]; buf = ''; continue
    buf += line
    m = re.search(r'\[([0-9eE.,\s+-]*)\]\)', buf)
    if m and size:
        xs = [float(x) for x in m.group(1).replace('\n', ' ').split(',') if x.strip()][1:]
        print(size, 'median ms %.3f min %.3f' % (1000*statistics.median(xs), 1000*min(xs))); size = None
PY
sed -e 's/^bench_size = .*/bench_size = 1000000 $/' -e 's/^bench_runs = .*/bench_runs = 3 $/' bench/programs/radix_blocks.ndp > /tmp/rx.ndp
NDP_PROFILE=trace timeout 60 $NDP run /tmp/rx.ndp --backend=cuda > $R/trace.txt 2>&1
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
if [ -n "$REC" ]; then timeout 150 python3 bench/run_gpu_recursion.py --runs 5 --only qsort,batcher,quickhull --out $R/rec > /dev/null 2>&1; grep -h "| cuda |" $R/rec.md; fi
cd $OUT && tar czf r.tgz r && rm -rf r
