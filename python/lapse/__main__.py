"""python -m lapse run [options] (script.py | -m module) [args...]
(and python -m lapse lines ...: _lines_cli.py)

What the `lapse run` command executes for Python targets: runs the target once in
this process with a Profiler active, then prints the report of the run on stderr.
"""

from __future__ import annotations

import argparse
import os
import sys

from ._cli_parser import CliParser
from .profiler import Feature, Profiler, run_target

#: the features with a collector, each with a --no-NAME switch
FEATURE_FLAGS = [f for f in Feature if f in Feature.DEFAULT and f is not Feature.DEFAULT and f.name]
FEATURE_HELP = {
    Feature.SPANS: "record no spans nor counters (and so no wait%%: CPU needs them)",
    Feature.CPU: "no wait%% per span (the CPU sampler)",
    Feature.IO: "no I/O: neither the process sampler's I/O block nor the bytes of io=True "
                "phases",
    Feature.MEMORY: "no memory: neither peak RSS nor the RSS growth of io=True phases",
    Feature.PYTHON: "no Python stack samples (lapse record from outside)",
    Feature.ACTIVITY: "no GPU activity (CUPTI kernels, copies and sets per span)",
    Feature.DEVICE: "no GPU telemetry (NVML: the GPU block and GPU BY PHASE)",
    Feature.MARKERS: "no NVTX range per span (made only when an NVTX tool such as nsys "
                     "is attached: NVTX_INJECTION64_PATH)",
}


def build_parser() -> argparse.ArgumentParser:
    p = CliParser(
        prog="lapse run",
        description="Run a Python script or module once under lapse and report where its "
                    "time went. Every process it starts (subprocess, multiprocessing) "
                    "joins the same run.",
        epilog="examples:\n  lapse run train.py --epochs 3\n  lapse run -m pkg.train\n"
               "  lapse run --no-cpu -o runs/ train.py    # one feature off, for an "
               "overhead comparison\n\nThen: lapse report runs/   (or lapse diff A B)",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("-m", dest="module", metavar="MODULE", help="run a module, as python -m")
    p.add_argument("-o", "--output", metavar="RUN_DIR", default=None,
                   help="where the run is written (default: $LAPSE_RUN_DIR or lapse-runs)")
    p.add_argument("--role", default=None, help="this process's role (default: main)")
    p.add_argument("--max-spans", type=int, default=100_000, metavar="N",
                   help="timeline bound per process (default 100000)")
    p.add_argument("-q", "--quiet", action="store_true", help="do not print the report")
    p.add_argument("--share", action="store_true",
                   help="make the run readable by your group: directories 0750 and files "
                        "0640 instead of 0700 and 0600 (the umask still applies; "
                        "default: $LAPSE_SHARE)")
    p.add_argument("--auto", action="append", default=[], metavar="MODULE",
                   help="make every function of MODULE (a package: its submodules too) a "
                        "span, without editing it; repeatable")
    p.add_argument("--enable-tag", action="append", default=[], metavar="TAG",
                   help="record the spans of the opt-in tag TAG (lapse.register_opt_in_tag), "
                        "in this process and those it starts; repeatable")
    for f in FEATURE_FLAGS:
        p.add_argument(f"--no-{f.name.lower()}", dest=f"no_{f.name.lower()}",
                       action="store_true", help=FEATURE_HELP[f])
    p.add_argument("target", nargs="?", help="script.py (or the module's first argument with -m)")
    p.add_argument("args", nargs=argparse.REMAINDER, help="arguments of the target")
    return p


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "lines":
        from ._lines_cli import main as lines_main

        return lines_main(argv[1:])
    if not argv or argv[0] != "run":
        print("usage: python -m lapse run [options] (script.py | -m module) [args...]",
              file=sys.stderr)
        return 2
    opts = build_parser().parse_args(argv[1:])
    if opts.module:
        target, args, module = opts.module, ([opts.target] if opts.target else []) + opts.args, True
    elif opts.target:
        target, args, module = opts.target, opts.args, False
        if not os.path.exists(target):
            print(f"lapse run: {target}: no such file", file=sys.stderr)
            return 1
    else:
        print("lapse run: give a script or -m MODULE (see lapse run --help)", file=sys.stderr)
        return 2
    features = Feature.DEFAULT
    for f in FEATURE_FLAGS:
        if getattr(opts, f"no_{f.name.lower()}"):
            features &= ~f
    if Feature.SPANS not in features:
        features &= ~(Feature.CPU | Feature.MARKERS)  # wait% and markers are per span
        if opts.auto:
            print("lapse run: --auto makes spans: it cannot go with --no-spans", file=sys.stderr)
            return 2
    if any(not t or "," in t for t in opts.enable_tag):
        print("lapse run: --enable-tag needs a tag name (non-empty, no comma)", file=sys.stderr)
        return 2
    run_dir = opts.output or os.environ.get("LAPSE_RUN_DIR") or "lapse-runs"
    profiler = Profiler(features=features, role=opts.role, run_dir=run_dir,
                        max_spans=opts.max_spans, share=opts.share, auto=opts.auto,
                        enable_tags=opts.enable_tag)
    if opts.enable_tag:  # the processes it starts enable them too
        from .instrument import ENV, environment_tags

        os.environ[ENV] = ",".join(sorted(environment_tags() | set(opts.enable_tag)))
    profiler._launcher = True  # lapse's and runpy's frames beneath the target are left out
    with profiler:
        status = run_target(target, args, module=module)
    if profiler.file and not opts.quiet:
        from . import _lapse

        run = os.path.dirname(os.path.dirname(profiler.file))
        try:
            sys.stderr.write(_lapse.report(run))
        except (OSError, ValueError) as e:
            print(f"lapse run: cannot report {run}: {e}", file=sys.stderr)
        print(f"lapse run: the run is in {run} (lapse report {run})", file=sys.stderr)
    return status


if __name__ == "__main__":
    sys.exit(main())
