#!/usr/bin/env bash
# Session 52: Nsight Compute's full sections and instruction samples of one pass's two loop
# kernels and its permute (10^6 keys, the second pass). Returns $OUT/l.tgz.
export LD_LIBRARY_PATH=$PWD/build-gpu/lib:/usr/local/cuda/lib64 NDP_CACHE_DIR=/tmp/c1
R=$OUT/l; mkdir -p $R
NDP=build-gpu/cli/ndp
sed -e 's/^bench_size = .*/bench_size = 1000000 $/' -e 's/^bench_runs = .*/bench_runs = 1 $/' bench/programs/radix_blocks.ndp > /tmp/rx1.ndp
timeout 60 $NDP run /tmp/rx1.ndp --backend=cuda > /dev/null 2>&1
timeout 300 ncu --set full --import-source no -k regex:'ndp_kernel|ndp_permute' --launch-skip 8 --launch-count 7 -o $R/loops $NDP run /tmp/rx1.ndp --backend=cuda > $R/ncu.log 2>&1
ncu -i $R/loops.ncu-rep --page details > $R/details.txt 2>&1
ncu -i $R/loops.ncu-rep --page source --csv --print-source sass > $R/source.csv 2>&1
python3 .device/p/source_summary.py $R/source.csv > $R/source_summary.txt 2>&1
grep -E "^  ndp_|Duration|Achieved Occupancy|Memory Throughput|Registers Per|Dynamic Shared|Block Limit|Theoretical Occ" $R/details.txt | head -150
rm -f $R/loops.ncu-rep; gzip $R/source.csv
cd $OUT && tar czf l.tgz l && rm -rf l
