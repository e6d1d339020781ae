#!/usr/bin/env bash
export LD_LIBRARY_PATH=$PWD/build-gpu/lib:/usr/local/cuda/lib64 NDP_CACHE_DIR=/tmp/c1
R=$OUT/r; mkdir -p $R
NDP=build-gpu/cli/ndp
for sw in 2048 4096 64; do
  NDP_PARTITION_SWITCH=$sw NDP_DEBUG=1 NDP_JIT_FALLBACK=error timeout 300 $NDP test tests/programs/language/partition_levels.ndp --backend=cuda > $R/pt$sw.txt 2>&1
  echo "switch $sw: $(tail -n 1 $R/pt$sw.txt), gave up $(grep -c 'gave up' $R/pt$sw.txt)"
done
NDP_JIT_FALLBACK=error timeout 300 $NDP test examples --backend=cuda > $R/ex.txt 2>&1; tail -n 1 $R/ex.txt
sed -e 's/^bench_size = .*/bench_size = 16777216 $/' -e 's/^bench_runs = .*/bench_runs = 5 $/' bench/programs/qsort.ndp > /tmp/q24.ndp
for sw in 1024 2048 4096 2048 4096; do echo "switch $sw"; NDP_PARTITION_SWITCH=$sw timeout 120 $NDP run /tmp/q24.ndp --backend=cuda 2>&1 | grep -E "^it ="; done
NDP_PARTITION_SWITCH=4096 timeout 300 python3 bench/run_gpu_recursion.py --runs 5 --only qsort --out $R/qsort_4096 > /dev/null 2>&1
grep -h "| cuda |" $R/qsort_4096.md
cd $OUT && tar czf r.tgz r
