#!/usr/bin/env bash
export LD_LIBRARY_PATH=$PWD/build-gpu/lib:/usr/local/cuda/lib64 NDP_CACHE_DIR=/tmp/c1
R=$OUT/r; mkdir -p $R
NDP=build-gpu/cli/ndp
sed -e 's/^bench_size = .*/bench_size = 16777216 $/' -e 's/^bench_runs = .*/bench_runs = 1 $/' bench/programs/qsort.ndp > /tmp/q24one.ndp
for k in ndp_pl_scatter ndp_pl_block; do
timeout 250 /usr/local/cuda/bin/ncu --kernel-name $k --launch-count 1 --section SpeedOfLight --section Occupancy --section WarpStateStats --section SchedulerStats --section InstructionStats --section MemoryWorkloadAnalysis --section SourceCounters $NDP run /tmp/q24one.ndp --backend=cuda > $R/ncu_$k.txt 2>&1
done
grep -E "Duration|Issued Ipc|Executed Ipc|Achieved Occupancy|Warp Cycles Per Issued|Executed Instructions  |Registers Per|Bank Conflicts|No Eligible" $R/ncu_*.txt | head -40
cd $OUT && tar czf r.tgz r
