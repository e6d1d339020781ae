#!/usr/bin/env bash
# Nsight Compute on the block kernel by warps (42f58a0), one sort of 2^24 ints: the sections
# (ncu_block.txt), then the SASS source page with each instruction's executions (sass.csv.gz).
export LD_LIBRARY_PATH=$PWD/build-gpu/lib:/usr/local/cuda/lib64 NDP_CACHE_DIR=/tmp/c1
R=$OUT/r; mkdir -p $R
NDP=build-gpu/cli/ndp
sed -e 's/^bench_size = .*/bench_size = 16777216 $/' -e 's/^bench_runs = .*/bench_runs = 1 $/' bench/programs/qsort.ndp > /tmp/q24one.ndp
timeout 250 /usr/local/cuda/bin/ncu --kernel-name ndp_pl_block --launch-count 1 --section SpeedOfLight --section Occupancy --section WarpStateStats --section SchedulerStats --section InstructionStats --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis --section SourceCounters $NDP run /tmp/q24one.ndp --backend=cuda > $R/ncu_block.txt 2>&1
timeout 250 /usr/local/cuda/bin/ncu --kernel-name ndp_pl_block --launch-count 1 --section SourceCounters --section InstructionStats -o /tmp/rep $NDP run /tmp/q24one.ndp --backend=cuda > $R/ncu_run.txt 2>&1
/usr/local/cuda/bin/ncu -i /tmp/rep.ncu-rep --page source --csv --print-source sass > $R/sass.csv
cd $OUT && tar czf r.tgz r
