#!/usr/bin/env bash
export LD_LIBRARY_PATH=$PWD/build-gpu/lib:/usr/local/cuda/lib64 NDP_CACHE_DIR=/tmp/c1
R=$OUT/r; mkdir -p $R
NDP=build-gpu/cli/ndp
for sw in 2048 64; do
  NDP_PARTITION_SWITCH=$sw NDP_DEBUG=1 NDP_JIT_FALLBACK=error timeout 120 $NDP test tests/programs/language/partition_levels.ndp tests/programs/language/partition_redefined.ndp --backend=cuda > $R/pt$sw.txt 2>&1
  echo "switch $sw: $(tail -n 1 $R/pt$sw.txt), gave up $(grep -c 'gave up' $R/pt$sw.txt)"
done
NDP_JIT_FALLBACK=error timeout 200 $NDP test tests examples --backend=cuda > $R/suite.txt 2>&1; tail -n 1 $R/suite.txt
timeout 120 python3 bench/run_gpu_recursion.py --runs 5 --only qsort --out $R/qsort > /dev/null 2>&1; grep -h "| cuda |" $R/qsort.md
cd $OUT && tar czf r.tgz r
