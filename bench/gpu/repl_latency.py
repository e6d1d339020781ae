#!/usr/bin/env python3
"""REPL latency on the cuda backend (issue: LLVM code generation and the cuda backend).

Feeds small expressions to one `ndp --backend=cuda` REPL through a pipe and times each from
writing the line to reading its answer:
  cold:   20 new expressions, each needing a kernel nobody has compiled (fresh cache folder),
          so each pays for LLVM and the driver's PTX JIT;
  cached: the same 20 again in the same REPL (kernels in memory);
  disk:   the same 20 in a second REPL process (kernels from the on-disk cache).
Then the same three for 10 new maps fused into a sum over 9 elements (small: the cuda backend
runs them unfused, Note [Consumers of small inputs]) and for 5 over 100 000 elements (consumer
programs: LLVM and the driver's JIT of the whole program, Note [Consumer programs]; across
processes the driver's JIT cache, here a fresh folder too). The device is opened by a warm-up
expression first. Prints medians in milliseconds.
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
consumers = ["sum({a * %d + b - %d : a in [1, 2, 3]; b in [4, 5, 6]});" % (i + 102, i + 103) for i in range(10)]
large = ["sum({x * %d + 1 : x in [0:100000]});" % (i + 2) for i in range(5)]


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
cold, cold_c, cold_l = run(p, exprs), run(p, consumers), run(p, large)
cached, cached_c, cached_l = run(p, exprs), run(p, consumers), run(p, large)
p.stdin.close()
p.wait()
q = session()
warm2, _ = ask(q, "1 + 1;")
disk, disk_c, disk_l = run(q, exprs), run(q, consumers), run(q, large)
q.stdin.close()
q.wait()
for (_, a), (_, b), (_, c) in zip(cold + cold_c + cold_l, cached + cached_c + cached_l, disk + disk_c + disk_l):
    assert a == b == c, (a, b, c)
med = lambda xs: statistics.median(t for t, _ in xs)
print("first expression (opens the device): %.1f ms" % warm)
print("cold   (new kernels: LLVM + PTX JIT), median of 20: %.1f ms (max %.1f)" % (med(cold), max(t for t, _ in cold)))
print("cached (kernels in memory),          median of 20: %.1f ms (max %.1f)" % (med(cached), max(t for t, _ in cached)))
print("disk   (kernels from the disk cache), median of 20: %.1f ms (max %.1f)" % (med(disk), max(t for t, _ in disk)))
for name, c, m, d in (("map into a sum, 9 elements", cold_c, cached_c, disk_c),
                      ("map into a sum, 100 000 elements", cold_l, cached_l, disk_l)):
    print("%s (median of %d): cold %.1f ms (max %.1f), cached %.1f ms, second process %.1f ms (max %.1f)"
          % (name, len(c), med(c), max(t for t, _ in c), med(m), med(d), max(t for t, _ in d)))
print("example answers: %s; %s; %s" % (cold[0][1], cold_c[0][1], cold_l[0][1]))
