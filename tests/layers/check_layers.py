#!/usr/bin/env python3
"""Checks the includes of src/ against the layer order of DESIGN.md: a file may
include files of its own layer and of the layers above it, never of a layer below
it, and no chain of includes may lead back to where it started.

    check_layers.py SRC_DIR [INCLUDE_DIR]

Prints one line per violation and exits 1 when there is any; 0 and nothing else
when the tree is clean. The build runs it (CMake target check_layers)."""

from __future__ import annotations

import pathlib
import re
import sys

# DESIGN.md, "Architecture": data flows one way; a layer uses only the layers above
# it in this list. collect comes after store: a collector adds its data to the
# process's file (store's model, store_file) at each write.
ORDER = ["core", "store", "collect", "session", "pyread", "analyze", "render", "tools",
         "mpi", "cli"]
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def resolve(src: pathlib.Path, inc_dir: pathlib.Path | None, f: pathlib.Path,
            name: str) -> pathlib.Path | None:
    for base in (f.parent, src) + ((inc_dir,) if inc_dir else ()):
        p = (base / name).resolve()
        if p.is_file():
            return p
    return None


def layer_of(src: pathlib.Path, p: pathlib.Path) -> str | None:
    try:
        rel = p.relative_to(src)
    except ValueError:
        return None  # include/: the public API, open to every layer
    return rel.parts[0] if len(rel.parts) > 1 else None


def check(src: pathlib.Path, inc_dir: pathlib.Path | None) -> list[str]:
    src = src.resolve()
    problems: list[str] = []
    graph: dict[pathlib.Path, list[pathlib.Path]] = {}
    files = sorted(p.resolve() for p in src.rglob("*") if p.suffix in (".c", ".h"))
    for f in files:
        layer = layer_of(src, f)
        if layer not in ORDER:
            problems.append(f"{f.relative_to(src)}: in no layer of DESIGN.md's order "
                            f"({', '.join(ORDER)})")
            continue
        graph[f] = []
        for name in INCLUDE.findall(f.read_text(errors="replace")):
            target = resolve(src, inc_dir, f, name)
            if target is None:
                problems.append(f"{f.relative_to(src)}: includes \"{name}\", which is not found")
                continue
            graph[f].append(target)
            to = layer_of(src, target)
            if to is None or to == layer:
                continue
            if to not in ORDER or ORDER.index(to) > ORDER.index(layer):
                problems.append(f"{f.relative_to(src)}: includes {target.relative_to(src)}: "
                                f"{layer} may not use {to}, a layer below it")
    # cycles: a depth-first search that meets a file still on its path
    state: dict[pathlib.Path, int] = {}  # 1 on the path, 2 done
    for start in graph:
        if state.get(start):
            continue
        stack = [(start, iter(graph.get(start, ())))]
        path = [start]
        state[start] = 1
        while stack:
            node, it = stack[-1]
            nxt = next(it, None)
            if nxt is None:
                stack.pop()
                path.pop()
                state[node] = 2
                continue
            if state.get(nxt) == 1:
                loop = path[path.index(nxt):] + [nxt]
                problems.append("include cycle: " + " -> ".join(str(p.relative_to(src))
                                                                for p in loop))
            elif not state.get(nxt) and nxt in graph:
                state[nxt] = 1
                path.append(nxt)
                stack.append((nxt, iter(graph[nxt])))
    return problems


def main(argv: list[str]) -> int:
    if len(argv) < 2:
        print(__doc__.strip().splitlines()[3].strip(), file=sys.stderr)
        return 2
    src = pathlib.Path(argv[1])
    inc = pathlib.Path(argv[2]).resolve() if len(argv) > 2 else None
    problems = check(src, inc)
    for p in problems:
        print(f"check_layers: {p}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
