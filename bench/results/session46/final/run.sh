#!/usr/bin/env bash
# Session 46, final call: the GPU unit tests, the rows, the cpu rows, then the cuda suite in the
# time left (the device allows 600 s a call). No autotune: the defaults are the measured values
# (partition_switch_elements 2048 measured in calls/capacity, regular_tile_bytes 32 KiB in session 44).
export LD_LIBRARY_PATH=$PWD/build-gpu/lib:/usr/local/cuda/lib64 NDP_CACHE_DIR=/tmp/c1
R=$OUT/r; mkdir -p $R
NDP=build-gpu/cli/ndp
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/gpu.txt; cat $R/gpu.txt
date -u > $R/date.txt
timeout 120 build-gpu/tests/unit_runtime_gpu > $R/unit.txt 2>&1; tail -n 2 $R/unit.txt; echo "[$SECONDS s]"
for round in 1 2; do
  timeout 120 python3 bench/run_gpu_recursion.py --runs 5 --only qsort --out $R/qsort_new_$round > /dev/null 2>&1
  NDP_PARTITION_LEVELS=0 timeout 120 python3 bench/run_gpu_recursion.py --runs 5 --only qsort --out $R/qsort_off_$round > /dev/null 2>&1
done
grep -h "| cuda |" $R/qsort_*.md; echo "[$SECONDS s]"
timeout 150 python3 bench/run_gpu_recursion.py --runs 10 --only batcher,quickhull --out $R/bq > /dev/null 2>&1; grep -h "| cuda |" $R/bq.md; echo "[$SECONDS s]"
timeout 90 python3 bench/run_gpu_map_blocks.py --only radix --runs 5 --out $R/radix > /dev/null 2>&1; grep -h "counting" $R/radix.md; echo "[$SECONDS s]"
timeout 120 python3 bench/run_gpu_recursion.py --runs 3 --only cpu --out $R/cpu > /dev/null 2>&1; grep -h "| cpu |" $R/cpu.md; echo "[$SECONDS s]"
left=$((555 - SECONDS))
NDP_JIT_FALLBACK=error timeout $left $NDP test tests examples --backend=cuda > $R/suite.txt 2>&1; echo "suite rc=$?"; tail -n 2 $R/suite.txt; echo "[$SECONDS s]"
cd $OUT && tar czf r.tgz r
