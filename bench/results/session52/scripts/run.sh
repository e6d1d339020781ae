#!/usr/bin/env bash
# Session 52: GPU unit tests, the cuda suite (SUITE=0 skips it), three rounds of the counting sort
# against CUB (20 timed runs each), a trace and NDP_PROFILE=host table of sorts of 10^6 keys, and
# Nsight Compute's warm-cache pass. Returns $OUT/r.tgz only.
export LD_LIBRARY_PATH=$PWD/build-gpu/lib:/usr/local/cuda/lib64 NDP_CACHE_DIR=/tmp/c1
R=$OUT/r; mkdir -p $R
NDP=build-gpu/cli/ndp
nvidia-smi --query-gpu=name,driver_version --format=csv > $R/gpu.txt
for t in unit_runtime_gpu unit_runtime_cuda; do
  build-gpu/tests/$t > $R/$t.txt 2>&1; echo "$t rc=$?" | tee -a $R/$t.txt
  grep -A3 "ERROR\|FAILED" $R/$t.txt | head -10; tail -2 $R/$t.txt | head -1
done
if [ "${SUITE:-1}" = 1 ]; then
  NDP_JIT_FALLBACK=error timeout 300 $NDP test tests examples --backend=cuda > $R/suite.txt 2>&1
  echo "suite rc=$?" >> $R/suite.txt; tail -2 $R/suite.txt; grep "^FAIL" $R/suite.txt | head -5
fi
for round in 1 2 3; do
  python3 bench/run_gpu_map_blocks.py --ndp $NDP --baselines build-gpu/bench/map_blocks --out $R/mb$round --only radix --runs 20 > $R/mb$round.log 2>&1
  echo "round $round: $(grep -h per-block $R/mb$round.log)"
done
mk() { sed -e "s/^bench_size = .*/bench_size = $1 \$/" -e "s/^bench_runs = .*/bench_runs = $2 \$/" bench/programs/radix_blocks.ndp > $3; }
mk 1000000 3 /tmp/rx.ndp
NDP_PROFILE=trace timeout 60 $NDP run /tmp/rx.ndp --backend=cuda > $R/trace.txt 2>&1
mk 1000000 30 /tmp/rxh.ndp
NDP_PROFILE=host timeout 60 $NDP run /tmp/rxh.ndp --backend=cuda > $R/profile_host.txt 2>&1
mk 1000000 1 /tmp/rx1.ndp
timeout 240 ncu --clock-control none --cache-control none --csv --metrics gpu__time_duration.sum $NDP run /tmp/rx1.ndp --backend=cuda > $R/ncu_warm.csv 2>&1
python3 - $R/ncu_warm.csv > $R/ncu_pass_warm.txt <<'PY'
import csv, sys
rows = [r for r in csv.reader(open(sys.argv[1])) if len(r) > 10 and r[0].isdigit()]
digits = [i for i, r in enumerate(rows) if r[4] == 'ndp_kernel' and r[8] == '(977, 1, 1)']
a, b = digits[2] - 2, digits[3] - 2
tot = 0
for r in rows[a:b]:
    t = float(r[-1].replace(',', '')) / 1000; tot += t
    print(f"{r[4][:32]:32} grid {r[8]:>14} {t:8.2f} us")
print(f"launches {b - a}, total {tot:.1f} us")
PY
cat $R/ncu_pass_warm.txt
cd $OUT && tar czf r.tgz r && rm -rf r
