#!/usr/bin/env bash
export LD_LIBRARY_PATH=$PWD/build-gpu/lib:/usr/local/cuda/lib64 NDP_CACHE_DIR=/tmp/c1
R=$OUT/r; mkdir -p $R
NDP=build-gpu/cli/ndp
nvidia-smi --query-gpu=name --format=csv,noheader > $R/gpu.txt
NDP_DEBUG=1 NDP_JIT_FALLBACK=error timeout 120 $NDP test tests/programs/language/partition_levels.ndp tests/programs/language/regular_levels.ndp tests/programs/language/laid_out_recursion.ndp --backend=cuda > $R/pt.txt 2>&1
echo "$(tail -n 1 $R/pt.txt), gave up $(grep -c 'gave up' $R/pt.txt)"
sed -e 's/^bench_size = .*/bench_size = 16777216 $/' -e 's/^bench_runs = .*/bench_runs = 3 $/' bench/programs/qsort.ndp > /tmp/q24.ndp
timeout 60 $NDP run /tmp/q24.ndp --backend=cuda 2>&1 | tail -n 1 | tee $R/q24.txt
