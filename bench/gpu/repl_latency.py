#!/usr/bin/env python3
"""REPL latency on the cuda backend (issue: LLVM code generation and the cuda backend).

Feeds small expressions to one `ndp --backend=cuda` REPL through a pipe and times each from
writing the line to reading its answer:
  cold:   20 new expressions, each needing a kernel nobody has compiled (fresh cache folder),
          so each pays for LLVM and the driver's PTX JIT;
  cached: the same 20 again in the same REPL (kernels in memory);
  disk:   the same 20 in a second REPL process (kernels from the on-disk cache).
Then the same three for 10 maps fused into a sum (consumer programs: LLVM and the driver's JIT
of the whole program, Note [Consumer programs]; across processes the driver's JIT cache, here a
fresh folder too). The device is opened by a warm-up expression first. Prints medians in
milliseconds.
  bench/gpu/repl_latency.py [NDP]   (default build-gpu/cli/ndp)
"""
import os
import statistics
import subprocess
import sys
import tempfile
import time

ndp = sys.argv[1] if len(sys.argv) > 1 else "build-gpu/cli/ndp"
cache = tempfile.mkdtemp(prefix="ndp-kernel-cache-")
env = dict(os.environ, NDP_CACHE_DIR=cache, CUDA_CACHE_PATH=tempfile.mkdtemp(prefix="ndp-driver-cache-"))
exprs = ["{a * %d + b - %d : a in [1, 2, 3]; b in [4, 5, 6]};" % (i + 2, i + 3) for i in range(20)]
consumers = ["sum({a * %d + b - %d : a in [1, 2, 3]; b in [4, 5, 6]});" % (i + 2, i + 3) for i in range(10)]


def session():
    return subprocess.Popen([ndp, "--backend=cuda"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, bufsize=1, env=env)


def ask(p, line):
    t0 = time.perf_counter()
    p.stdin.write(line + "\n")
    p.stdin.flush()
    answer = p.stdout.readline()
    dt = time.perf_counter() - t0
    if not answer.startswith("it = "):
        sys.exit("unexpected answer to %r: %r (stderr: %s)" % (line, answer, p.stderr.read() if p.poll() is not None else ""))
    return dt * 1e3, answer.strip()


def run(p, lines):
    return [ask(p, l) for l in lines]


p = session()
warm, _ = ask(p, "1 + 1;")
cold, cold_c = run(p, exprs), run(p, consumers)
cached, cached_c = run(p, exprs), run(p, consumers)
p.stdin.close()
p.wait()
q = session()
warm2, _ = ask(q, "1 + 1;")
disk, disk_c = run(q, exprs), run(q, consumers)
q.stdin.close()
q.wait()
for (_, a), (_, b), (_, c) in zip(cold + cold_c, cached + cached_c, disk + disk_c):
    assert a == b == c, (a, b, c)
med = lambda xs: statistics.median(t for t, _ in xs)
print("first expression (opens the device): %.1f ms" % warm)
print("cold   (new kernels: LLVM + PTX JIT), median of 20: %.1f ms (max %.1f)" % (med(cold), max(t for t, _ in cold)))
print("cached (kernels in memory),          median of 20: %.1f ms (max %.1f)" % (med(cached), max(t for t, _ in cached)))
print("disk   (kernels from the disk cache), median of 20: %.1f ms (max %.1f)" % (med(disk), max(t for t, _ in disk)))
print("cold   map into a sum (consumer program), median of 10: %.1f ms (max %.1f)" % (med(cold_c), max(t for t, _ in cold_c)))
print("cached map into a sum,                    median of 10: %.1f ms (max %.1f)" % (med(cached_c), max(t for t, _ in cached_c)))
print("second process, map into a sum,           median of 10: %.1f ms (max %.1f)" % (med(disk_c), max(t for t, _ in disk_c)))
print("example answers: %s; %s" % (cold[0][1], cold_c[0][1]))
