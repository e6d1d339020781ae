"""What a benchmark program (bench/programs/*.ndp) answers, read from `ndp run`'s output, for
the runners bench/run_cpu.py and bench/run_gpu_programs.py: `(checksum, [seconds of each run])`,
the first run a warm-up. (tests/meson.build runs these examples: python3 -m doctest.)

>>> parse("x = 3 : int\\nit = (12, [0.5, 1.5E-4, 2.0E-4, 3.0E-4]) : int, [float]\\n")
(12, [0.5, 0.00015, 0.0002, 0.0003])

A float checksum (blackscholes.ndp's sum of prices, barnes_hut.ndp's weighted forces) comes
back as a float; the runner compares it with a relative tolerance:

>>> parse("it = (-1.92999576353407E11, [0.19, 0.06]) : float, [float]")
(-192999576353.407, [0.19, 0.06])
>>> parse("it = (2907.0853792046, [9.6E-4]) : float, [float]")
(2907.0853792046, [0.00096])

The printer breaks a long answer after `it`:

>>> parse("it = \\n  (-7, [0.1, 0.2])\\n   : int, [float]\\n")
(-7, [0.1, 0.2])

It shows at most 100 elements of a sequence, so a program makes at most MAX_TIMED_RUNS timed
runs after its warm-up:

>>> parse("it = (1, [0.1, 0.2,...]) : int, [float]")
Traceback (most recent call last):
ValueError: the printer cut the list of run times (more than 100 runs)
>>> parse("bench_size = 10 : int")
Traceback (most recent call last):
ValueError: no (checksum, [seconds of each run]) answer
>>> timed_spread([9.0, 3.0, 1.0, 2.0])
{'best': 1.0, 'median': 2.0, 'slowest': 3.0, 'timed_runs': 3}
>>> timed_spread([4.0, 1.0, 3.0])
{'best': 1.0, 'median': 3.0, 'slowest': 3.0, 'timed_runs': 2}
"""
import re

MAX_TIMED_RUNS = 99

# Matched across lines: the printer may break it after `it`.
ANSWER = re.compile(r"(?m)^it\s*=\s*\((-?\d+|-?[0-9.]+(?:[eE][-+]?\d+)?|-?inf|nan),\s*\[([-+0-9.eE,\s]*|inf|nan)\]\)"
                    r"\s*:\s*(int|float),\s*\[float\]\s*$")


def checksum_value(text):
    """A checksum as a baseline prints it: an int where it is all digits, else a float.

    >>> checksum_value("-42"), checksum_value("5.62678093E8")
    (-42, 562678093.0)
    """
    return int(text) if re.fullmatch(r"-?\d+", text) else float(text)


def parse(output):
    """(checksum, seconds of each run) from the last answer in `output`; ValueError if none. The
    checksum is an int, or a float where the program's checksum is a float."""
    answers = list(ANSWER.finditer(output))
    if not answers:
        raise ValueError("no (checksum, [seconds of each run]) answer")
    if "..." in answers[-1].group(2):
        raise ValueError("the printer cut the list of run times (more than 100 runs)")
    seconds = [float(x) for x in answers[-1].group(2).split(",") if x.strip()]
    if not seconds:
        raise ValueError("the program timed no run")
    check = answers[-1].group(1)
    return (int(check) if answers[-1].group(3) == "int" else float(check)), seconds


def timed_spread(seconds):
    """Best, median (the upper middle run of an even number, as the primitives' benchmarks take
    it) and slowest of the timed runs: all but the first, the warm-up (all of one)."""
    timed = sorted(seconds[1:]) if len(seconds) > 1 else list(seconds)
    return {"best": timed[0], "median": timed[len(timed) // 2], "slowest": timed[-1], "timed_runs": len(timed)}
