import sys, subprocess, collections
samples_path, binary, needle = sys.argv[1], sys.argv[2], sys.argv[3]
maps = []
for line in open(samples_path + '.maps'):
    parts = line.split()
    if len(parts) >= 6:
        lo, hi = (int(x, 16) for x in parts[0].split('-'))
        maps.append((lo, hi, int(parts[2], 16), parts[5]))
def where(a):
    for lo, hi, off, path in maps:
        if lo <= a < hi:
            return path, a - lo + off
    return None, a
stacks = []
for line in open(samples_path):
    stacks.append([int(x, 16) for x in line.split()])
offs = set()
for st in stacks:
    for a in st:
        p, o = where(a)
        if p and needle in p: offs.add(o)
offs = sorted(offs)
names = {}
out = subprocess.run(['addr2line', '-f', '-C', '-e', binary] + [hex(o - 1) for o in offs], capture_output=True, text=True).stdout.split('\n')
for i, o in enumerate(offs):
    n = out[2 * i] if 2 * i < len(out) else '?'
    names[o] = n
def name(a):
    p, o = where(a)
    if p and needle in p: return names.get(o, '?')
    return (p or '?').split('/')[-1]
self_c, incl = collections.Counter(), collections.Counter()
for st in stacks:
    frames = [name(a) for a in st[2:]]  # skip the handler and the signal trampoline
    if not frames: continue
    self_c[frames[0]] += 1
    for f in set(frames): incl[f] += 1
tot = len(stacks)
def short(n): return n if len(n) < 150 else n[:147] + '...'
print('samples', tot)
print('--- self')
for n, c in self_c.most_common(40): print(f"{100*c/tot:5.1f}% {short(n)}")
print('--- inclusive')
for n, c in incl.most_common(70): print(f"{100*c/tot:5.1f}% {short(n)}")
print('--- callers of libc/libcuda leaf samples (first ndp frame)')
cc = collections.Counter()
for st in stacks:
    frames = [name(a) for a in st[2:]]
    if not frames or not (frames[0].startswith('libc') or frames[0].startswith('libcuda')): continue
    lib = frames[0].split('.')[0]
    first = next((f for f in frames if not f.startswith('lib')), '?')
    cc[(lib, first)] += 1
for (lib, f), c in cc.most_common(30): print(f"{100*c/tot:5.1f}% {lib} <- {short(f)}")
