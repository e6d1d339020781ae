#!/usr/bin/env bash
# Session 51's closing call: GPU unit tests; the cuda suite as it runs by default and with launch
# batches (NDP_LAUNCH_BATCH=16); the counting sort against CUB in three processes of 20 timed runs
# each (launches alone, the default), then one with batches; the counting sort at 1000 keys, both
# ways; the recursion rows. Returns $OUT/f.tgz.
export LD_LIBRARY_PATH=$PWD/build-gpu/lib:/usr/local/cuda/lib64 NDP_CACHE_DIR=/tmp/c1
R=$OUT/f; mkdir -p $R
NDP=build-gpu/cli/ndp
nvidia-smi --query-gpu=name,driver_version --format=csv > $R/gpu.txt
for t in unit_runtime_gpu unit_runtime_cuda; do
  build-gpu/tests/$t > $R/$t.txt 2>&1; echo "$t rc=$?" | tee -a $R/$t.txt; tail -3 $R/$t.txt | head -2
done
NDP_JIT_FALLBACK=error timeout 200 $NDP test tests examples --backend=cuda > $R/suite.txt 2>&1
echo "suite rc=$?" >> $R/suite.txt; tail -2 $R/suite.txt; grep "^FAIL" $R/suite.txt | head -5
NDP_LAUNCH_BATCH=16 NDP_JIT_FALLBACK=error timeout 200 $NDP test tests examples --backend=cuda > $R/suite_batched.txt 2>&1
echo "suite batched rc=$?" >> $R/suite_batched.txt; tail -2 $R/suite_batched.txt; grep "^FAIL" $R/suite_batched.txt | head -5
for round in 1 2 3 b; do
  if [ $round = b ]; then export NDP_LAUNCH_BATCH=16; fi
  python3 bench/run_gpu_map_blocks.py --ndp $NDP --baselines build-gpu/bench/map_blocks --out $R/mb$round --only radix --runs 20 > $R/mb$round.log 2>&1
  echo "round $round: $(grep -h per-block $R/mb$round.log)"
done
unset NDP_LAUNCH_BATCH
sed -e 's/^bench_size = .*/bench_size = 1000 $/' -e 's/^bench_runs = .*/bench_runs = 30 $/' bench/programs/radix_blocks.ndp > /tmp/s.ndp
for b in 1 16; do
  NDP_LAUNCH_BATCH=$b $NDP run /tmp/s.ndp --backend=cuda 2>&1 | tr -d '\n' | python3 -c "
import sys,re,statistics; s=sys.stdin.read(); m=re.search(r'\[([0-9eE.,\s+-]*)\]\)', s); xs=[float(x) for x in m.group(1).split(',')][5:]
print('1000 keys, NDP_LAUNCH_BATCH=$b: median of runs 6-30 %.3f ms, min %.3f' % (1000*statistics.median(xs), 1000*min(xs)))" | tee -a $R/small.txt
done
timeout 150 python3 bench/run_gpu_recursion.py --runs 5 --only qsort,batcher,quickhull --out $R/rec > /dev/null 2>&1; grep -h "| cuda |" $R/rec.md
cd $OUT && tar czf f.tgz f && rm -rf f
