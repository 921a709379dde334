"""A real-GPU check of `lapse view`'s GPU tracks (docs/view.md; tests/gpu/run.sh runs it
where a GPU is), with torch: 131,072 one-element add_ kernels, 8 a "step" span, on two
CUDA streams by turns (the fake's scale run of tests/e2e/test_view_gpu.py, on a real
device), then `lapse view --no-compress` of the run and its page data:

- every kernel of the spans is in the page, on the track of its stream, its launching
  span found (the bar the click's arrow starts from);
- a stream's kernels do not overlap on a real device: each stream's track has one row
  (the fake's launch faster than they run and fill 16: the view's worst case, timed by
  the e2e scale test);
- figures, no bound: `lapse view`'s time and the page's size, launch to start (min,
  median).

    python tests/gpu/view_gpu.py LAPSE_BIN [RUN_DIR]

Exit 0: every check holds; 1: one failed; 77: nothing to check here (no torch, no CUDA
device), said on one line. Needs lapse installed for this Python and LAPSE_CUPTI_PATH
naming a libcupti.so where the loader does not find one.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
import time

from gpu_check import check, cuda_torch, exit_code

KERNELS = 131072
PER_SPAN = 8


def main(argv: list[str]) -> int:
    torch = cuda_torch("view_gpu.py")
    if torch is None:
        return 77
    from lapse import Feature, Profiler, span

    lapse_bin = argv[1]
    run_dir = argv[2] if len(argv) > 2 else tempfile.mkdtemp(prefix="lapse-gpu-view-")
    x = torch.zeros(1, device="cuda")
    streams = [torch.cuda.Stream(), torch.cuda.Stream()]
    for s in streams:  # the kernel's module and the streams: before lapse collects
        with torch.cuda.stream(s):
            x.add_(1)
    torch.cuda.synchronize()
    try:
        profiler = Profiler(features=Feature.SPANS | Feature.ACTIVITY, role="view",
                            run_dir=run_dir, max_spans=KERNELS // PER_SPAN + 16, strict=True)
        profiler.start()
    except Exception as e:  # strict: ACTIVITY could not start, and why
        check(False, f"ACTIVITY started ({type(e).__name__}: {e})")
        return 1
    try:
        for i in range(KERNELS // PER_SPAN):
            with span("step"), torch.cuda.stream(streams[i % 2]):
                for _ in range(PER_SPAN):
                    x.add_(1)
        torch.cuda.synchronize()
    finally:
        profiler.stop()
    return check_view(lapse_bin, run_dir, KERNELS)


def check_view(lapse_bin: str, run_dir: str, kernels: int) -> int:
    """`lapse view` of run_dir: its page's GPU tracks against the kernels launched."""
    html = run_dir.rstrip("/") + ".html"
    t = time.perf_counter()
    r = subprocess.run([lapse_bin, "view", run_dir, "-o", html, "--no-compress"],
                       capture_output=True, text=True)
    took = time.perf_counter() - t
    check(r.returncode == 0, f"lapse view: exit {r.returncode} in {took:.2f} s, "
                             f"{os.path.getsize(html) if r.returncode == 0 else 0:,} bytes ({r.stderr.strip()})")
    if r.returncode:
        return 1
    m = re.search(r'id="lapse-view"[^>]*>(.*?)</script>', open(html).read(), re.S)
    (proc,) = [p for p in json.loads(m.group(1))["processes"] if p["gpu"]]
    gpu = proc["gpu"] or {"tracks": []}
    in_step = found = tracks = 0
    queue = []
    for tr in gpu["tracks"]:
        ops = len(tr["begin"])
        steps = [i for i in range(ops) if tr["path"][i] is not None and
                 proc["paths"][tr["path"][i]].split("/")[-1] == "step"]
        in_step += len(steps)
        found += sum(1 for i in steps if tr["span"][i] is not None)
        queue += [tr["queue_ns"][i] for i in steps]
        print(f"track GPU {tr['device']} stream {tr['stream']}: {ops} records, {tr['rows']} rows, "
              f"{len(steps)} launched in step")
        if steps:
            tracks += 1
            check(tr["rows"] == 1, f"GPU {tr['device']} stream {tr['stream']}: one row "
                                   f"({tr['rows']}: a stream's kernels do not overlap)")
    check(in_step == kernels, f"{in_step} kernels launched in step in the page ({kernels})")
    check(found == in_step, f"{found} of them with their launching span's bar")
    check(tracks == 2, f"the two streams' kernels on {tracks} tracks (2; {len(gpu['tracks'])} in all)")
    if queue:
        queue.sort()
        print(f"launch to start: min {queue[0] / 1e3:.1f} us, median {queue[len(queue) // 2] / 1e3:.1f} us")
    return exit_code()


if __name__ == "__main__":
    sys.exit(main(sys.argv))
