#!/usr/bin/env bash
export LD_LIBRARY_PATH=$PWD/build-gpu/lib:/usr/local/cuda/lib64 NDP_CACHE_DIR=/tmp/c1
R=$OUT/r; mkdir -p $R
NDP=build-gpu/cli/ndp
sed -e 's/^bench_size = .*/bench_size = 1000000 $/' -e 's/^bench_runs = .*/bench_runs = 3 $/' bench/programs/radix_blocks.ndp > /tmp/rx.ndp
timeout 60 $NDP run /tmp/rx.ndp --backend=cuda > /dev/null 2>&1
NDP_PROFILE=1 timeout 60 $NDP run /tmp/rx.ndp --backend=cuda > $R/profile.txt 2>&1
grep -E "^it =" $R/profile.txt; grep -A45 "NDP_PROFILE:.*data statements" $R/profile.txt | cut -c1-230
cd $OUT && tar czf r.tgz r
