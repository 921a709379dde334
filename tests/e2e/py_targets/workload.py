"""A CPU-bound target with known shares: hot() does three times the work of cold(),
both pure Python, so hot holds about 75% of the time and cold 25%.

usage: workload.py SECONDS [--exit-code N]
"""
import sys
import time


def work(n):
    x = 0
    for i in range(n):
        x += i * i
    return x


def hot():
    return work(30000)


def cold():
    return work(10000)


def main():
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 2.0
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        hot()
        cold()
    if "--exit-code" in sys.argv:
        sys.exit(int(sys.argv[sys.argv.index("--exit-code") + 1]))


if __name__ == "__main__":
    main()
