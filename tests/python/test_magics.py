"""%load_ext lapse: the %lapse and %%lapse magics, driven through a real IPython
InteractiveShell (IPython is a test-only package: requirements-dev.txt)."""

from __future__ import annotations

import io
import os
import pathlib
import subprocess
import sys
from typing import Any, Iterator

import pytest

from lapse import Profile


def test_import_lapse_does_not_import_ipython() -> None:
    out = subprocess.run([sys.executable, "-c", "import lapse, sys; print('IPython' in sys.modules)"],
                         capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


@pytest.fixture(scope="module")
def shell(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    pytest.importorskip("IPython", reason="IPython is not installed (tests/python/run.sh "
                        "installs it from requirements-dev.txt)")
    from IPython.core.interactiveshell import InteractiveShell
    from traitlets.config import Config

    os.environ["IPYTHONDIR"] = str(tmp_path_factory.mktemp("ipython"))
    config = Config()
    config.HistoryManager.hist_file = ":memory:"
    ip = InteractiveShell.instance(config=config)
    ip.run_line_magic("load_ext", "lapse")
    ip.run_cell("from lapse import span\n"
                "def work(n):\n"
                "    for _ in range(n):\n"
                "        with span('work'):\n"
                "            pass\n")
    yield ip
    InteractiveShell.clear_instance()


def report(profile: Profile, top: int = 10) -> str:
    out = io.StringIO()
    profile.show(out, top=top)
    return out.getvalue()


def test_line_magic_runs_the_statement_prints_the_report_and_returns_the_profile(
        shell: Any, capsys: pytest.CaptureFixture[str]) -> None:
    profile = shell.run_line_magic("lapse", "--top 1 work(5)")
    assert isinstance(profile, Profile)
    assert profile.stats()["work"].calls == 5
    printed = capsys.readouterr().out
    assert printed == report(profile, top=1)
    assert "work" in printed


def test_cell_magic_runs_the_cell_in_the_user_namespace(shell: Any,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    profile = shell.run_cell_magic("lapse", "", "total = 0\n"
                                   "for i in range(4):\n"
                                   "    with span('cell'):\n"
                                   "        total += i\n"
                                   "work(2)\n")
    assert shell.user_ns["total"] == 6
    assert profile.stats()["cell"].calls == 4 and profile.stats()["work"].calls == 2
    assert capsys.readouterr().out == report(profile)


def test_ipython_syntax_inside_the_cell(shell: Any, capsys: pytest.CaptureFixture[str]) -> None:
    profile = shell.run_cell_magic("lapse", "", "n = 3\nwork(n)\nwho = %who_ls\n")
    assert profile.stats()["work"].calls == 3
    assert "work" in shell.user_ns["who"]


def test_html_shows_the_view_page_instead_of_the_text(shell: Any,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    from IPython.utils.capture import capture_output

    with capture_output() as captured:
        profile = shell.run_line_magic("lapse", "--html work(1)")
    assert captured.stdout == ""
    (output,) = captured.outputs
    # the page is rendered anew on each call (its time of reading differs)
    assert output.data["text/html"].startswith("<iframe srcdoc=")
    assert profile.run_id in output.data["text/html"]
    assert output.data["text/plain"] == repr(profile)


def test_a_statement_that_raises_is_reported_then_raises(shell: Any,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(ZeroDivisionError):
        shell.run_cell_magic("lapse", "", "work(2)\n1 / 0\n")
    printed = capsys.readouterr().out
    assert "work" in printed
    # the session ended: the next one starts
    assert shell.run_line_magic("lapse", "work(1)").stats()["work"].calls == 1


def test_bad_options_are_refused(shell: Any) -> None:
    from IPython.core.error import UsageError

    with pytest.raises(UsageError):
        shell.run_line_magic("lapse", "--top many work(1)")
    with pytest.raises(ValueError, match="--top must be >= 0"):
        shell.run_line_magic("lapse", "--top -1 work(1)")
    with pytest.raises(ValueError, match="options only"):
        shell.run_cell_magic("lapse", "work(1)", "work(2)\n")


def test_a_profiler_already_active_is_refused(shell: Any, tmp_path: pathlib.Path) -> None:
    from lapse import Profiler

    with Profiler(run_dir=tmp_path):
        with pytest.raises(RuntimeError):
            shell.run_line_magic("lapse", "work(1)")
