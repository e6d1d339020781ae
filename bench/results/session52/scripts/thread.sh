#!/usr/bin/env bash
# Session 52: the launch thread (Note [The launch thread]). GPU unit tests; the cuda suite with the
# thread (the default); the counting sort against CUB, processes alternating with the thread and
# without (NDP_LAUNCH_THREAD=0); 1000 keys both ways; the recursion rows both ways. Returns
# $OUT/t.tgz.
export LD_LIBRARY_PATH=$PWD/build-gpu/lib:/usr/local/cuda/lib64 NDP_CACHE_DIR=/tmp/c1
R=$OUT/t; mkdir -p $R
NDP=build-gpu/cli/ndp
nvidia-smi --query-gpu=name,driver_version --format=csv > $R/gpu.txt
for t in unit_runtime_gpu unit_runtime_cuda; do
  build-gpu/tests/$t > $R/$t.txt 2>&1; echo "$t rc=$?" | tee -a $R/$t.txt
  grep -B3 -A8 "ERROR\|FAILED" $R/$t.txt | head -40; tail -2 $R/$t.txt | head -1
done
if [ "${SUITE:-1}" = 1 ]; then
  NDP_JIT_FALLBACK=error timeout 300 $NDP test tests examples --backend=cuda > $R/suite.txt 2>&1
  echo "suite rc=$?" >> $R/suite.txt; tail -2 $R/suite.txt; grep "^FAIL" $R/suite.txt | head -5
fi
for round in on1 off1 on2 off2 on3; do
  case $round in off*) export NDP_LAUNCH_THREAD=0;; *) unset NDP_LAUNCH_THREAD;; esac
  python3 bench/run_gpu_map_blocks.py --ndp $NDP --baselines build-gpu/bench/map_blocks --out $R/mb_$round --only radix --runs 20 > $R/mb_$round.log 2>&1
  echo "round $round: $(grep -h per-block $R/mb_$round.log)"
done
unset NDP_LAUNCH_THREAD
sed -e 's/^bench_size = .*/bench_size = 1000 $/' -e 's/^bench_runs = .*/bench_runs = 30 $/' bench/programs/radix_blocks.ndp > /tmp/s.ndp
for t in 1 0; do
  NDP_LAUNCH_THREAD=$t $NDP run /tmp/s.ndp --backend=cuda 2>&1 | tr -d '\n' | python3 -c "
import sys,re,statistics; s=sys.stdin.read(); m=re.search(r'\[([0-9eE.,\s+-]*)\]\)', s); xs=[float(x) for x in m.group(1).split(',')][5:]
print('1000 keys, NDP_LAUNCH_THREAD=$t: median of runs 6-30 %.3f ms, min %.3f' % (1000*statistics.median(xs), 1000*min(xs)))" | tee -a $R/small.txt
done
if [ "${REC:-1}" = 1 ]; then
  for t in 1 0; do
    NDP_LAUNCH_THREAD=$t timeout 150 python3 bench/run_gpu_recursion.py --runs 5 --only qsort,batcher,quickhull --out $R/rec$t > /dev/null 2>&1
    echo "NDP_LAUNCH_THREAD=$t"; grep -h "| cuda |" $R/rec$t.md
  done
fi
sed -e 's/^bench_size = .*/bench_size = 1000000 $/' -e 's/^bench_runs = .*/bench_runs = 30 $/' bench/programs/radix_blocks.ndp > /tmp/rxh.ndp
NDP_PROFILE=host timeout 60 $NDP run /tmp/rxh.ndp --backend=cuda > $R/profile_host.txt 2>&1
cd $OUT && tar czf t.tgz t && rm -rf t
