"""Profile.html() and Profile._repr_html_(): the page `lapse view` writes, rendered
by the same C code from a profile's held bytes, in memory."""

from __future__ import annotations

import base64
import html
import json
import os
import pathlib
import re
import shutil
import stat
import subprocess
import tempfile
import zlib

import pytest

from lapse import Profile, Profiler, span


def record(run_dir: pathlib.Path, role: str, steps: int) -> None:
    with Profiler(run_dir=run_dir, role=role):
        for _ in range(steps):
            with span("step"):
                with span("load"):
                    pass


def blobs(page: str) -> dict[str, object]:
    """The page's JSON documents by id, inflated when deflated."""
    out: dict[str, object] = {}
    for m in re.finditer(r'<script type="application/json" id="([^"]+)" data-bytes="\d+" '
                         r'data-encoding="([^"]+)">(.*?)</script>', page, re.S):
        ident, encoding, body = m.groups()
        if encoding == "deflate-base64":
            body = zlib.decompress(base64.b64decode(body)).decode()
        out[ident] = json.loads(body)
    return out


def phases(report: dict) -> dict[tuple[str, str], int]:
    return {(r["role"], "/".join(p["path"]) if isinstance(p["path"], list) else p["path"]): p["calls"]
            for r in report["roles"] for p in r["phases"]}


@pytest.fixture
def profile(tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> Profile:
    """A run of two processes (driver x1 with 3 steps, worker x1 with 7), loaded and
    then its files removed: what the page shows can come only from the held bytes."""
    monkeypatch.setenv("LAPSE_RUN_ID", "html-run")
    record(tmp_path / "runs", "driver", 3)
    record(tmp_path / "runs", "worker", 7)
    prof = Profile.load(tmp_path / "runs")
    shutil.rmtree(tmp_path / "runs")
    return prof


def no_temp(*a: object, **k: object) -> None:
    raise AssertionError("a temporary file or directory was made")


def test_html_writes_the_view_page_of_the_held_bytes(profile: Profile, tmp_path: pathlib.Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("TemporaryDirectory", "mkdtemp", "mkstemp", "NamedTemporaryFile", "TemporaryFile"):
        monkeypatch.setattr(tempfile, name, no_temp)
    out = profile.html(tmp_path / "p.html")
    assert out == tmp_path / "p.html"
    assert stat.S_IMODE(out.stat().st_mode) & 0o077 == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p.html"]  # no temporary left
    page = out.read_text()
    assert page.startswith("<!DOCTYPE html>") and "lapse view: html-run" in page
    docs = blobs(page)
    assert 'data-encoding="deflate-base64"' in page or 'data-encoding="json"' in page
    report, view = docs["lapse-report"], docs["lapse-view"]
    # the report in the page is the profile's: the same figures
    assert phases(report) == phases(profile.to_dict())
    assert profile.stats("worker")["step"].calls == 7
    assert phases(report)[("worker", "step")] == 7
    # and the timelines are of the same files: 3 + 7 steps, each holding a load
    spans = sum(len(t["dur"]) for p in view["processes"] for t in p["threads"])
    assert spans == 2 * (3 + 7)
    assert len(view["processes"]) == 2
    # plain JSON holds the same documents
    plain = blobs(profile.html(tmp_path / "plain.html", compress=False).read_text())
    assert 'data-encoding="json"' in (tmp_path / "plain.html").read_text()
    assert plain["lapse-view"] == view and phases(plain["lapse-report"]) == phases(report)


def test_html_is_the_page_lapse_view_writes(tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> None:
    lapse_cmd = pathlib.Path(os.environ.get("LAPSE_BUILD_DIR", pathlib.Path(__file__).parents[2] / "build")) / "lapse"
    if not lapse_cmd.exists():
        pytest.skip("no lapse command built")
    monkeypatch.setenv("LAPSE_RUN_ID", "html-cli")
    record(tmp_path / "runs", "t", 4)
    prof = Profile.load(tmp_path / "runs")
    subprocess.run([str(lapse_cmd), "view", str(tmp_path / "runs"), "-o", str(tmp_path / "cli.html")],
                   capture_output=True, check=True)
    cli = blobs((tmp_path / "cli.html").read_text())
    mine = blobs(prof.html(tmp_path / "py.html").read_text())
    assert mine["lapse-view"] == cli["lapse-view"]
    assert phases(mine["lapse-report"]) == phases(cli["lapse-report"])  # type: ignore[arg-type]


def test_repr_html_is_the_page_in_an_iframe(profile: Profile, tmp_path: pathlib.Path) -> None:
    shown = profile._repr_html_()
    m = re.fullmatch(r'<iframe srcdoc="([^"]*)" style="[^"]*"></iframe>', shown, re.S)
    assert m, shown[:200]
    page = html.unescape(m.group(1))
    assert page.startswith("<!DOCTYPE html>") and page.endswith("</html>\n")
    # the page html() writes (the report's times of reading aside)
    shown, written = blobs(page), blobs(profile.html(tmp_path / "p.html").read_text())
    assert shown["lapse-view"] == written["lapse-view"]
    assert phases(shown["lapse-report"]) == phases(written["lapse-report"]) == phases(profile.to_dict())  # type: ignore[arg-type]


def test_html_errors(profile: Profile, tmp_path: pathlib.Path) -> None:
    with pytest.raises(FileNotFoundError):
        profile.html(tmp_path / "no" / "such" / "dir" / "p.html")
    assert not (tmp_path / "no").exists()
