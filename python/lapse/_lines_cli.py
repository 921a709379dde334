"""python -m lapse lines [options] (script.py | -m module) [args...]

What the `lapse lines` command executes: runs the target once in this process with a
LineProfiler on the target's project (the nearest folder holding .git above the
script, or --root), then prints the statistics per line on stderr.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
import types

from ._cli_parser import CliParser
from .lines import LineProfiler, find_project_root


def build_parser() -> argparse.ArgumentParser:
    p = CliParser(
        prog="lapse lines",
        description="Run a Python script or module once with every line of its project "
                    "timed (hits, and time inclusive of the calls a line makes); no "
                    "decorators needed. The project is the nearest folder holding .git "
                    "above the script (or the working directory, for -m), or --root.",
        epilog="examples:\n  lapse lines train.py --epochs 1\n"
               "  lapse lines --top 30 --html lines.html -m pkg.train",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("-m", dest="module", metavar="MODULE", help="run a module, as python -m")
    p.add_argument("--root", metavar="DIR", help="trace the code under DIR")
    p.add_argument("--top", type=int, metavar="N", default=None,
                   help="print only the N slowest lines of the whole program")
    p.add_argument("--min-time-us", type=float, default=0.0, metavar="US",
                   help="leave out lines that took less (default 0)")
    p.add_argument("--sort", choices=("line", "time", "hits"), default=None,
                   help="order of the lines (default: source order per function; with "
                        "--top, by time)")
    p.add_argument("--html", metavar="PATH", help="also write the annotated source page")
    p.add_argument("target", nargs="?", help="script.py (or the module's first argument with -m)")
    p.add_argument("args", nargs=argparse.REMAINDER, help="arguments of the target")
    return p


def _code_of(target: str, module: bool) -> tuple[types.CodeType, dict[str, object]]:
    """The target's code, compiled here so that it is traced from its first line, and
    the globals it runs in as __main__."""
    if module:
        spec = importlib.util.find_spec(target)
        if spec is not None and spec.submodule_search_locations is not None:
            spec = importlib.util.find_spec(target + ".__main__")
        if spec is None or spec.loader is None or not hasattr(spec.loader, "get_code"):
            raise ImportError(f"no module named {target}")
        code = spec.loader.get_code(spec.name)  # type: ignore[attr-defined]
        if code is None:
            raise ImportError(f"{target}: no code to run")
        return code, {"__name__": "__main__", "__file__": spec.origin, "__spec__": spec,
                      "__loader__": spec.loader, "__package__": spec.parent,
                      "__builtins__": __builtins__}
    with open(target, "rb") as f:
        source = f.read()
    return compile(source, target, "exec"), {"__name__": "__main__", "__file__": target,
                                             "__builtins__": __builtins__}


def main(argv: list[str]) -> int:
    opts = build_parser().parse_args(argv)
    if opts.module:
        target, args, module = opts.module, ([opts.target] if opts.target else []) + opts.args, True
    elif opts.target:
        target, args, module = opts.target, opts.args, False
        if not os.path.isfile(target):
            print(f"lapse lines: {target}: no such file", file=sys.stderr)
            return 1
    else:
        print("lapse lines: give a script or -m MODULE (lapse lines --help explains)",
              file=sys.stderr)
        return 2
    if opts.root and not os.path.isdir(opts.root):
        print(f"lapse lines: --root {opts.root}: no such folder", file=sys.stderr)
        return 1
    if opts.top is not None and opts.top < 1:
        print("lapse lines: --top must be at least 1 (lapse lines --help explains)",
              file=sys.stderr)
        return 2
    saved_argv, saved_path, saved_main = sys.argv, sys.path, sys.modules.get("__main__")
    # as python script.py (its folder) and python -m (the working directory) do
    sys.path = [os.getcwd() if module else os.path.dirname(os.path.abspath(target)),
                *saved_path]
    try:
        code, namespace = _code_of(target, module)
    except (ImportError, OSError, SyntaxError, ValueError) as e:
        sys.path = saved_path
        print(f"lapse lines: cannot run {target}: {e}", file=sys.stderr)
        return 1
    profiler = LineProfiler(root=opts.root or find_project_root(os.getcwd() if module else target))
    main_module = types.ModuleType("__main__")
    main_module.__dict__.update(namespace)
    sys.argv = [str(namespace["__file__"] or target), *args]
    sys.modules["__main__"] = main_module
    status = 0
    profiler.add_code(code)
    try:
        with profiler:
            exec(code, main_module.__dict__)
    except SystemExit as exit_:
        c = exit_.code
        status = c if isinstance(c, int) else (0 if c is None else 1)
    finally:
        sys.argv, sys.path = saved_argv, saved_path
        if saved_main is not None:
            sys.modules["__main__"] = saved_main
    sort = opts.sort or ("time" if opts.top else "line")
    if opts.top:
        profiler.print_global_top_stats(opts.top, opts.min_time_us, sort, file=sys.stderr)
    else:
        profiler.print_stats(opts.min_time_us, sort_by=sort, file=sys.stderr)
    if opts.html:
        profiler.to_html(opts.html)
        print(f"lapse lines: the annotated source is in {opts.html}", file=sys.stderr)
    return status
