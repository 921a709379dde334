"""Short calls, made all the time: a loop whose time goes mostly to methods that run
for well under a microsecond each (__init__ through the type call and __sub__ through
the number protocol, both called from C, and dot, a Python-to-Python call). A sampler
that reads the target while it runs finds these frames gone or replaced by the time it
reads them; their share then goes to the loop that calls them.

The target moves itself to the last CPU it may use (so that a sampler started beside
it runs elsewhere unless it follows it), prints "ready", and runs for SECONDS.

usage: short_calls.py SECONDS
"""
import os
import sys
import time


class Vec:
    __slots__ = ("x", "y", "z")

    def __init__(self, x, y, z):
        self.x = x
        self.y = y
        self.z = z

    def __sub__(self, other):
        return Vec(self.x - other.x, self.y - other.y, self.z - other.z)

    def dot(self, other):
        return self.x * other.x + self.y * other.y + self.z * other.z


def norm(v):
    return v.dot(v)


def pair(a, b):
    return norm(a - b) + norm(b)


def caller(n):
    vs = [Vec(i, 0.5 * i, 0.25) for i in range(n)]
    acc = 0.0
    for i in range(n - 1):
        acc += pair(vs[i], vs[i + 1])
    return acc


def main():
    cpus = os.sched_getaffinity(0)
    if len(cpus) > 1:
        os.sched_setaffinity(0, {max(cpus)})
    print("ready", flush=True)
    t0 = time.monotonic()
    while time.monotonic() - t0 < float(sys.argv[1]):
        caller(2000)


if __name__ == "__main__":
    main()
