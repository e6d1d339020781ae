#!/usr/bin/env python3
"""What each level of a flattened recursion cost, from an NDP_PROFILE=trace log (stderr of
`NDP_PROFILE=trace ndp run --backend=cuda PROG`): its launches, read-backs, driver allocations
and wall time.

    trace_levels.py TRACE FUNCTION [--run K] [--kernels]

A run is a stretch of the trace spent in FUNCTION (e.g. `hsplit<float>`), between statements
of other functions: a call of the recursion from outside, all its levels down and back up.
A level starts at each appearance of FUNCTION's first statement in the run; the last level
also holds the way back up (the merges and flattens after the deepest calls). Each trace
line starts with microseconds since the first (runtime/cuda/trace.h), so a level's time is
from its first line to the next level's, the trace's own writing included (about a
microsecond a line). --run picks the K-th run (default: the last, warm one), --kernels adds
the run's launches by kernel."""
import argparse
import collections
import re
import signal
import sys

STATEMENT = re.compile(r"^\s*([\d.]+) ndp trace: (.+?): (.+) \[(\d+) instances\]$")
LAUNCH = re.compile(r"^\s*([\d.]+)\s+launch (\S+) grid (\d+) block (\d+)$")
READ_BACK = re.compile(r"^\s*([\d.]+)\s+read-back of (\d+) parts$")
ALLOC = re.compile(r"^\s*([\d.]+)\s+driver allocation of (\d+) bytes$")


def parse(lines):
    """(time, kind, fields) for each trace line: kind is stmt, launch, read or alloc."""
    for line in lines:
        if m := STATEMENT.match(line):
            yield float(m[1]), "stmt", (m[2], m[3], int(m[4]))
        elif m := LAUNCH.match(line):
            yield float(m[1]), "launch", (m[2],)
        elif m := READ_BACK.match(line):
            yield float(m[1]), "read", (int(m[2]),)
        elif m := ALLOC.match(line):
            yield float(m[1]), "alloc", (int(m[2]),)


def runs_of(events, function):
    """The runs: lists of events from a statement of `function` to the next statement of
    another function (launches and read-backs belong to the statement before them)."""
    runs, current, inside = [], [], False
    for e in events:
        if e[1] == "stmt":
            inside = e[2][0] == function
            if inside and not current:
                current = [e]
                continue
            if not inside and current:
                runs.append((current, e[0]))  # the run ends where the other function starts
                current = []
        if inside and current:
            current.append(e)
    if current:
        runs.append((current, current[-1][0]))
    return runs


def levels_of(run, end_time):
    """Rows (instances, statements, launches, read-backs, driver allocations, microseconds) a level.

    >>> trace = '''
    ...     10.0 ndp trace: main: x_1 = iota(n_0) [1 instances]
    ...     12.0 ndp trace: f<int>: p_2 = kernel(a_0) [4 instances]
    ...     13.0   launch ndp_kernel grid 1 block 256
    ...     18.0 ndp trace: f<int>: n_3 = count(p_2) [4 instances]
    ...     19.0   launch ndp_count_true grid 1 block 256
    ...     20.0   read-back of 1 parts
    ...     21.0   driver allocation of 4096 bytes
    ...     30.0 ndp trace: f<int>: p_2 = kernel(a_0) [2 instances]
    ...     31.0   launch ndp_kernel grid 1 block 256
    ...     35.0 ndp trace: f<int>: r_4 = merge(p_2, b_5, b_6) [2 instances]
    ...     40.0 ndp trace: main: y_7 = sum(r_4) [1 instances]
    ...     41.0 ndp trace: f<int>: p_2 = kernel(a_0) [8 instances]
    ... '''.splitlines()
    >>> runs = runs_of(parse(trace), "f<int>")
    >>> len(runs)
    2
    >>> levels_of(*runs[0])
    [(4, 2, 2, 1, 1, 18.0), (2, 2, 1, 0, 0, 10.0)]
    >>> levels_of(*runs[1])
    [(8, 1, 0, 0, 0, 0.0)]
    """
    first = run[0][2][1]
    starts = [i for i, e in enumerate(run) if e[1] == "stmt" and e[2][1] == first]
    rows = []
    for k, s in enumerate(starts):
        stop = starts[k + 1] if k + 1 < len(starts) else len(run)
        part = run[s:stop]
        until = run[stop][0] if stop < len(run) else end_time
        rows.append((part[0][2][2], sum(e[1] == "stmt" for e in part), sum(e[1] == "launch" for e in part),
                     sum(e[1] == "read" for e in part), sum(e[1] == "alloc" for e in part), until - part[0][0]))
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("trace")
    ap.add_argument("function")
    ap.add_argument("--run", type=int, default=-1, help="which run (1 is the first; default the last)")
    ap.add_argument("--kernels", action="store_true", help="also the run's launches by kernel")
    a = ap.parse_args()
    with open(a.trace, errors="replace") as f:
        runs = runs_of(parse(f), a.function)
    if not runs:
        sys.exit(f"trace_levels: no statement of {a.function} in {a.trace}")
    if a.run == 0 or abs(a.run) > len(runs):
        sys.exit(f"trace_levels: --run {a.run}, where the trace has {len(runs)} runs of {a.function}")
    run, end = runs[a.run - 1 if a.run > 0 else a.run]
    print(f"{a.function}: {len(runs)} runs; run {a.run if a.run > 0 else len(runs) + 1 + a.run}, "
          f"from its first statement: {run[0][2][1]}")
    print(f"{'level':>5} {'instances':>10} {'statements':>10} {'launches':>8} {'read-backs':>10} {'allocs':>6} {'us':>9}")
    rows = levels_of(run, end)
    for k, (inst, stmts, launches, reads, allocs, us) in enumerate(rows, 1):
        print(f"{k:>5} {inst:>10} {stmts:>10} {launches:>8} {reads:>10} {allocs:>6} {us:>9.1f}")
    print(f"{'all':>5} {'':>10} {sum(r[1] for r in rows):>10} {sum(r[2] for r in rows):>8} "
          f"{sum(r[3] for r in rows):>10} {sum(r[4] for r in rows):>6} {sum(r[5] for r in rows):>9.1f}")
    if a.kernels:
        kernels = collections.Counter(e[2][0] for e in run if e[1] == "launch")
        for name, count in kernels.most_common():
            print(f"{count:>6}  {name}")


if __name__ == "__main__":
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # piped into head: stop quietly
    main()
