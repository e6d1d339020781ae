#!/usr/bin/env bash
# Session 52: issue 25's segmented-sum sweep at every length from 1 to 2^20, after `ndp autotune`
# (3 rounds a length). Returns $OUT/s.tgz.
export LD_LIBRARY_PATH=$PWD/build-gpu/lib:/usr/local/cuda/lib64 NDP_CACHE_DIR=/tmp/c1
R=$OUT/s; mkdir -p $R
NDP=build-gpu/cli/ndp
timeout 150 $NDP autotune > $R/autotune.txt 2>&1; tail -1 $R/autotune.txt
L=${LENGTHS:-$(python3 -c "print(','.join(str(1 << k) for k in range(21)))")}
timeout 400 python3 bench/run_gpu_map_blocks.py --ndp $NDP --baselines build-gpu/bench/map_blocks --out $R/segsum --only segsum --sweep-rounds ${ROUNDS:-3} --lengths $L > $R/segsum.log 2>&1
grep "^| [0-9]" $R/segsum.md | awk -F'|' '{print $2, $(NF-3), $(NF-2), $(NF-1)}'
cd $OUT && tar czf s.tgz s && rm -rf s
