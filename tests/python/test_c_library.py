"""Python and C in one process are one session: a C library linked with -llapse,
loaded by a Python program (ctypes), records its spans into the Python session's
file, nested under the Python spans open on the same thread."""

from __future__ import annotations

import ctypes
import os
import pathlib
import shutil
import subprocess
import sys
import textwrap

import pytest

import lapse
from conftest import phases, report
from lapse import Profiler, span

REPO = pathlib.Path(__file__).resolve().parents[2]
PACKAGE = pathlib.Path(lapse.__file__).resolve().parent

LIBRARY_C = r"""
#include <lapse.h>

static volatile unsigned long sink;

void c_work(int n)
{
    for (int i = 0; i < n; i++) {
        LAPSE_SCOPE("c_step");
        {
            LAPSE_SCOPE("c_inner");
            for (int k = 0; k < 1000; k++)
                sink += (unsigned long)k;
            lapse_count("c_items", 1);
        }
    }
}
"""


@pytest.fixture(scope="module")
def c_library(tmp_path_factory) -> pathlib.Path:
    """libcwork.so, built as a user builds a library against liblapse: the package's
    copy (the one the extension uses), found at run time through its rpath."""
    cc = shutil.which("cc") or shutil.which("gcc")
    if not cc:
        pytest.fail("no C compiler (cc) to build the test library")
    libs = sorted(PACKAGE.glob("liblapse.so.*"))
    assert libs, f"no liblapse.so.N shipped in {PACKAGE}"
    d = tmp_path_factory.mktemp("clib")
    (d / "cwork.c").write_text(LIBRARY_C)
    out = d / "libcwork.so"
    subprocess.run([cc, "-shared", "-fPIC", "-O1", "-o", out, d / "cwork.c", f"-I{REPO / 'include'}",
                    f"-L{PACKAGE}", f"-l:{libs[0].name}", f"-Wl,-rpath,{PACKAGE}"], check=True)
    return out


def load(path: pathlib.Path) -> ctypes.CDLL:
    lib = ctypes.CDLL(str(path))
    lib.c_work.argtypes = [ctypes.c_int]
    return lib


def check_one_session(run: pathlib.Path, role: str) -> dict:
    files = list(run.rglob("*.lapse"))
    assert len(files) == 1, files  # one process, one file: no second "process"
    doc = report(run)
    assert len(doc["workers"]) == 1, doc["workers"]
    by_path = phases(doc, role)
    assert by_path["py_outer/c_step"]["calls"] == 5
    assert by_path["py_outer/c_step/c_inner"]["calls"] == 5
    return by_path


def test_c_spans_nest_under_python_spans_in_one_file(tmp_path, c_library):
    lib = load(c_library)
    with Profiler(run_dir=tmp_path, role="mixed"):
        with span("py_outer"):
            lib.c_work(5)
        lib.c_work(2)  # outside any Python span: the C span is top-level
    assert check_one_session(tmp_path, "mixed")["c_step"]["calls"] == 2  # top level


def test_a_library_loaded_before_import_joins_the_profiler(tmp_path, c_library):
    # a fresh interpreter: the library (and liblapse with it) loaded before lapse is
    # imported, then a Profiler started
    code = textwrap.dedent(f"""
        import ctypes
        lib = ctypes.CDLL({str(c_library)!r})
        import lapse
        with lapse.Profiler(run_dir={str(tmp_path)!r}, role="mixed"):
            with lapse.span("py_outer"):
                lib.c_work(5)
    """)
    env = {k: v for k, v in os.environ.items() if not k.startswith("LAPSE_")}
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                       timeout=60)
    assert r.returncode == 0, r.stderr
    assert "c_step" not in check_one_session(tmp_path, "mixed")  # only under the Python span


@pytest.mark.parametrize("library_first", [True, False])
def test_lapse_profile_environment_is_one_session(tmp_path, c_library, library_first):
    load_lib = f"lib = ctypes.CDLL({str(c_library)!r})"
    code = textwrap.dedent(f"""
        import ctypes
        {load_lib if library_first else ""}
        import lapse
        {"" if library_first else load_lib}
        with lapse.span("py_outer"):
            lib.c_work(5)
    """)
    env = {k: v for k, v in os.environ.items() if not k.startswith("LAPSE_")}
    env.update(LAPSE_PROFILE="1", LAPSE_RUN_DIR=str(tmp_path), LAPSE_ROLE="envrole")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                       timeout=60)
    assert r.returncode == 0, r.stderr
    assert "c_step" not in check_one_session(tmp_path, "envrole")
