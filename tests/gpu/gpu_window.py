"""A real-GPU check of a torch backend window with ACTIVITY on (tests/gpu/run.sh runs
it where a GPU is): 6 entries of "iteration", each launching KERNELS spin kernels
(torch.cuda._sleep: one kernel each) and synchronising, with
backend_window=(3, 5): torch.profiler (Kineto, CUDA activities) holds CUPTI for entries
3 and 4, lapse's ACTIVITY yields it to the window and takes it back. Checks: the trace
exists, is JSON, and holds the window's kernels (2 x KERNELS); lapse attributes the
kernels of entries 1, 2, 5 and 6 (4 x KERNELS) to "iteration" and claims none of the
window's; the report says ACTIVITY was paused for the window. One line per check, PASS
or FAIL with the figures.

    python tests/gpu/gpu_window.py [RUN_DIR]

Exit 0: every check holds; 1: one failed; 77: nothing to check here (no torch, no
CUDA device), said on one line. Needs lapse installed for this Python (pip install .)
and LAPSE_CUPTI_PATH naming a libcupti.so where the loader does not find one.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile

from gpu_check import check, cuda_torch, exit_code

ENTRIES = 6
KERNELS = 3
CYCLES = 1_000_000
WINDOW = (3, 5)


def main(argv: list[str]) -> int:
    torch = cuda_torch("gpu_window.py")
    if torch is None:
        return 77
    import lapse
    from lapse import Feature, Profiler

    run_dir = argv[1] if len(argv) > 1 else tempfile.mkdtemp(prefix="lapse-gpu-window-")
    torch.cuda._sleep(1000)  # CUDA's context, the modules: before lapse collects
    torch.cuda.synchronize()
    profiler = Profiler(features=Feature.SPANS | Feature.ACTIVITY, role="window", run_dir=run_dir,
                        backend="torch", backend_window=WINDOW, window_phase="iteration")
    with profiler:
        check(Feature.ACTIVITY not in profiler.missing,
              f"ACTIVITY started ({profiler.missing_why.get(Feature.ACTIVITY)})")
        for _ in range(ENTRIES):
            with lapse.phase("iteration"):
                for _ in range(KERNELS):
                    torch.cuda._sleep(CYCLES)
                torch.cuda.synchronize()
    result = profiler.backend_result or {}
    check(profiler.backend_missing is None, f"the torch window ran ({profiler.backend_missing})")
    check((result.get("opened_entry"), result.get("closed_entry")) == WINDOW,
          f"opened on entry {result.get('opened_entry')}, closed on {result.get('closed_entry')} "
          f"(asked {WINDOW})")
    trace = result.get("trace") or ""
    kernels_in_trace = -1
    if os.path.exists(trace):
        with open(trace) as f:
            events = json.load(f)["traceEvents"]
        kernels_in_trace = sum(1 for e in events if e.get("cat") == "kernel")
    inside = (WINDOW[1] - WINDOW[0]) * KERNELS
    check(kernels_in_trace == inside, f"the trace {trace or '(none)'} holds {kernels_in_trace} "
                                      f"kernels, launched {inside} inside the window")
    doc = profiler.result().to_dict()
    (role,) = [r for r in doc["roles"] if r["role"] == "window"]
    spans = {s["path"]: s["kernels"] for s in (role.get("gpu_activity") or {}).get("by_span", [])}
    outside = (ENTRIES - (WINDOW[1] - WINDOW[0])) * KERNELS
    check(spans.get("iteration") == outside,
          f"lapse: {spans.get('iteration')} kernels in iteration, launched {outside} outside the "
          f"window (by span: {spans})")
    paused = [c for c in doc["caveats"] if c["kind"] == "activity_paused"]
    windows = doc.get("backend_windows") or [{}]
    check(len(paused) == 1 and paused[0].get("count") == 1,
          f"the report says ACTIVITY was paused once, for the window ({[c['message'] for c in paused]})")
    print("backend window:", windows)
    return exit_code()


if __name__ == "__main__":
    sys.exit(main(sys.argv))
