"""Benchmark target: a pure Python workload whose stack is DEPTH frames deep
(recursion down to DEPTH, then a loop of calls to leaf functions with known
shares), for SECONDS seconds (0: until killed). Prints "ready" when the deep
stack is in place.

usage: deep.py DEPTH SECONDS
"""
import sys
import time


def leaf_a(n):
    x = 0
    for i in range(n):
        x += i
    return x


def leaf_b(n):
    x = 0
    for i in range(n):
        x ^= i
    return x


def leaf_c(n):
    return sum(range(n))


def spin(seconds):
    end = time.monotonic() + seconds if seconds > 0 else float("inf")
    print("ready", flush=True)
    rounds = 0
    while time.monotonic() < end:
        leaf_a(4000)
        leaf_b(2000)
        leaf_c(1000)
        rounds += 1
    return rounds


def down(k, depth, seconds):
    if k >= depth:
        return spin(seconds)
    return down(k + 1, depth, seconds)


def main():
    depth = int(sys.argv[1]) if len(sys.argv) > 1 else 50
    seconds = float(sys.argv[2]) if len(sys.argv) > 2 else 0
    # <module>, main, down x (depth - 3), spin, and the leaf: depth frames in all
    t0 = time.perf_counter()
    rounds = down(0, max(depth - 4, 0), seconds)
    print(f"rounds {rounds} in {time.perf_counter() - t0:.3f} s", flush=True)


if __name__ == "__main__":
    main()
