#!/bin/sh
# Runs the benchmarks of bench/ and prints their output; see bench/README.md.
#
#   bench/run.sh [BUILD_DIR]        (default: build; built with `ninja -C BUILD_DIR`)
#
# SPAN_RUNS=N runs span_cost N times (default 3: the machine is shared and noisy,
# compare the runs). FULL_TIMELINE=0 skips the report_scale run with a full
# timeline in every file. SAMPLER=0 skips bench/sampler (the external Python sampler
# against py-spy and Austin, installed into BUILD_DIR/bench-venv on first use).
# LINES=0 skips bench/line_profile.py (the line profiler against line_profiler,
# installed into BUILD_DIR/bench-lines-venv-X.Y on first use).
# WAIT=0 skips bench/wait_accuracy.py (wait% against the truth, C and Python).
# KILLS=N sets the SIGKILLs of bench/kill_loop.py per target (default 200; 0 skips it).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-"$here/../build"}
build=$(cd "$build" && pwd)
for prog in span_cost report_scale fork_cost kill_target lapse; do
    if [ ! -x "$build/$prog" ]; then
        echo "bench/run.sh: $build/$prog is missing; build first: ninja -C $build" >&2
        exit 1
    fi
done

echo "== machine"
uname -srm
grep -m1 'model name' /proc/cpuinfo 2>/dev/null || true
echo "cpus: $(nproc)   load: $(cut -d' ' -f1-3 /proc/loadavg)"
echo

i=1
while [ "$i" -le "${SPAN_RUNS:-3}" ]; do
    echo "== span_cost (run $i of ${SPAN_RUNS:-3})"
    # ACTIVITY against the fake libcupti and MARKERS with the test NVTX tool, when built
    if [ -f "$build/fakes/libcupti.so" ] && [ -f "$build/libfake_nvtx_inject.so" ]; then
        LAPSE_CUPTI_PATH="$build/fakes/libcupti.so" \
            NVTX_INJECTION64_PATH="$build/libfake_nvtx_inject.so" "$build/span_cost"
    elif [ -f "$build/fakes/libcupti.so" ]; then
        LAPSE_CUPTI_PATH="$build/fakes/libcupti.so" "$build/span_cost"
    else
        "$build/span_cost"
    fi
    echo
    i=$((i + 1))
done

echo "== report_scale: 64 files x 4096 paths"
"$build/report_scale" "$build/lapse"
if [ "${FULL_TIMELINE:-1}" != 0 ]; then
    echo
    echo "== report_scale: the same with a full timeline (100000 spans) in every file"
    "$build/report_scale" "$build/lapse" --spans 100000
fi

echo
echo "== fork_cost: 500 forks with 4 busy threads, with and without lapse"
"$build/fork_cost" 500 4

if [ "${WAIT:-1}" != 0 ] && [ -x "$build/e2e_wait_phases" ]; then
    echo
    python3 "$here/wait_accuracy.py" "$build"
fi

if [ "${KILLS:-200}" != 0 ]; then
    echo
    # a defect it finds fails run.sh, after the other benchmarks
    python3 "$here/kill_loop.py" "$build" --kills "${KILLS:-200}" || kill_loop_failed=1
fi

if [ "${SAMPLER:-1}" != 0 ]; then
    echo
    python3 "$here/sampler/run.py" "$build"
fi

if [ "${LINES:-1}" != 0 ]; then
    echo
    echo "== line_profile: lapse.LineProfiler against line_profiler"
    python3 "$here/line_profile.py" "$build"
fi
exit "${kill_loop_failed:-0}"
