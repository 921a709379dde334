"""A pyperformance benchmark as a sampling target: parked until told to go, then its
own work, unchanged, for a fixed time.

    python pyperf_target.py BENCHMARKS_DIR NAME SECONDS

BENCHMARKS_DIR is pyperformance's data-files/benchmarks (the pinned release that
bench/sampler installs into BUILD/bench-venv); NAME is a benchmark (raytrace,
richards, ...). The benchmark's run_benchmark.py runs as __main__ with its default
arguments, under a stand-in for the one thing it takes from pyperf: a Runner, whose
bench_func / bench_time_func call the benchmark over and over until SECONDS have
passed (no worker processes, no calibration). Prints "ready" once imported and
parked on standard input; a line there starts the work; prints "done LOOPS SECONDS"
at the end.
"""
from __future__ import annotations

import argparse
import runpy
import sys
import time
import types


class Runner:
    """pyperf.Runner as far as pyperformance's benchmarks use it."""

    seconds = 3.0

    def __init__(self, *args, **kwargs):
        self.metadata = {}
        self.argparser = argparse.ArgumentParser()

    def parse_args(self, args=None):
        return self.argparser.parse_args([] if args is None else args)

    def _repeat(self, call):
        print("ready", flush=True)
        sys.stdin.readline()
        t0 = time.perf_counter()
        loops = 0
        while time.perf_counter() - t0 < self.seconds:
            call()
            loops += 1
        print(f"done {loops} {time.perf_counter() - t0:.3f}", flush=True)

    def bench_func(self, name, func, *args, **kwargs):
        self._repeat(lambda: func(*args))

    def bench_time_func(self, name, func, *args, **kwargs):
        self._repeat(lambda: func(1, *args))

    def bench_async_func(self, name, func, *args, **kwargs):
        import asyncio

        self._repeat(lambda: asyncio.run(func(*args)))


def main() -> None:
    bench_dir, name, seconds = sys.argv[1], sys.argv[2], float(sys.argv[3])
    Runner.seconds = seconds
    pyperf = types.ModuleType("pyperf")
    pyperf.Runner = Runner
    pyperf.perf_counter = time.perf_counter
    sys.modules["pyperf"] = pyperf
    script = f"{bench_dir}/bm_{name}/run_benchmark.py"
    sys.argv = [script]
    runpy.run_path(script, run_name="__main__")


if __name__ == "__main__":
    main()
