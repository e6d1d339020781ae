#!/usr/bin/env bash
# Session 45, final call: autotune, the GPU unit tests, the cuda suite, and the rows.
export LD_LIBRARY_PATH=$PWD/build-gpu/lib:/usr/local/cuda/lib64 NDP_CACHE_DIR=/tmp/c1
R=$OUT/r; mkdir -p $R
NDP=build-gpu/cli/ndp
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/gpu.txt
date -u > $R/date.txt
timeout 300 $NDP autotune > $R/autotune.txt 2>&1
timeout 200 build-gpu/tests/unit_runtime_gpu > $R/unit.txt 2>&1; tail -n 3 $R/unit.txt
NDP_JIT_FALLBACK=error timeout 420 $NDP test tests examples --backend=cuda > $R/suite.txt 2>&1; tail -n 2 $R/suite.txt
for round in 1 2; do
  timeout 300 python3 bench/run_gpu_recursion.py --runs 5 --only qsort --out $R/qsort_new_$round > /dev/null 2>&1
  NDP_PARTITION_LEVELS=0 timeout 300 python3 bench/run_gpu_recursion.py --runs 5 --only qsort --out $R/qsort_off_$round > /dev/null 2>&1
done
grep -h "| cuda |" $R/qsort_*.md
timeout 300 python3 bench/run_gpu_recursion.py --runs 10 --only batcher,quickhull --out $R/bq > /dev/null 2>&1; grep -h "| cuda |" $R/bq.md
timeout 200 python3 bench/run_gpu_map_blocks.py --only radix --runs 5 --out $R/radix > /dev/null 2>&1; grep -h "counting" $R/radix.md
cd $OUT && tar czf r.tgz r
