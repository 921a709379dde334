"""Shared pieces of the Python tests. They run against the installed package
(`pip install .`), on every CPython the Makefile finds (3.11 and newer)."""

from __future__ import annotations

import importlib.util
import json
import os
import pathlib
import shutil
import subprocess
import sys

import pytest


# tests/python/run.sh installs torch where its CPU build is at hand (CPython 3.11)
# and then requires it; read now, before the autouse fixture clears LAPSE_*.
REQUIRE_TORCH = os.environ.get("LAPSE_TEST_TORCH") == "1"


def needs_torch() -> None:
    """Skips the test where torch is not installed, or fails it where
    LAPSE_TEST_TORCH=1 requires torch."""
    if importlib.util.find_spec("torch") is not None:
        return
    if REQUIRE_TORCH:
        pytest.fail("torch is not installed, and LAPSE_TEST_TORCH=1 requires it "
                    "(tests/python/run.sh installs torch==2.13.0 on CPython 3.11)")
    pytest.skip("torch is not installed here (tests/python/run.sh installs it on "
                "CPython 3.11 only, where its CPU build is at hand)")


def lapse_command() -> str:
    """The `lapse` command installed with the package (next to this interpreter)."""
    if os.environ.get("LAPSE_TEST_COMMAND"):
        return os.environ["LAPSE_TEST_COMMAND"]
    here = pathlib.Path(sys.executable).parent / "lapse"
    if here.exists():
        return str(here)
    found = shutil.which("lapse")
    if not found:
        pytest.fail("the lapse command is not installed next to this Python")
    return found


def report(path: os.PathLike | str) -> dict:
    """`lapse report PATH --json`, parsed."""
    r = subprocess.run([lapse_command(), "report", str(path), "--json"], capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def phases(doc: dict, role: str | None = None) -> dict[str, dict]:
    """path -> phase of one role (the only one when role is None)."""
    roles = doc["roles"] if role is None else [r for r in doc["roles"] if r["role"] == role]
    assert len(roles) == 1, [r["role"] for r in doc["roles"]]
    return {p["path"]: p for p in roles[0]["phases"]}


@pytest.fixture(scope="session")
def fake_nvml(tmp_path_factory) -> pathlib.Path:
    """A folder holding the fake libnvidia-ml.so.1 (tests/fakes/fake_nvml.c): put it on
    LD_LIBRARY_PATH of a subprocess."""
    cc = shutil.which("cc") or shutil.which("gcc")
    if not cc:
        pytest.fail("no C compiler (cc) to build the fake NVML")
    d = tmp_path_factory.mktemp("nvml")
    repo = pathlib.Path(__file__).resolve().parents[2]
    subprocess.run([cc, "-shared", "-fPIC", "-O1", "-o", d / "libnvidia-ml.so.1",
                    repo / "tests" / "fakes" / "fake_nvml.c"], check=True)
    return d


@pytest.fixture(scope="session")
def fake_cupti(tmp_path_factory) -> str:
    """The fake libcupti (tests/fakes/fake_cupti.c), built once for the whole session:
    lapse keeps the libcupti it loaded for the life of the process, so every test that
    drives it must name the same file."""
    cc = shutil.which("cc") or shutil.which("gcc")
    if not cc:
        pytest.fail("no C compiler to build the fake libcupti")
    out = tmp_path_factory.mktemp("fake") / "libcupti.so"
    repo = pathlib.Path(__file__).resolve().parents[2]
    subprocess.run([cc, "-shared", "-fPIC", "-O1", "-fvisibility=hidden", "-o", str(out),
                    str(repo / "tests" / "fakes" / "fake_cupti.c"), "-lpthread"], check=True)
    return str(out)


@pytest.fixture(autouse=True)
def no_lapse_environment(monkeypatch):
    """Tests start from an environment without LAPSE_* variables."""
    for key in list(os.environ):
        if key.startswith("LAPSE_") and key != "LAPSE_TEST_COMMAND":
            monkeypatch.delenv(key)
