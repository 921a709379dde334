"""Profile.to_dataframe() and Run.to_dataframe() (docs/python.md, "Data for notebooks
and CI"): the report model's figures, one row per path."""

from __future__ import annotations

import sys

import pytest

import lapse
from lapse import Profiler, count, span

pandas = pytest.importorskip("pandas")  # requirements-dev.txt installs it


def recorded(tmp_path):
    with Profiler(run_dir=tmp_path, role="t") as p:
        for _ in range(3):
            with span("step"):
                with span("inner"):
                    count("items", 2)
        every = p.sample_every(2, "sampled")
        for _ in range(4):
            with every:
                pass
    return p


def test_profile_dataframe_is_the_stats(tmp_path):
    profile = recorded(tmp_path).result()
    df = profile.to_dataframe()
    stats = profile.stats()
    assert list(df["path"]) == list(stats)  # path order
    for row in df.to_dict("records"):
        s = stats[row["path"]]
        assert (row["calls"], row["total_ns"], row["self_ns"], row["p99_ns"], row["depth"]) == \
            (s.calls, s.total_ns, s.self_ns, s.p99_ns, s.depth)
        assert row["estimated"] == s.estimated and row["counters"] == dict(s.counters)
    inner = df.set_index("path").loc["step.inner"]
    assert inner["calls"] == 3 and inner["counters"] == {"items": 6} and inner["role"] == "t"
    assert df.set_index("path").loc["sampled", "sample_stride"] == 2
    assert list(profile.to_dataframe(role="t")["path"]) == list(stats)
    with pytest.raises(ValueError, match="no role"):
        profile.to_dataframe(role="nope")


def test_run_dataframe_is_the_merged_tree(tmp_path):
    p = recorded(tmp_path)
    run = lapse.load_run(p.file)
    df = run.to_dataframe()
    assert list(df["names"]) == list(run.tree)
    for row in df.to_dict("records"):
        node = run.tree[row["names"]]
        assert (row["calls"], row["total_ns"], row["self_ns"], row["roles"], row["estimated"]) == \
            (node.calls, node.total_ns, node.self_ns, node.roles, node.estimated)
    assert df.set_index("path").loc["step.inner", "counters"] == {"items": 6}


def test_without_pandas_the_error_says_so(tmp_path, monkeypatch):
    profile = recorded(tmp_path).result()
    monkeypatch.setitem(sys.modules, "pandas", None)  # import pandas raises ImportError
    with pytest.raises(ImportError, match="needs pandas"):
        profile.to_dataframe()
    with pytest.raises(ImportError, match="needs pandas"):
        lapse.load_run(profile.source).to_dataframe()
