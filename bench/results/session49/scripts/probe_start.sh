#!/usr/bin/env bash
# Session 49's first call: launch cost on this machine (start/launch_rate.cu, built with
# `nvcc -O2 -arch=sm_90`), the counting sort's steady state under NDP_PROFILE=1, and Nsight
# Compute's kernel times of one sort (start/).
export LD_LIBRARY_PATH=$PWD/build-gpu/lib:/usr/local/cuda/lib64 NDP_CACHE_DIR=/tmp/c1
R=$OUT/r; mkdir -p $R
NDP=build-gpu/cli/ndp
nvidia-smi --query-gpu=name,driver_version --format=csv > $R/gpu.txt
.device/p/launch_rate > $R/launch_rate.txt 2>&1
sed -e 's/^bench_size = .*/bench_size = 1000000 $/' -e 's/^bench_runs = .*/bench_runs = 20 $/' bench/programs/radix_blocks.ndp > /tmp/rx20.ndp
sed -e 's/^bench_size = .*/bench_size = 1000000 $/' -e 's/^bench_runs = .*/bench_runs = 1 $/' bench/programs/radix_blocks.ndp > /tmp/rx1.ndp
NDP_PROFILE=1 timeout 60 $NDP run /tmp/rx20.ndp --backend=cuda > $R/prof20.txt 2>&1
python3 bench/run_gpu_map_blocks.py --ndp $NDP --baselines build-gpu/bench/map_blocks --out $R/mb1 --only radix --runs 5 > $R/mb1.log 2>&1
timeout 240 ncu --clock-control none --csv --metrics gpu__time_duration.sum $NDP run /tmp/rx1.ndp --backend=cuda > $R/ncu.csv 2>&1
