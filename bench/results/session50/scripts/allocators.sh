#!/usr/bin/env bash
# Session 50: the counting sort with glibc's malloc, mimalloc and jemalloc (LD_PRELOAD), in
# alternating processes: 1000 keys (the host's floor) and 10^6, medians of each process's runs.
export LD_LIBRARY_PATH=$PWD/build-gpu/lib:/usr/local/cuda/lib64 NDP_CACHE_DIR=/tmp/c1
R=$OUT/ra; mkdir -p $R
NDP=build-gpu/cli/ndp
for n in 1000 1000000; do
  sed -e "s/^bench_size = .*/bench_size = $n \$/" -e 's/^bench_runs = .*/bench_runs = 60 $/' bench/programs/radix_blocks.ndp > /tmp/rx$n.ndp
done
timeout 60 $NDP run /tmp/rx1000.ndp --backend=cuda > /dev/null 2>&1
for round in 1 2 3; do
  for a in glibc mimalloc jemalloc; do
    pre=""; [ $a = mimalloc ] && pre=$PWD/.device/p/libmimalloc.so.2; [ $a = jemalloc ] && pre=$PWD/.device/p/libjemalloc.so.2
    for n in 1000 1000000; do
      echo "size $n $a round $round" >> $R/runs.txt
      LD_PRELOAD=$pre timeout 60 $NDP run /tmp/rx$n.ndp --backend=cuda 2>&1 | grep -v "^ *\[\|^bench_input" >> $R/runs.txt
    done
  done
done
python3 - $R/runs.txt <<'PY' | tee $R/summary.txt
import sys, re, statistics
tag = None; buf = ''
for line in open(sys.argv[1]):
    if line.startswith('size'): tag = line.split(None, 1)[1].strip(); buf = ''; continue
    buf += line
    m = re.search(r'\[([0-9eE.,\s+-]*)\]\)', buf)
    if m and tag:
        xs = [float(x) for x in m.group(1).replace('\n', ' ').split(',') if x.strip()][1:]
        print('%-32s median ms %.3f min %.3f' % (tag, 1000*statistics.median(xs), 1000*min(xs))); tag = None
PY
cd $OUT && tar czf ra.tgz ra && rm -rf ra
