#!/usr/bin/env bash
# The real-GPU check of ACTIVITY (docs/gpu_activity.md), for a machine with an NVIDIA
# GPU, its driver, the CUDA toolkit (nvcc) and a built lapse (make build):
#
#   tests/gpu/run.sh [BUILD_DIR]        (default build/)
#
# Builds tests/gpu/gpu_spans.cu against BUILD_DIR's liblapse, runs it with ACTIVITY
# beside a CPU-only sibling of the same run, and checks: the exact kernel count of
# each span, each span's GPU time within 5% of CUDA events around its kernels, the
# fill kernel and the memset attributed to step/fill, no GPU record for the sibling.
# Then tests/gpu/gpu_spans.py does the same with torch in Python spans (kernel counts
# per span, GPU time per span within 5% of torch.cuda.Event), with $LAPSE_PYTHON
# (default python3; it needs torch with CUDA and lapse installed: pip install .); a
# Python without torch or without a CUDA device is a SKIP line, not a failure.
# Then tests/gpu/gpu_device.py (same Python): DEVICE's `this run` > 0 and VRAM held for
# the torch process and no GPU reading for a CPU-only sibling, a phase that only
# enqueues a kernel vs the same with sync=True, phase(gpu_time=True) within 5% of
# torch.cuda.Event, and what DEVICE (nvmlInit) adds to a session's start and stop.
# Then tests/gpu/view_gpu.py (same Python): 131,072 kernels in spans on two streams,
# `lapse view` of them: every kernel in the page on its stream's track with its
# launching span, one row a stream (kernels of a stream do not overlap).
# Then tests/gpu/gpu_window.py: a torch backend window with ACTIVITY on (its trace holds
# the window's kernels, lapse's ACTIVITY the others', the report says it was paused).
# Then tests/gpu/check_vram.py: torch's VRAM allocated / reserved peaks in the GPU block,
# joined by uuid to NVML's line of the same device.
# Prints each check on one line, PASS or FAIL with its figures; exit 0 when every check
# holds. Under 4 minutes.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:-$repo/build}" && pwd)
work=$(mktemp -d /tmp/lapse-gpu-XXXXXX)
trap 'rm -rf "$work"' EXIT
command -v nvcc >/dev/null || { echo "tests/gpu/run.sh: no nvcc on PATH" >&2; exit 2; }
nvidia-smi -L || { echo "tests/gpu/run.sh: no GPU (nvidia-smi -L failed)" >&2; exit 2; }
cuda=$(dirname "$(dirname "$(command -v nvcc)")")
cupti=${LAPSE_CUPTI_PATH:-}
for c in "$cuda/extras/CUPTI/lib64/libcupti.so" "$cuda/lib64/libcupti.so" "$cuda/targets/x86_64-linux/lib/libcupti.so"; do
    [ -z "$cupti" ] && [ -e "$c" ] && cupti=$c
done
[ -n "$cupti" ] || { echo "tests/gpu/run.sh: no libcupti.so under $cuda" >&2; exit 2; }
echo "cuda: $cuda   cupti: $cupti"
nvcc -O2 -o "$work/gpu_spans" "$repo/tests/gpu/gpu_spans.cu" -I"$repo/include" \
    -L"$build" -llapse -Xlinker -rpath -Xlinker "$build"
export LAPSE_PROFILE=1 LAPSE_RUN_DIR="$work/runs" LAPSE_RUN_ID=gpu-check
export LAPSE_FEATURES=spans,timeline,cpu,io,memory,activity LAPSE_CUPTI_PATH="$cupti"
LAPSE_ROLE=gpu "$work/gpu_spans" > "$work/events.txt"
LAPSE_ROLE=cpu "$work/gpu_spans" cpu
"$build/lapse" report "$work/runs" | sed -n '/GPU ACTIVITY BY SPAN/,/^$/p'
"$build/lapse" report "$work/runs" --json > "$work/report.json"
c_rc=0
python3 - "$work/events.txt" "$work/report.json" <<'PY' || c_rc=$?
import json, sys
events = {}
for line in open(sys.argv[1]):
    _, path, kernels, ns = line.split()
    k, t = events.get(path, (0, 0.0))
    events[path] = (k + int(kernels), t + float(ns))
doc = json.load(open(sys.argv[2]))
roles = {r["role"]: r for r in doc["roles"]}
fail = 0
def check(ok, what):
    global fail
    print(("PASS " if ok else "FAIL ") + what)
    fail |= not ok
gpu = roles["gpu"]
check(gpu["gpu_activity_state"] == "measured", f"role gpu: GPU activity measured ({gpu['gpu_activity_state']})")
spans = {s["path"]: s for s in (gpu["gpu_activity"] or {}).get("by_span", [])}
for path, (kernels, ns) in sorted(events.items()):
    s = spans.get(path, {"kernels": 0, "kernel_gpu_ns": 0})
    check(s["kernels"] == kernels, f"{path}: {s['kernels']} kernels, launched {kernels}")
    err = abs(s["kernel_gpu_ns"] - ns) / ns if ns else 1
    check(err <= 0.05, f"{path}: GPU time {s['kernel_gpu_ns'] / 1e6:.3f} ms vs CUDA events "
                       f"{ns / 1e6:.3f} ms ({100 * err:.2f}%)")
fill = spans.get("step/fill", {})
check(fill.get("kernels") == 5 and fill.get("sets") == 5,
      f"step/fill: {fill.get('kernels')} fill kernels and {fill.get('sets')} memsets (5 and 5)")
others = [p for p in spans if p not in events and p != "step/fill" and p is not None]
check(not others, f"no kernel attributed elsewhere ({others})")
cpu = roles.get("cpu", {})
check(cpu.get("gpu_activity_state") in ("none_measured", "not_collected"),
      f"role cpu: no GPU section ({cpu.get('gpu_activity_state')})")
workers = {w["role"]: w for w in doc["workers"]}
print("workers' gpu_activity:", {r: w["gpu_activity"] for r, w in workers.items()})
print("caveats:", [c["kind"] for c in doc["caveats"]])
sys.exit(1 if fail else 0)
PY
py=${LAPSE_PYTHON:-python3}
echo "torch: $py"
# each Python check in a clean environment (its own Profiler); 77 is a SKIP, said above it
py_rc=0
py_check() {
    local what=$1 rc=0
    shift
    env -u LAPSE_PROFILE -u LAPSE_RUN_DIR -u LAPSE_RUN_ID -u LAPSE_FEATURES -u LAPSE_ROLE \
        "$py" "$@" || rc=$?
    if [ "$rc" = 77 ]; then
        echo "SKIP $what check (the line above says why)"
    elif [ "$rc" != 0 ]; then
        py_rc=1
    fi
}
py_check torch "$repo/tests/gpu/gpu_spans.py" "$work/torch-runs"
py_check device "$repo/tests/gpu/gpu_device.py" "$work/device-runs"
py_check view "$repo/tests/gpu/view_gpu.py" "$build/lapse" "$work/view-runs"
py_check "torch window" "$repo/tests/gpu/gpu_window.py" "$work/window-runs"
py_check VRAM "$repo/tests/gpu/check_vram.py" "$work/vram-runs"
[ "$c_rc" = 0 ] && [ "$py_rc" = 0 ]
