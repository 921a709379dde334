"""A real-GPU check of VRAM from torch (docs/python.md, "VRAM from torch"; tests/gpu/run.sh
runs it where a GPU is): a torch program allocates 256 MiB, frees it, allocates 64 MiB,
then resets torch's peak stats and allocates 32 MiB; its report must show, for device
0, VRAM allocated (peak) within 3% of 256 MiB and equal to what torch itself said
before the reset, VRAM reserved (peak) >= allocated (and >= torch's before the
reset), the reset counted, the device's
uuid torch's, and the torch line joined by uuid to NVML's line of the same device (one
line: NVML's uuid is torch's, "GPU-" aside; the torch line carries NVML's figures, the
NVML line torch's peaks). One line per check, PASS or FAIL with the figures.

    python tests/gpu/check_vram.py [RUN_DIR]

Exit 0: every check holds; 1: one failed; 77: nothing to check here (no torch, no
CUDA device), said on one line. Needs lapse installed for this Python (pip install .).
"""

from __future__ import annotations

import sys
import tempfile
import time

from gpu_check import check, cuda_torch, exit_code

MIB = 1 << 20


def main(argv: list[str]) -> int:
    torch = cuda_torch("check_vram.py")
    if torch is None:
        return 77
    from lapse import Profile, Profiler

    run_dir = argv[1] if len(argv) > 1 else tempfile.mkdtemp(prefix="lapse-gpu-vram-")
    with Profiler(run_dir=run_dir, snapshot_ms=200, role="vram"):
        x = torch.empty(256 * MIB, dtype=torch.uint8, device="cuda:0")
        torch.cuda.synchronize()
        del x
        y = torch.empty(64 * MIB, dtype=torch.uint8, device="cuda:0")
        torch.cuda.synchronize()
        torch_peak = torch.cuda.max_memory_allocated(0)
        torch_reserved = torch.cuda.max_memory_reserved(0)
        time.sleep(0.6)  # two snapshots: lapse has read the 256 MiB peak
        torch.cuda.reset_peak_memory_stats(0)
        del y
        z = torch.empty(32 * MIB, dtype=torch.uint8, device="cuda:0")
        torch.cuda.synchronize()
        time.sleep(0.6)  # a reading after the reset
        del z
    uuid = str(torch.cuda.get_device_properties(0).uuid)
    doc = Profile.load(run_dir).to_dict()
    role = {r["role"]: r for r in doc["roles"]}["vram"]
    vram = [v for v in role.get("vram", []) if v["torch_index"] == 0]
    check(len(vram) == 1, f"one torch line for device 0 ({len(vram)}; vram_error {role.get('vram_error')})")
    if not vram:
        return 1
    v = vram[0]
    got, want = v["allocated_peak_bytes"], 256 * MIB
    check(abs(got - want) <= 0.03 * want,
          f"VRAM allocated (peak) {got / MIB:.1f} MiB within 3% of 256 MiB")
    check(got == torch_peak, f"allocated peak {got} = torch's max_memory_allocated {torch_peak} "
                             "before the reset")
    check(v["reserved_peak_bytes"] >= max(got, torch_reserved),
          f"VRAM reserved (peak) {v['reserved_peak_bytes'] / MIB:.1f} MiB >= allocated and >= "
          f"torch's {torch_reserved / MIB:.1f} MiB before the reset")
    check(role["vram_resets"] >= 1, f"the reset seen ({role['vram_resets']} readings)")
    check(v["uuid"] == uuid, f"uuid {v['uuid']!r} is torch's {uuid!r}")
    check(v["join"] == "uuid" and v["nvml_line"] is not None,
          f"torch's cuda:0 joined to an NVML line by uuid (join {v['join']!r}, "
          f"join_why {v['join_why']!r}; NVML lines: {len(role['gpu'])})")
    if v["nvml_line"] is not None:
        g = role["gpu"][v["nvml_line"]]
        nvml_uuid = g["uuid"] or ""
        check(nvml_uuid.lower().removeprefix("gpu-") == uuid.lower().removeprefix("gpu-"),
              f"NVML's uuid {nvml_uuid!r} (device {g['device_index']}) is torch's {uuid!r}")
        check(g["vram_line"] is not None and role["vram"][g["vram_line"]] is v
              and g["vram_allocated_peak_bytes"] == got,
              f"the NVML line carries torch's peaks ({g['vram_allocated_peak_bytes']})")
        check(v["vram_held_peak_bytes"] == g["vram_held_peak_bytes"] and
              (v["vram_held_peak_bytes"] or 0) > 0,
              f"the torch line carries NVML's VRAM held peak {v['vram_held_peak_bytes']}")
    return exit_code()


if __name__ == "__main__":
    sys.exit(main(sys.argv))
