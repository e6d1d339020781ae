#!/usr/bin/env bash
# Session 49: p4 (tests, bench, trace, ncu of a pass) and Nsight Compute's full sections and
# instruction samples of the first pass's loop kernels. Returns $OUT/r.tgz only.
bash .device/p/p4.sh
export LD_LIBRARY_PATH=$PWD/build-gpu/lib:/usr/local/cuda/lib64 NDP_CACHE_DIR=/tmp/c1
R=$OUT/r2; mkdir -p $R
NDP=build-gpu/cli/ndp
timeout 200 ncu --set full --import-source no -k regex:ndp_kernel --launch-skip 3 --launch-count 4 -o $R/loops $NDP run /tmp/rx1.ndp --backend=cuda > $R/ncu.log 2>&1
ncu -i $R/loops.ncu-rep --page details > $R/details.txt 2>&1
ncu -i $R/loops.ncu-rep --page source --csv --print-source sass > $R/source.csv 2>&1
rm -f $R/loops.ncu-rep
cd $OUT && tar czf r2.tgz r2 && rm -rf r2
