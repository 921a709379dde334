"""Benchmark target: a pure Python workload whose stack is DEPTH frames deep
(recursion down to DEPTH, then a loop of calls to ten leaf functions with known
shares), for SECONDS seconds (0: until killed), or for ROUNDS rounds with
--rounds (then it prints the time the rounds took, measured inside). Prints
"ready" when the deep stack is in place.

With --go, the rounds start only when a line arrives on standard input (after
"ready"), so that a sampler can attach first.

usage: deep.py DEPTH SECONDS
       deep.py DEPTH --rounds ROUNDS [--go]
"""
import sys
import time


# Ten leaves whose self time grows as 1, 2, ..., 10 (each runs the loop inline, so
# the time is its own): shares of about 1.8%, 3.6%, ... 18.2% of the leaves' time.
def leaf_1(n):
    x = 0
    for i in range(n):
        x += i
    return x


def leaf_2(n):
    x = 0
    for i in range(n):
        x += i
    return x


def leaf_3(n):
    x = 0
    for i in range(n):
        x += i
    return x


def leaf_4(n):
    x = 0
    for i in range(n):
        x += i
    return x


def leaf_5(n):
    x = 0
    for i in range(n):
        x += i
    return x


def leaf_6(n):
    x = 0
    for i in range(n):
        x += i
    return x


def leaf_7(n):
    x = 0
    for i in range(n):
        x += i
    return x


def leaf_8(n):
    x = 0
    for i in range(n):
        x += i
    return x


def leaf_9(n):
    x = 0
    for i in range(n):
        x += i
    return x


def leaf_10(n):
    x = 0
    for i in range(n):
        x += i
    return x


T0 = C0 = 0.0
LEAVES = [leaf_1, leaf_2, leaf_3, leaf_4, leaf_5, leaf_6, leaf_7, leaf_8, leaf_9, leaf_10]


def spin(seconds, max_rounds):
    end = time.monotonic() + seconds if seconds > 0 else float("inf")
    print("ready", flush=True)
    if "--go" in sys.argv:
        sys.stdin.readline()
        global T0, C0
        T0, C0 = time.perf_counter(), time.process_time()
    rounds = 0
    while rounds < max_rounds and (max_rounds < float("inf") or time.monotonic() < end):
        for k, leaf in enumerate(LEAVES, 1):
            leaf(130 * k)
        rounds += 1
    return rounds


def down(k, depth, seconds, max_rounds):
    if k >= depth:
        return spin(seconds, max_rounds)
    return down(k + 1, depth, seconds, max_rounds)


def main():
    depth = int(sys.argv[1]) if len(sys.argv) > 1 else 50
    seconds, max_rounds = 0.0, float("inf")
    if len(sys.argv) > 3 and sys.argv[2] == "--rounds":
        max_rounds = int(sys.argv[3])
    elif len(sys.argv) > 2:
        seconds = float(sys.argv[2])
    # <module>, main, down x (depth - 3), spin, and the leaf: depth frames in all
    global T0, C0
    T0, C0 = time.perf_counter(), time.process_time()
    rounds = down(0, max(depth - 4, 0), seconds, max_rounds)
    print(f"rounds {rounds} in {time.perf_counter() - T0:.6f} s, cpu {time.process_time() - C0:.6f} s",
          flush=True)


if __name__ == "__main__":
    main()
