"""The layer check that every build runs (tests/layers/check_layers.py): the tree
passes it, and it fails a tree that breaks the order or has an include cycle."""

from __future__ import annotations

import subprocess
import sys

from conftest import REPO

CHECK = REPO / "tests" / "layers" / "check_layers.py"


def run_check(src, inc=None):
    args = [sys.executable, str(CHECK), str(src)] + ([str(inc)] if inc else [])
    return subprocess.run(args, capture_output=True, text=True, timeout=60)


def test_the_tree_keeps_the_order():
    r = run_check(REPO / "src", REPO / "include")
    assert r.returncode == 0, r.stderr
    assert r.stderr == ""


def write(root, rel, text=""):
    p = root / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text)


def test_a_layer_below_fails(tmp_path):
    write(tmp_path, "analyze/model.h")
    write(tmp_path, "render/text.c", '#include "analyze/model.h"\n')   # above: fine
    write(tmp_path, "store/codec.c", '#include "analyze/model.h"\n')   # below: not
    r = run_check(tmp_path)
    assert r.returncode == 1
    assert r.stderr.splitlines() == [
        "check_layers: store/codec.c: includes analyze/model.h: store may not use "
        "analyze, a layer below it"], r.stderr


def test_a_cycle_fails(tmp_path):
    write(tmp_path, "render/a.h", '#include "b.h"\n')
    write(tmp_path, "render/b.h", '#include "c.h"\n')
    write(tmp_path, "render/c.h", '#include "a.h"\n')
    r = run_check(tmp_path)
    assert r.returncode == 1
    assert "include cycle: render/a.h -> render/b.h -> render/c.h -> render/a.h" in r.stderr


def test_a_file_outside_the_layers_and_a_missing_include_fail(tmp_path):
    write(tmp_path, "samples/set.c", '#include "nowhere.h"\n')
    r = run_check(tmp_path)
    assert r.returncode == 1
    assert "samples/set.c: in no layer" in r.stderr
