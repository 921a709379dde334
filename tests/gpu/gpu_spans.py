"""A real-GPU check of ACTIVITY with torch (tests/gpu/run.sh runs it where a GPU is):
what gpu_spans.cu does in C, from Python spans. Known kernels inside known lapse spans
(torch.cuda._sleep is one spin kernel, Tensor.fill_ one fill kernel, a pinned
host-to-device copy_ one memcpy), each span's kernels timed with torch.cuda.Event on
the same stream; then the run's report must give each span its exact kernel count and
a GPU time within 5% of the events'. One line per check, PASS or FAIL with the figures.

    python tests/gpu/gpu_spans.py [RUN_DIR]

Exit 0: every check holds; 1: one failed; 77: nothing to check here (no torch, no
CUDA device), said on one line. Needs lapse installed for this Python (pip install .)
and LAPSE_CUPTI_PATH naming a libcupti.so where the loader does not find one.
"""

from __future__ import annotations

import sys
import tempfile

from gpu_check import check, cuda_torch, exit_code

STEPS = 5
CYCLES = 2_000_000  # one spin kernel: ~1 ms at 2 GHz
SPANS = {"step/forward": (4, CYCLES), "step/backward": (2, 3 * CYCLES)}  # kernels, cycles each
TOLERANCE = 0.05


def timed(torch, span, name: str, kernels: int, cycles: int, events: dict) -> None:
    """`kernels` spin kernels in span `name`, between two events on the current stream."""
    stream = torch.cuda.current_stream()
    a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    with span(name):
        a.record(stream)
        for _ in range(kernels):
            torch.cuda._sleep(cycles)
        b.record(stream)
    b.synchronize()
    events.setdefault(name, []).append(a.elapsed_time(b) * 1e6)  # ms -> ns


def main(argv: list[str]) -> int:
    torch = cuda_torch("gpu_spans.py")
    if torch is None:
        return 77
    import lapse
    from lapse import Feature, Profile, Profiler, span

    run_dir = argv[1] if len(argv) > 1 else tempfile.mkdtemp(prefix="lapse-gpu-torch-")
    x = torch.empty(1 << 20, device="cuda")
    host = torch.ones(1 << 20, pin_memory=True)
    torch.cuda._sleep(1000)  # CUDA's context, the modules: before lapse collects
    x.fill_(0.0)
    x.copy_(host, non_blocking=True)
    torch.cuda.synchronize()

    events: dict[str, list[float]] = {}
    features = Feature.SPANS | Feature.ACTIVITY
    try:
        profiler = Profiler(features=features, role="torch", run_dir=run_dir, strict=True)
        profiler.start()
    except Exception as e:  # strict: ACTIVITY could not start, and why
        check(False, f"ACTIVITY started ({type(e).__name__}: {e})")
        return 1
    try:
        for _ in range(STEPS):
            with span("step"):
                for path, (kernels, cycles) in SPANS.items():
                    timed(torch, span, path.split("/")[1], kernels, cycles, events)
                with span("fill"):  # 2 fill kernels and a 4 MiB host-to-device copy
                    x.fill_(1.0)
                    x.fill_(2.0)
                    x.copy_(host, non_blocking=True)
        torch.cuda.synchronize()
    finally:
        profiler.stop()

    doc = Profile.load(run_dir).to_dict()
    (role,) = [r for r in doc["roles"] if r["role"] == "torch"]
    check(role["gpu_activity_state"] == "measured",
          f"role torch: GPU activity {role['gpu_activity_state']} (lapse {lapse.__version__})")
    rows = {s["path"]: s for s in (role["gpu_activity"] or {}).get("by_span", [])}
    empty = {"kernels": 0, "kernel_gpu_ns": 0, "copies": 0, "copy_bytes": 0}
    for path, (kernels, _) in SPANS.items():
        s = rows.get(path, empty)
        check(s["kernels"] == STEPS * kernels,
              f"{path}: {s['kernels']} kernels, launched {STEPS * kernels}")
        ns = sum(events[path.split("/")[1]])
        err = abs(s["kernel_gpu_ns"] - ns) / ns
        check(err <= TOLERANCE, f"{path}: GPU time {s['kernel_gpu_ns'] / 1e6:.3f} ms vs "
                                f"torch.cuda.Event {ns / 1e6:.3f} ms ({100 * err:.2f}%, "
                                f"bound {100 * TOLERANCE:.0f}%)")
    fill = rows.get("step/fill", empty)
    check((fill["kernels"], fill["copies"], fill["copy_bytes"]) == (2 * STEPS, STEPS, STEPS * 4 << 20),
          f"step/fill: {fill['kernels']} kernels, {fill['copies']} copies of "
          f"{fill['copy_bytes']} bytes ({2 * STEPS}, {STEPS}, {STEPS * 4 << 20})")
    others = sorted(str(p) for p in rows if p not in SPANS and p != "step/fill")
    check(not others, f"no GPU work attributed elsewhere ({others})")
    print("dropped_activities:", role["gpu_activity"] and role["gpu_activity"]["dropped_activities"],
          " caveats:", [c["kind"] for c in doc["caveats"]])
    return exit_code()


if __name__ == "__main__":
    sys.exit(main(sys.argv))
