"""The README's C tour, as a new user runs it: lapse installed (into a temporary
prefix, as `make install PREFIX=...` does), the program built with pkg-config, run
under LAPSE_PROFILE=1, and the tour's commands on its run."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess

import pytest

from conftest import REPO, build_dir, clean_env

README = REPO / "README.md"


def readme_blocks(lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", README.read_text(), re.S)


def tour_program() -> str:
    blocks = [b for b in readme_blocks("c") if "int main" in b]
    assert len(blocks) == 1, "the README's tour holds one whole C program"
    return blocks[0]


def tour_commands() -> list[str]:
    """The sh block that builds and runs step.c, without the lines that need a
    second run (placeholders in <>)."""
    block = next(b for b in readme_blocks("sh") if "step.c" in b)
    return [line.split("  #")[0].strip() for line in block.splitlines()
            if line.strip() and "<" not in line]


@pytest.fixture(scope="module")
def prefix(tmp_path_factory):
    if not shutil.which("pkg-config"):
        pytest.fail("pkg-config is missing (.ci/run installs it; the README's setup names it)")
    dest = tmp_path_factory.mktemp("prefix")
    r = subprocess.run(["cmake", "--install", str(build_dir()), "--prefix", str(dest)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return dest


def run_sh(line: str, cwd, env) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", "-c", line], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=120)


@pytest.mark.parametrize("compiler", ["cc", "g++"])
def test_tour_builds_and_runs_as_written(prefix, tmp_path, compiler):
    if not shutil.which(compiler):
        pytest.skip(f"no {compiler}")
    src = tmp_path / ("step.c" if compiler == "cc" else "step.cpp")
    src.write_text(tour_program())
    libdir = next(p.parent for p in prefix.rglob("liblapse.so"))
    env = clean_env(PATH=f"{prefix / 'bin'}:{os.environ['PATH']}",
                    PKG_CONFIG_PATH=str(libdir / "pkgconfig"),
                    LD_LIBRARY_PATH=str(libdir),
                    # a sanitizer build's liblapse in a program built without it
                    ASAN_OPTIONS="verify_asan_link_order=0")
    commands = tour_commands()
    assert commands[0].startswith("cc ") and "pkg-config --cflags --libs lapse" in commands[0]
    if compiler == "g++":
        commands[0] = commands[0].replace("cc ", "g++ ", 1).replace("step.c", "step.cpp")
    for line in commands:
        r = run_sh(line, tmp_path, env)
        assert r.returncode == 0, (line, r.stdout, r.stderr)
        if "--json" in line:
            doc = json.loads(r.stdout)
            phases = {p["path"]: p for role in doc["roles"] for p in role["phases"]}
            assert phases["step"]["calls"] == 1000 and phases["step/load"]["calls"] == 1000
            assert phases["step/compute"]["calls"] == 1000
        elif line.startswith("lapse report"):
            assert "WORKER" in r.stdout and "step/compute" in r.stdout, r.stdout
    trace = json.loads((tmp_path / "trace.json").read_text())
    assert sum(e.get("ph") == "X" for e in trace["traceEvents"]) == 3000


def test_setup_names_what_the_build_needs():
    """The setup line installs every Debian package .ci/run may have to install."""
    setup = next(b for b in readme_blocks("sh") if "apt-get install" in b)
    ci = (REPO / ".ci" / "run").read_text()
    wanted = set(re.findall(r"missing\+=\(([\w.-]+)\)", ci)) | {"python3-venv"}
    assert wanted <= set(setup.split()), wanted - set(setup.split())
    assert "pip install" not in setup  # PEP 668: no pip into the system's Python
