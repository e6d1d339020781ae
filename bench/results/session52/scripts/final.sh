#!/usr/bin/env bash
# Session 52's closing calls: tools/gpu-test.sh's tests but the embedding ones (embed.sh) and the
# host-fallback census (GPU unit tests, the cuda suite, block rows off, device OOM); the cuda
# suite again without the launch thread; `ndp autotune`, then issue 25's rows; three more
# processes of the counting sort (20 timed runs each); the recursion rows; the segmented-sum
# sweep. PART=1 runs the tests, the counting sort's processes and the recursion rows; PART=2
# autotune, the rows and the sweep (a call may run 10 minutes). Returns $OUT/f$PART.tgz.
export LD_LIBRARY_PATH=$PWD/build-gpu/lib:/usr/local/cuda/lib64 NDP_CACHE_DIR=/tmp/c1
R=$OUT/f$PART; mkdir -p $R
NDP=build-gpu/cli/ndp
if [ "$PART" = 1 ]; then
for t in unit_runtime_gpu unit_runtime_cuda unit_exec_llvm_free; do
  build-gpu/tests/$t > $R/$t.txt 2>&1; echo "$t rc=$?: $(grep 'test cases:' $R/$t.txt)"
done
NDP_JIT_FALLBACK=error timeout 300 $NDP test tests examples --backend=cuda > $R/suite.txt 2>&1
echo "suite rc=$?: $(tail -1 $R/suite.txt)"; grep "^FAIL" $R/suite.txt | head -5
NDP_BLOCK_ROWS=0 $NDP test tests/programs/language/block_rows.ndp tests/programs/language/map_kernels.ndp --backend=cuda > $R/block_rows_off.txt 2>&1
echo "block rows off: $(tail -1 $R/block_rows_off.txt)"
printf 'dist(1, 20000000000);\n1 + 2;\n' | $NDP --backend=cuda > $R/oom.txt 2>&1
grep -q "Out of memory." $R/oom.txt && grep -q "it = 3 : int" $R/oom.txt && echo "device OOM: reported, REPL survives" || echo "device OOM: FAILED"
NDP_LAUNCH_THREAD=0 NDP_JIT_FALLBACK=error timeout 300 $NDP test tests examples --backend=cuda > $R/suite_no_thread.txt 2>&1
echo "suite without the launch thread rc=$?: $(tail -1 $R/suite_no_thread.txt)"; grep "^FAIL" $R/suite_no_thread.txt | head -5
for round in 2 3 4; do
  python3 bench/run_gpu_map_blocks.py --ndp $NDP --baselines build-gpu/bench/map_blocks --out $R/mb$round --only radix --runs 20 > $R/mb$round.log 2>&1
  echo "radix process $round: $(grep -h per-block $R/mb$round.log)"
done
timeout 150 python3 bench/run_gpu_recursion.py --runs 5 --only qsort,batcher,quickhull --out $R/rec > /dev/null 2>&1; grep -h "| cuda |" $R/rec.md
else
timeout 150 $NDP autotune > $R/autotune.txt 2>&1; tail -1 $R/autotune.txt
timeout 240 python3 bench/run_gpu_map_blocks.py --ndp $NDP --baselines build-gpu/bench/map_blocks --cusparse build-gpu/bench/cusparse_spmv --out $R/rows --only allpairs,fractal,matmul,spmv,segsort,radix --runs 5 > $R/rows.log 2>&1
grep "^|" $R/rows.md | grep -v "^|---\|^| program"
  timeout 180 python3 bench/run_gpu_map_blocks.py --ndp $NDP --baselines build-gpu/bench/map_blocks --out $R/segsum --only segsum --sweep-rounds 3 --lengths 1,4,16,64,1024,16384,131072,1048576 > $R/segsum.log 2>&1
  grep "^|" $R/segsum.md | tail -9
fi
cd $OUT && tar czf f$PART.tgz f$PART && rm -rf f$PART
