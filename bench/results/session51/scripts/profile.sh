#!/usr/bin/env bash
# Session 51: where the host's time goes in the counting sort's pass. A sort of 1000 keys (its
# kernels a few µs each, so the host is the bound) under NDP_PROFILE=host (each data statement's
# host time), then under session 49's CPU-time sampler; sizes 1000 and 10^6 timed for reference.
export LD_LIBRARY_PATH=$PWD/build-gpu/lib:/usr/local/cuda/lib64 NDP_CACHE_DIR=/tmp/c1
R=$OUT/p; mkdir -p $R
NDP=build-gpu/cli/ndp
nvidia-smi --query-gpu=name,driver_version --format=csv > $R/gpu.txt
mk() { sed -e "s/^bench_size = .*/bench_size = $1 \$/" -e "s/^bench_runs = .*/bench_runs = $2 \$/" bench/programs/radix_blocks.ndp > $3; }
mk 1000 3 /tmp/w.ndp; timeout 60 $NDP run /tmp/w.ndp --backend=cuda > /dev/null 2>&1
for n in 1000 1000000; do
  mk $n 30 /tmp/rx$n.ndp; echo "size $n" >> $R/sizes.txt
  timeout 60 $NDP run /tmp/rx$n.ndp --backend=cuda 2>&1 | grep -v "^ *\[\|^bench_input" >> $R/sizes.txt
done
python3 - $R/sizes.txt <<'PY' | tee $R/sizes_summary.txt
import sys, re, statistics
size = None; buf = ''
for line in open(sys.argv[1]):
    if line.startswith('size'): size = line.split()[1]; buf = ''; continue
    buf += line
    m = re.search(r'\[([0-9eE.,\s+-]*)\]\)', buf)
    if m and size:
        xs = [float(x) for x in m.group(1).replace('\n', ' ').split(',') if x.strip()][1:]
        print(size, 'median ms %.3f min %.3f' % (1000*statistics.median(xs), 1000*min(xs))); size = None
PY
mk 1000 2000 /tmp/h.ndp
NDP_PROFILE=host timeout 100 $NDP run /tmp/h.ndp --backend=cuda > /dev/null 2> $R/profile_host.txt
head -60 $R/profile_host.txt
mk 1000 20000 /tmp/s.ndp
SAMPLER_OUT=$R/samples LD_PRELOAD=$PWD/.device/p/libsampler.so timeout 100 $NDP run /tmp/s.ndp --backend=cuda 2>&1 | tail -c 300 > $R/run.txt
cp /lib/x86_64-linux-gnu/libc.so.6 $R/ 2>/dev/null
ls /lib/x86_64-linux-gnu/libjemalloc* > $R/jemalloc_path.txt 2>&1; cp -L $(ldd $NDP | awk '/jemalloc/ {print $3}') $R/ 2>/dev/null
gzip $R/samples
cd $OUT && tar czf p.tgz p && rm -rf p
