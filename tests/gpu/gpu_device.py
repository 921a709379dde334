"""A real-GPU check of DEVICE (NVML) and of the GPU phases (tests/gpu/run.sh runs it
where a GPU is), with torch:

- `this run` > 0 and VRAM held > 0 for the process whose kernels kept the device busy,
  and no GPU reading for a CPU-only sibling in the same run directory (a separate
  process, started by this one with a copied environment);
- a phase that only enqueues a 50 ms kernel ends before it (wall < 25 ms), the same
  phase with sync=True lasts it (wall >= 47.5 ms);
- phase(gpu_time=True): its GPU time within 5% of torch.cuda.Event around the same
  kernels;
- what DEVICE adds to a session's start and stop (nvmlInit and the first reading):
  Profiler.start() + stop() with DEVICE and without, 5 of each, in turn (a figure,
  no bound).

    python tests/gpu/gpu_device.py [RUN_DIR]

Exit 0: every check holds; 1: one failed; 77: nothing to check here (no torch, no
CUDA device), said on one line. Needs lapse installed for this Python (pip install .).
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time

from gpu_check import check, cuda_torch, exit_code

TOLERANCE = 0.05
KERNEL_MS = 50


def cycles_per_ms(torch) -> float:
    """Spin-kernel cycles in a millisecond of this device, measured by events."""
    a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    a.record()
    torch.cuda._sleep(10_000_000)
    b.record()
    b.synchronize()
    return 10_000_000 / a.elapsed_time(b)


def cpu_sibling(run_dir: str) -> None:
    """The CPU-only process of the run: spans, never CUDA."""
    from lapse import Feature, Profiler, span

    with Profiler(features=Feature.SPANS | Feature.DEVICE, role="cpu", run_dir=run_dir):
        deadline = time.monotonic() + 2.5
        while time.monotonic() < deadline:
            with span("cpu_work"):
                sum(range(10_000))


def start_stop_cost(Profiler, features, run_dir: str) -> float:
    t0 = time.perf_counter()
    p = Profiler(features=features, role="startcost", run_dir=run_dir)
    p.start()
    p.stop()
    return (time.perf_counter() - t0) * 1e3


def main(argv: list[str]) -> int:
    if len(argv) > 2 and argv[1] == "--cpu-sibling":
        cpu_sibling(argv[2])
        return 0
    torch = cuda_torch("gpu_device.py")
    if torch is None:
        return 77
    import lapse
    from lapse import Feature, Profile, Profiler, phase

    run_dir = argv[1] if len(argv) > 1 else tempfile.mkdtemp(prefix="lapse-gpu-device-")
    torch.cuda._sleep(1000)  # the context and modules, before lapse collects
    per_ms = cycles_per_ms(torch)
    x = torch.empty(64 << 20, dtype=torch.uint8, device="cuda")  # 64 MiB held

    env = dict(os.environ, LAPSE_DEVICE_INTERVAL_MS="100")
    sibling = subprocess.Popen([sys.executable, __file__, "--cpu-sibling", run_dir], env=env)
    os.environ["LAPSE_DEVICE_INTERVAL_MS"] = "100"
    features = Feature.SPANS | Feature.DEVICE
    try:
        profiler = Profiler(features=features, role="torch", run_dir=run_dir, strict=True)
        profiler.start()
    except Exception as e:  # strict: DEVICE could not start, and why
        check(False, f"DEVICE started ({type(e).__name__}: {e})")
        sibling.wait()
        return 1
    events_ns = 0.0
    try:
        with phase("busy"):  # ~2 s of spin kernels: the device busy with this run
            for _ in range(40):
                torch.cuda._sleep(int(KERNEL_MS * per_ms))
            torch.cuda.synchronize()
        with phase("unsynced"):
            torch.cuda._sleep(int(KERNEL_MS * per_ms))
        torch.cuda.synchronize()
        with phase("synced", sync=True):
            torch.cuda._sleep(int(KERNEL_MS * per_ms))
        for _ in range(5):
            a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            with phase("timed", gpu_time=True):
                a.record()
                for _ in range(4):
                    torch.cuda._sleep(int(2 * per_ms))
                b.record()
            b.synchronize()
            events_ns += a.elapsed_time(b) * 1e6
        x.fill_(1)
        torch.cuda.synchronize()
    finally:
        profiler.stop()
    sibling.wait()
    check(sibling.returncode == 0, f"CPU-only sibling exited {sibling.returncode}")

    doc = Profile.load(run_dir).to_dict()
    roles = {r["role"]: r for r in doc["roles"]}
    torch_role = roles.get("torch", {})
    gpus = torch_role.get("gpu") or []
    own = [g["this_run_pct"] for g in gpus if g["this_run_pct"] is not None]
    check(bool(own) and max(own) > 0,
          f"role torch: this run {own}% over {[g['readings'] for g in gpus]} readings "
          f"(lapse {lapse.__version__}, gpu_state {torch_role.get('gpu_state')})")
    held = [g["vram_held_peak_bytes"] for g in gpus]
    check(bool(held) and max(held) >= 64 << 20, f"role torch: VRAM held peak {held} bytes (>= 64 MiB)")
    cpu_role = roles.get("cpu", {})
    check(cpu_role != {} and not cpu_role.get("gpu"),
          f"role cpu: no GPU reading ({cpu_role.get('gpu_state')}, {cpu_role.get('gpu')})")
    phases = {p["path"]: p for p in torch_role.get("phases", [])}
    un, sy = phases.get("unsynced", {}), phases.get("synced", {})
    un_ms, sy_ms = un.get("total_ns", 0) / 1e6, sy.get("total_ns", 0) / 1e6
    check(un and un_ms < KERNEL_MS / 2, f"unsynced phase: {un_ms:.2f} ms wall (< {KERNEL_MS / 2} ms: enqueue only)")
    check(sy and sy_ms >= KERNEL_MS * (1 - TOLERANCE),
          f"sync=True phase: {sy_ms:.2f} ms wall (>= {KERNEL_MS * (1 - TOLERANCE):.1f} ms: the kernel)")
    timed = (phases.get("timed") or {}).get("gpu_time") or {}
    gpu_ns = timed.get("ns", 0)
    err = abs(gpu_ns - events_ns) / events_ns
    check(timed.get("timed") == 5 and err <= TOLERANCE,
          f"gpu_time phase: {gpu_ns / 1e6:.3f} ms over {timed.get('timed')} entries vs "
          f"torch.cuda.Event {events_ns / 1e6:.3f} ms ({100 * err:.2f}%, bound {100 * TOLERANCE:.0f}%)")

    cost_dir = tempfile.mkdtemp(prefix="lapse-gpu-startcost-")
    with_device, without = [], []
    for _ in range(5):
        with_device.append(start_stop_cost(Profiler, Feature.SPANS | Feature.DEVICE, cost_dir))
        without.append(start_stop_cost(Profiler, Feature.SPANS, cost_dir))
    print(f"start+stop of a session: {statistics.median(with_device):.2f} ms with DEVICE, "
          f"{statistics.median(without):.2f} ms without (medians of 5, in turn; "
          f"DEVICE adds {statistics.median(with_device) - statistics.median(without):+.2f} ms)")
    print("caveats:", [c["kind"] for c in doc["caveats"]])
    return exit_code()


if __name__ == "__main__":
    sys.exit(main(sys.argv))
