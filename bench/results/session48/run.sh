#!/usr/bin/env bash
# Session 48's GPU call: the GPU unit tests, the program suite on the cuda backend, the counting
# sort row (three rounds, and one with NDP_MULTIPREFIX=0), a trace of its passes, and the
# recursion rows that partition and the ranks touch. Writes $OUT/r.tgz.
export LD_LIBRARY_PATH=$PWD/build-gpu/lib:/usr/local/cuda/lib64 NDP_CACHE_DIR=/tmp/c1
R=$OUT/r; mkdir -p $R
NDP=build-gpu/cli/ndp
nvidia-smi --query-gpu=name,driver_version --format=csv > $R/gpu.txt
build-gpu/tests/unit_runtime_gpu > $R/unit_runtime_gpu.txt 2>&1; echo "unit_runtime_gpu rc=$?" | tee -a $R/unit_runtime_gpu.txt
tail -4 $R/unit_runtime_gpu.txt
NDP_JIT_FALLBACK=error timeout 300 $NDP test tests examples --backend=cuda > $R/suite.txt 2>&1
echo "suite rc=$?" >> $R/suite.txt; tail -2 $R/suite.txt; grep "^FAIL" $R/suite.txt | head -5
for round in 1 2 3; do
python3 bench/run_gpu_map_blocks.py --ndp $NDP --baselines build-gpu/bench/map_blocks --out $R/mb$round --only radix --runs 5 > $R/mb$round.log 2>&1
done
NDP_MULTIPREFIX=0 python3 bench/run_gpu_map_blocks.py --ndp $NDP --baselines build-gpu/bench/map_blocks --out $R/mb_off --only radix --runs 5 > $R/mb_off.log 2>&1
grep -h "per-block" $R/mb1.log $R/mb2.log $R/mb3.log $R/mb_off.log
sed -e 's/^bench_size = .*/bench_size = 1000000 $/' -e 's/^bench_runs = .*/bench_runs = 3 $/' bench/programs/radix_blocks.ndp > /tmp/rx.ndp
NDP_PROFILE=trace timeout 60 $NDP run /tmp/rx.ndp --backend=cuda > $R/trace.txt 2>&1
timeout 150 python3 bench/run_gpu_recursion.py --runs 5 --only qsort,batcher,quickhull --out $R/rec > /dev/null 2>&1; grep -h "| cuda |" $R/rec.md
cd $OUT && tar czf r.tgz r
