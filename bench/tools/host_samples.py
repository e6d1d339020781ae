#!/usr/bin/env python3
"""Symbolises host_sampler.c's samples against the binary they came from and prints where the
wall time of the thread that ran the program (the one with the most samples under `FOCUS`,
default FlatWalk) went: by the innermost frame of the binary itself (self) and by every
function on the stack (inclusive).   host_samples.py SAMPLES BINARY [TOP [FOCUS]]"""
import collections
import subprocess
import sys

samples_path, binary = sys.argv[1], sys.argv[2]
top = int(sys.argv[3]) if len(sys.argv) > 3 else 40
focus = sys.argv[4] if len(sys.argv) > 4 else "FlatWalk"
lines = open(samples_path).read().split("\n")
rows = [line.split() for line in lines[1:] if line.strip()]
stacks = [[int(a, 16) for a in r[1:]] for r in rows]
tids = [r[0] for r in rows]
addrs = sorted({a for s in stacks for a in s})
# Return addresses point after the call: look up the byte before (the interrupted pc, the first
# frame after the signal trampoline, is off by at most one instruction either way).
out = subprocess.run(["addr2line", "-f", "-C", "-e", binary] + ["%x" % max(a - 1, 0) for a in addrs],
                     capture_output=True, text=True).stdout.split("\n")
name = {a: out[2 * i] for i, a in enumerate(addrs)}
known = lambda f: f not in ("??", "")
# The thread that ran the program: the most samples with a frame naming `focus`.
per_thread = collections.Counter(t for t, s in zip(tids, stacks) if any(focus in name[a] for a in s))
if per_thread:
    main_tid = per_thread.most_common(1)[0][0]
    stacks = [s for t, s in zip(tids, stacks) if t == main_tid]
self_count, incl_count = collections.Counter(), collections.Counter()
outside = 0
for s in stacks:
    frames = [name[a] for a in s if known(name[a])]
    if not frames:
        outside += 1
        continue
    self_count[frames[0]] += 1
    for f in set(frames):
        incl_count[f] += 1
n = len(stacks)
print(f"{n} samples of the program's thread ({n / 10000:.3f} s of wall time at 100 us); {outside} with no frame in the binary")
for title, c in (("self (innermost frame of the binary)", self_count), ("inclusive", incl_count)):
    print(f"\n{title}:")
    for f, k in c.most_common(top):
        print(f"{100 * k / n:6.1f}%  {f[:150]}")
