#!/usr/bin/env bash
# Session 50: the host's CPU time in a sort of 1000 keys (its kernels a few µs each, so the
# host is the bound), 20000 sorts under session 49's sampler (bench/results/session49/
# host_profile/sampler.c, ITIMER_PROF: ~250 samples a second on this machine); libc.so.6 comes
# back to name its frames. Here: python3 host_profile/analyze.py samples build-gpu/cli/ndp
# (with libc.so.6 beside the samples).
export LD_LIBRARY_PATH=$PWD/build-gpu/lib:/usr/local/cuda/lib64 NDP_CACHE_DIR=/tmp/c1
R=$OUT/r3; mkdir -p $R
NDP=build-gpu/cli/ndp
sed -e 's/^bench_size = .*/bench_size = 1000 $/' -e 's/^bench_runs = .*/bench_runs = 20000 $/' bench/programs/radix_blocks.ndp > /tmp/s.ndp
sed -e "s/^bench_runs = .*/bench_runs = 3 \$/" /tmp/s.ndp > /tmp/s3.ndp; timeout 60 $NDP run /tmp/s3.ndp --backend=cuda > /dev/null 2>&1
SAMPLER_OUT=$R/samples LD_PRELOAD=$PWD/.device/p/libsampler.so timeout 100 $NDP run /tmp/s.ndp --backend=cuda 2>&1 | tail -c 300 > $R/run.txt
cp /lib/x86_64-linux-gnu/libc.so.6 $R/
gzip $R/samples
cd $OUT && tar czf r3.tgz r3 && rm -rf r3
