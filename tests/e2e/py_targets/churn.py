"""A target that keeps changing under the sampler: threads that come and go with
stacks of random depth, and code objects created and freed all the time (so their
addresses are reused). Each generated pair f_<i> -> g_<i> is made by one exec; a
sample that shows f_<i> calling g_<j> with i != j would be a code object read
from a stale cache.

With HOLD_MS, each pair runs for that long before the next one replaces it: most
samples then see no new code object since the previous one, and the sampler must
still notice each replacement.

usage: churn.py SECONDS [HOLD_MS]
"""
import random
import sys
import threading
import time


def recurse(k):
    if k == 0:
        x = 0
        for i in range(2000):
            x += i
        return x
    return recurse(k - 1)


def worker(depth):
    recurse(depth)


def make_pair(i):
    src = f"def g_{i}():\n    x = 0\n    for k in range(300):\n        x += k\n    return x\n\n" \
          f"def f_{i}():\n    return g_{i}()\n"
    ns = {}
    exec(compile(src, f"<gen {i}>", "exec"), ns)
    return ns[f"f_{i}"]


def main():
    end = time.monotonic() + float(sys.argv[1])
    hold = float(sys.argv[2]) / 1000 if len(sys.argv) > 2 else 0.0
    i = 0
    rng = random.Random(1)
    threads = []
    while time.monotonic() < end:
        f = make_pair(i)
        f()
        until = time.monotonic() + hold
        while time.monotonic() < until:
            f()
        del f
        i += 1
        if i % 50 == 0:
            threads = [t for t in threads if t.is_alive()]
            if len(threads) < 8:
                t = threading.Thread(target=worker, args=(rng.randint(1, 120),))
                t.start()
                threads.append(t)
    for t in threads:
        t.join()
    print("pairs", i)


if __name__ == "__main__":
    main()
