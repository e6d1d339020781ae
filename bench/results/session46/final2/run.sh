#!/usr/bin/env bash
# Session 46, second call on the final code (the first lacked the GPU unit tests' and the counting
# sort's baseline binaries): the GPU unit tests, the counting sort row, Batcher and quickhull once
# more, and what unshare_partition_calls changes, as NDP_NO_UNSHARE=1 against the default, the
# order swapped each round: the cpu rows, then quicksort on cuda.
export LD_LIBRARY_PATH=$PWD/build-gpu/lib:/usr/local/cuda/lib64 NDP_CACHE_DIR=/tmp/c1
R=$OUT/r; mkdir -p $R
NDP=build-gpu/cli/ndp
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/gpu.txt; cat $R/gpu.txt
date -u > $R/date.txt
timeout 150 build-gpu/tests/unit_runtime_gpu > $R/unit.txt 2>&1; tail -n 2 $R/unit.txt; echo "[$SECONDS s]"
timeout 120 python3 bench/run_gpu_map_blocks.py --only radix --runs 5 --out $R/radix > /dev/null 2>&1; grep -h "counting" $R/radix.md; echo "[$SECONDS s]"
timeout 150 python3 bench/run_gpu_recursion.py --runs 10 --only batcher,quickhull --out $R/bq > /dev/null 2>&1; grep -h "| cuda |" $R/bq.md; echo "[$SECONDS s]"
cpu_row() {  # $1: default or no_unshare, $2: the round
  if [ $1 = no_unshare ]; then export NDP_NO_UNSHARE=1; else unset NDP_NO_UNSHARE; fi
  timeout 150 python3 bench/run_gpu_recursion.py --runs 3 --only cpu --out $R/cpu_$1_$2 > /dev/null 2>&1
  echo "$1 round $2"; grep -h "| cpu |" $R/cpu_$1_$2.md | head -n 1
}
cpu_row default 1; cpu_row no_unshare 1; cpu_row no_unshare 2; cpu_row default 2
unset NDP_NO_UNSHARE
echo "[$SECONDS s]"
for round in 1 2; do
  timeout 120 python3 bench/run_gpu_recursion.py --runs 5 --only qsort --out $R/qsort_default_$round > /dev/null 2>&1
  NDP_NO_UNSHARE=1 timeout 120 python3 bench/run_gpu_recursion.py --runs 5 --only qsort --out $R/qsort_no_unshare_$round > /dev/null 2>&1
done
grep -H "| cuda |" $R/qsort_*.md | sed 's/.*qsort_//'; echo "[$SECONDS s]"
cd $OUT && tar czf r.tgz r
