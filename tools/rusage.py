#!/usr/bin/env python3
"""Runs a command and prints its wall time, user and system time and page faults (the GPU
machine has no perf: system time and minor faults are how the cpu backend's fresh allocations
showed up there, bench/results/session25). The command's output is passed through.

    python3 tools/rusage.py build-gpu/cli/ndp run --backend=cpu PROGRAM.ndp
"""
import resource
import subprocess
import sys
import time

if len(sys.argv) < 2:
    sys.exit(__doc__)
start = time.time()
rc = subprocess.run(sys.argv[1:]).returncode
usage = resource.getrusage(resource.RUSAGE_CHILDREN)
print("rusage: wall %.2f s, user %.2f s, system %.2f s, minor faults %d, major faults %d" %
      (time.time() - start, usage.ru_utime, usage.ru_stime, usage.ru_minflt, usage.ru_majflt), file=sys.stderr)
sys.exit(rc)
