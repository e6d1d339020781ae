#!/usr/bin/env bash
# Session 50: issue 25's other rows with this session's code (autotune first, as bench/README.md says).
export LD_LIBRARY_PATH=$PWD/build-gpu/lib:/usr/local/cuda/lib64 NDP_CACHE_DIR=/tmp/c1
R=$OUT/rows; mkdir -p $R
NDP=build-gpu/cli/ndp
timeout 150 $NDP autotune > $R/autotune.txt 2>&1; tail -2 $R/autotune.txt
timeout 300 python3 bench/run_gpu_map_blocks.py --ndp $NDP --baselines build-gpu/bench/map_blocks --cusparse build-gpu/bench/cusparse_spmv --out $R/rows --only allpairs,fractal,matmul,spmv,segsort,radix --runs 5 > $R/rows.log 2>&1
grep "^|" $R/rows.md
cd $OUT && tar czf rows.tgz rows && rm -rf rows
