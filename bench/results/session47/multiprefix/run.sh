#!/usr/bin/env bash
export LD_LIBRARY_PATH=$PWD/build-gpu/lib:/usr/local/cuda/lib64 NDP_CACHE_DIR=/tmp/c1
R=$OUT/r; mkdir -p $R
NDP=build-gpu/cli/ndp
nvidia-smi --query-gpu=name,driver_version --format=csv > $R/gpu.txt
NDP_JIT_FALLBACK=error timeout 120 $NDP test tests/programs/language/multiprefix_loops.ndp tests/programs/language/loop_kernels.ndp --backend=cuda > $R/mp_test.txt 2>&1
echo "mp test rc=$?" >> $R/mp_test.txt
tail -3 $R/mp_test.txt
sed -e 's/^bench_size = .*/bench_size = 1000000 $/' -e 's/^bench_runs = .*/bench_runs = 3 $/' bench/programs/radix_blocks.ndp > /tmp/rx.ndp
timeout 60 $NDP run /tmp/rx.ndp --backend=cuda > $R/plain.txt 2>&1
NDP_PROFILE=1 timeout 60 $NDP run /tmp/rx.ndp --backend=cuda > $R/profile.txt 2>&1
NDP_PROFILE=trace timeout 60 $NDP run /tmp/rx.ndp --backend=cuda > $R/trace.txt 2>&1
python3 bench/run_gpu_map_blocks.py --ndp $NDP --baselines build-gpu/bench/map_blocks --out $R/mb --only radix --runs 5 > $R/mb.log 2>&1
NDP_MULTIPREFIX=0 python3 bench/run_gpu_map_blocks.py --ndp $NDP --baselines build-gpu/bench/map_blocks --out $R/mb_off --only radix --runs 5 > $R/mb_off.log 2>&1
grep "per-block" $R/mb.log $R/mb_off.log
NDP_JIT_FALLBACK=error timeout 300 $NDP test tests examples --backend=cuda > $R/suite.txt 2>&1
echo "suite rc=$?" >> $R/suite.txt
tail -2 $R/suite.txt; grep -c "^FAIL" $R/suite.txt
cd $OUT && tar czf r.tgz r
