import sys, subprocess, collections, bisect
samples_path, binary = sys.argv[1], sys.argv[2]
maps = []
for line in open(samples_path + '.maps'):
    parts = line.split()
    if len(parts) >= 6:
        lo, hi = (int(x, 16) for x in parts[0].split('-'))
        maps.append((lo, hi, int(parts[2], 16), parts[5]))
def where(a):
    for lo, hi, off, path in maps:
        if lo <= a < hi: return path, a - lo + off
    return None, a
# libc dynamic symbols
syms = []
for line in subprocess.run(['nm', '-D', '--defined-only', 'libc.so.6'], capture_output=True, text=True).stdout.split('\n'):
    p = line.split()
    if len(p) == 3 and p[1] in 'TtWi': syms.append((int(p[0], 16), p[2]))
syms.sort(); sa = [s[0] for s in syms]
def libc_name(o):
    i = bisect.bisect_right(sa, o) - 1
    return 'libc:' + (syms[i][1] if i >= 0 else '?')
stacks = [[int(x, 16) for x in line.split()] for line in open(samples_path)]
offs = sorted({where(a)[1] for st in stacks for a in st if (where(a)[0] or '').endswith('/ndp')})
out = subprocess.run(['addr2line', '-f', '-C', '-e', binary] + [hex(o - 1) for o in offs], capture_output=True, text=True).stdout.split('\n')
names = {o: out[2*i] for i, o in enumerate(offs)}
def name(a):
    p, o = where(a)
    if p is None: return '?'
    if p.endswith('/ndp'): return names.get(o, '?')
    if 'libc.so' in p: return libc_name(o)
    return p.split('/')[-1]
self_c, incl, first_ndp = collections.Counter(), collections.Counter(), collections.Counter()
for st in stacks:
    fr = [name(a) for a in st[2:]]
    if not fr: continue
    self_c[fr[0]] += 1
    for f in set(fr): incl[f] += 1
    if not fr[0].startswith('ndp::'):
        nd = next((f for f in fr if f.startswith('ndp::') or f.startswith('std::')), '?')
        first_ndp[fr[0][:40] + ' <- ' + nd[:110]] += 1
tot = len(stacks)
print('samples', tot)
def short(n): return n if len(n) < 160 else n[:157] + '...'
print('--- self')
for n, c in self_c.most_common(45): print('%5.1f%% %s' % (100*c/tot, short(n)))
print('--- inclusive')
for n, c in incl.most_common(120): print('%5.1f%% %s' % (100*c/tot, short(n)))
print('--- non-ndp leaf <- first ndp/std frame')
for n, c in first_ndp.most_common(40): print('%5.1f%% %s' % (100*c/tot, short(n)))
