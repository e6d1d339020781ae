#!/usr/bin/env bash
# Session 45, after the review's mends: autotune (the partition switch), the tests at the default
# switch and at 64, the cuda suite, and quicksort.
export LD_LIBRARY_PATH=$PWD/build-gpu/lib:/usr/local/cuda/lib64 NDP_CACHE_DIR=/tmp/c1
R=$OUT/r; mkdir -p $R
NDP=build-gpu/cli/ndp
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/gpu.txt; date -u > $R/date.txt
timeout 300 $NDP autotune > $R/autotune.txt 2>&1; tail -n 3 $R/autotune.txt
for sw in default 64; do
  if [ $sw = default ]; then unset NDP_PARTITION_SWITCH; else export NDP_PARTITION_SWITCH=$sw; fi
  NDP_DEBUG=1 NDP_JIT_FALLBACK=error timeout 300 $NDP test tests/programs/language/partition_levels.ndp --backend=cuda > $R/pt_$sw.txt 2>&1
  echo "switch $sw: $(tail -n 1 $R/pt_$sw.txt), gave up $(grep -c 'gave up' $R/pt_$sw.txt)"
done
unset NDP_PARTITION_SWITCH
NDP_JIT_FALLBACK=error timeout 300 $NDP test tests examples --backend=cuda > $R/suite.txt 2>&1; tail -n 1 $R/suite.txt
timeout 200 python3 bench/run_gpu_recursion.py --runs 5 --only qsort --out $R/qsort_new > /dev/null 2>&1
NDP_PARTITION_LEVELS=0 timeout 200 python3 bench/run_gpu_recursion.py --runs 5 --only qsort --out $R/qsort_off > /dev/null 2>&1
grep -h "| cuda |" $R/qsort_*.md
cd $OUT && tar czf r.tgz r
