#!/usr/bin/env bash
# Session 46, first call with the block kernel by warps (42f58a0): the partition tests at the tuned
# switch and at 64, the examples, quicksort 2^24 against CUB, Nsight Compute's kernel times.
export LD_LIBRARY_PATH=$PWD/build-gpu/lib:/usr/local/cuda/lib64 NDP_CACHE_DIR=/tmp/c1
R=$OUT/r; mkdir -p $R
NDP=build-gpu/cli/ndp
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/gpu.txt; cat $R/gpu.txt
NDP_DEBUG=1 NDP_JIT_FALLBACK=error timeout 300 $NDP test tests/programs/language/partition_levels.ndp --backend=cuda > $R/pt.txt 2>&1
tail -n 1 $R/pt.txt; grep -c "gave up" $R/pt.txt
NDP_PARTITION_SWITCH=64 NDP_DEBUG=1 NDP_JIT_FALLBACK=error timeout 300 $NDP test tests/programs/language/partition_levels.ndp --backend=cuda > $R/pt64.txt 2>&1
tail -n 1 $R/pt64.txt; grep -c "gave up" $R/pt64.txt
NDP_JIT_FALLBACK=error timeout 300 $NDP test examples --backend=cuda > $R/ex.txt 2>&1; tail -n 1 $R/ex.txt
sed -e 's/^bench_size = .*/bench_size = 16777216 $/' -e 's/^bench_runs = .*/bench_runs = 3 $/' bench/programs/qsort.ndp > /tmp/q24.ndp
sed -e 's/^bench_size = .*/bench_size = 16777216 $/' -e 's/^bench_runs = .*/bench_runs = 1 $/' bench/programs/qsort.ndp > /tmp/q24one.ndp
NDP_DEBUG=1 timeout 120 $NDP run /tmp/q24.ndp --backend=cuda 2>&1 | grep -E "^it =|gave up" | tail -n 4
timeout 300 python3 bench/run_gpu_recursion.py --runs 5 --only qsort --out $R/qsort_1 > /dev/null 2>&1
grep -h "| cuda |" $R/qsort_1.md
timeout 300 /usr/local/cuda/bin/ncu --csv --kernel-name regex:ndp_pl --metrics gpu__time_duration.sum $NDP run /tmp/q24one.ndp --backend=cuda > $R/ncu.csv 2> $R/ncu.err
# (then bench/results/session45/calls/profile.sh's summary of ncu.csv into ncu_summary.txt)
cd $OUT && tar czf r.tgz r
