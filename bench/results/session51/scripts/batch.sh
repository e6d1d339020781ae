#!/usr/bin/env bash
# Session 51: launch batches (Note [Launch batches]). GPU unit tests, the cuda suite, then the
# counting sort against CUB with batches of at most 16 (the default), 8, and none
# (NDP_LAUNCH_BATCH=1), alternating in one call; sizes 1000 and 10^6; with REC=1 the recursion
# rows, batched and not. Returns $OUT/b.tgz.
export LD_LIBRARY_PATH=$PWD/build-gpu/lib:/usr/local/cuda/lib64 NDP_CACHE_DIR=/tmp/c1
R=$OUT/b; mkdir -p $R
NDP=build-gpu/cli/ndp
nvidia-smi --query-gpu=name,driver_version --format=csv > $R/gpu.txt
for t in unit_runtime_gpu unit_runtime_cuda; do
  build-gpu/tests/$t > $R/$t.txt 2>&1; echo "$t rc=$?" | tee -a $R/$t.txt
  grep -B2 -A6 "ERROR\|FAILED" $R/$t.txt | head -30; grep "graphs built" $R/$t.txt
done
if [ -z "$NOSUITE" ]; then
NDP_JIT_FALLBACK=error timeout 300 $NDP test tests examples --backend=cuda > $R/suite.txt 2>&1
echo "suite rc=$?" >> $R/suite.txt; tail -2 $R/suite.txt; grep "^FAIL" $R/suite.txt | head -5
fi
for round in 1 2; do
  for b in ${BATCHES:-16 1 8}; do
    NDP_LAUNCH_BATCH=$b python3 bench/run_gpu_map_blocks.py --ndp $NDP --baselines build-gpu/bench/map_blocks --out $R/mb_${b}_$round --only radix --runs ${RUNS:-5} > $R/mb_${b}_$round.log 2>&1
    echo "batch $b: $(grep -h per-block $R/mb_${b}_$round.log)"
  done
done
mk() { sed -e "s/^bench_size = .*/bench_size = $1 \$/" -e "s/^bench_runs = .*/bench_runs = $2 \$/" bench/programs/radix_blocks.ndp > $3; }
for b in 16 1; do for n in 1000 1000000; do
  mk $n 30 /tmp/rx$n.ndp; echo "size $n batch $b" >> $R/sizes.txt
  NDP_LAUNCH_BATCH=$b timeout 60 $NDP run /tmp/rx$n.ndp --backend=cuda 2>&1 | grep -v "^ *\[\|^bench_input" >> $R/sizes.txt
done; done
python3 - $R/sizes.txt <<'PY' | tee $R/sizes_summary.txt
import sys, re, statistics
size = None; buf = ''
for line in open(sys.argv[1]):
    if line.startswith('size'): size = line.strip(); buf = ''; continue
    buf += line
    m = re.search(r'\[([0-9eE.,\s+-]*)\]\)', buf)
    if m and size:
        xs = [float(x) for x in m.group(1).replace('\n', ' ').split(',') if x.strip()][1:]
        print(size, 'median ms %.3f min %.3f' % (1000*statistics.median(xs), 1000*min(xs))); size = None
PY
mk 1000000 3 /tmp/rx.ndp
NDP_PROFILE=trace timeout 60 $NDP run /tmp/rx.ndp --backend=cuda > $R/trace.txt 2>&1; gzip $R/trace.txt
mk 1000000 100 /tmp/h.ndp
NDP_PROFILE=host timeout 100 $NDP run /tmp/h.ndp --backend=cuda > /dev/null 2> $R/profile_host_1e6.txt
grep -A40 "driver calls" $R/profile_host_1e6.txt | grep "cuGraph\|cuLaunch\|cuStreamSync"
if [ -n "$REC" ]; then for b in 16 1; do
  NDP_LAUNCH_BATCH=$b timeout 200 python3 bench/run_gpu_recursion.py --runs 5 --only qsort,batcher,quickhull --out $R/rec_$b > /dev/null 2>&1
  echo "batch $b"; grep -h "| cuda |" $R/rec_$b.md
done; fi
cd $OUT && tar czf b.tgz b && rm -rf b
