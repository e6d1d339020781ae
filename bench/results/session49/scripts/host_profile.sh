#!/usr/bin/env bash
# Session 49: where the host's time goes in the counting sort: a sampling profiler (LD_PRELOAD,
# host_profile/sampler.c built with `gcc -O2 -shared -fPIC -o libsampler.so sampler.c`) over
# 3000 sorts; host_profile/analyze.py symbolises the samples against the same ndp binary.
export LD_LIBRARY_PATH=$PWD/build-gpu/lib:/usr/local/cuda/lib64 NDP_CACHE_DIR=/tmp/c1
R=$OUT/r3; mkdir -p $R
NDP=build-gpu/cli/ndp
sed -e 's/^bench_size = .*/bench_size = 1000000 $/' -e 's/^bench_runs = .*/bench_runs = 3000 $/' bench/programs/radix_blocks.ndp > /tmp/rx3000.ndp
sed -e "s/^bench_runs = .*/bench_runs = 3 \$/" /tmp/rx3000.ndp > /tmp/rx3.ndp; timeout 60 $NDP run /tmp/rx3.ndp --backend=cuda > $R/warm.txt 2>&1
SAMPLER_OUT=$R/samples LD_PRELOAD=$PWD/.device/p/libsampler.so timeout 60 $NDP run /tmp/rx3000.ndp --backend=cuda > $R/run.txt 2>&1
cd $OUT && tar czf r3.tgz r3 && rm -rf r3
# here: python3 analyze.py r3/samples build-gpu/cli/ndp cli/ndp
