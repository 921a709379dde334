"""Hostile GPU activity (section 15 GPU_ACTIVITY, docs/format.md) through `lapse view`
(and its page in a real browser), `lapse report --json` and `lapse export --perfetto`,
on the ASan build too (LAPSE_BUILD_DIR=build-asan): what the reader refuses is one line
naming the file and the rest of the run is shown; what it accepts, however odd (zero,
huge and reversed times, launches on a thread root or a thread without spans, unknown
copy kinds, names made to break the page, more streams than the view's tracks, more
overlapping records than its rows), gives a page. The files come from lapse_files.py,
written from docs/format.md: no writer makes them."""

from __future__ import annotations

import json

import pytest

import lapse_files as lf
from test_hostile_files import MEMORY, lapse_bounded
from test_view import browser, open_page  # noqa: F401 (the fixture)
from test_view_gpu import TL, view_doc

U64 = (1 << 64) - 1
NO_NODE = 0xFFFFFFFF
SCRIPT = "</script><script>window.pwned = 1</script><!--"


def gpu_file(records, names=("", "gemm"), pid=4242, **activity) -> lf.LapseFile:
    """main pid 4242: thread 0 with a span "step" (node 1) at 1..5 us, thread 1 with no
    span (its root, node 2); the section's records and names as given."""
    f = lf.process(pid, role="main", max_spans=1000)
    f.threads.append((2, "side"))
    step = f.name("step")
    f.nodes[0].child_ns = 4000
    f.nodes.append(lf.Node(0, step, 1, calls=1, total_ns=4000, hist={100: 1}))
    f.nodes.append(lf.Node(-1, 0, 0, thread=1))
    f.spans.append((0, step, 1, 1000, 5000))
    f.activity = lf.GpuActivity(records=list(records), names=list(names), **activity)
    return f


def write_run(tmp_path, *files: tuple[str, lf.LapseFile]):
    host = tmp_path / "run" / "h"
    host.mkdir(parents=True)
    for name, f in files:
        (host / name).write_bytes(f.encode())
    return host.parent


def all_outputs(lapse, run, tmp_path):
    """view (its data), report --json (the document), export --perfetto (the trace)."""
    html = tmp_path / "v.html"
    view = lapse_bounded(lapse, "view", run, "-o", html, "--no-compress", memory=MEMORY)
    report = lapse_bounded(lapse, "report", run, "--json", memory=MEMORY)
    trace = tmp_path / "trace.json"
    export = lapse_bounded(lapse, "export", run, "--perfetto", trace, memory=MEMORY)
    return {"view": view, "html": html, "page": view_doc(html), "report": report,
            "doc": json.loads(report.stdout), "export": export,
            "trace": json.loads(trace.read_text())["traceEvents"]}


def gpu_ops(page_doc):
    (p,) = [p for p in page_doc["processes"] if p["gpu"]]
    return p["gpu"], [(t, i) for t in p["gpu"]["tracks"] for i in range(len(t["begin"]))]


def test_odd_records_the_reader_accepts_give_a_page(lapse, browser, tmp_path):  # noqa: F811
    recs = [
        lf.GpuRecord(name=4, node=1, start_ns=0, end_ns=0, launch_ns=0),      # zero times
        lf.GpuRecord(name=1, node=1, start_ns=2000, end_ns=3000, launch_ns=4000),  # launched after it started
        lf.GpuRecord(name=1, node=1, start_ns=1 << 63, end_ns=U64, launch_ns=1),   # huge times
        lf.GpuRecord(name=1, node=1, start_ns=U64, end_ns=U64, launch_ns=U64),
        lf.GpuRecord(name=2, node=1, start_ns=0, end_ns=U64, launch_ns=1 << 63),
        lf.GpuRecord(name=1, node=1, start_ns=1 << 63, end_ns=1 << 63, launch_ns=(1 << 63) - 5),
        lf.GpuRecord(name=1, node=0, start_ns=3000, end_ns=3500, launch_ns=2500),  # a thread root
        lf.GpuRecord(name=3, node=2, start_ns=3000, end_ns=3500, launch_ns=2500),  # a thread with no span
        lf.GpuRecord(kind=2, copy_kind=99, node=NO_NODE, start_ns=10, end_ns=20, bytes=U64),
        lf.GpuRecord(kind=3, node=NO_NODE, start_ns=10, end_ns=20, bytes=U64,
                     device=NO_NODE, stream=NO_NODE),
        lf.GpuRecord(name=5, node=1, start_ns=1500, end_ns=1600, launch_ns=1200),
    ]
    names = ["", "gemm", SCRIPT, "\"\\\n\t", b"\xff\xfe bad utf-8 \xc3", "k" * 65536]
    f = gpu_file(recs, names=names + ["unused"] * 3)
    # the huge launches' span: its end past INT64_MAX on the run's clock
    f.spans.append((0, f.name("step"), 1, (1 << 63) - 10, (1 << 63) - 10 + (1 << 62)))
    f.spans.append((0, f.name("step"), 2, (1 << 63) + 1000, (1 << 63) + 2000))  # past INT64_MAX
    run = write_run(tmp_path, ("main-4242.lapse", f))
    out = all_outputs(lapse, run, tmp_path)
    gpu, ops = gpu_ops(out["page"])
    assert len(ops) == len(recs)
    assert SCRIPT in gpu["names"]
    queue = [t["queue_ns"][i] for t, i in ops]
    assert -2000 in queue  # launched 2 us after it started: said, not hidden
    # launched 5 ns before a start at 2^63, inside the span that ends past INT64_MAX
    (late,) = [(t, i) for t, i in ops if t["queue_ns"][i] == 5]
    assert late[0]["span"][late[1]] == 1 and late[0]["path"][late[1]] is not None
    assert any(t["more"] == 0 and t["device"] == NO_NODE for t, _ in ops)
    assert len(out["doc"]["workers"]) == 1 and out["doc"]["workers"][0]["gpu_activity"]["records"] == len(recs)
    assert len([e for e in out["trace"] if e.get("cat") == "gpu" and e.get("ph") == "X"]) == len(recs)

    page = open_page(browser, out["html"])  # no page error, nothing fetched
    page.evaluate("window.lapseView.show('timeline')")
    assert page.evaluate("window.pwned") is None
    tracks = page.evaluate(f"{TL}.gpu()")
    shown = sorted(o["name"] for t in tracks for o in t["ops"])
    assert len(shown) == len(recs) and {SCRIPT, "k" * 65536, "memcpy ? 18446744.1 TB"} <= set(shown), shown
    r = page.evaluate(f"{TL}.range()")
    for k in range(4):  # zoomed and panned across the whole range: frames, no error
        page.evaluate(f"{TL}.zoom(0.001, {r['label'] + (r['width'] - r['label']) * k / 3})")
        page.evaluate(f"{TL}.setRange({r['full0']}, {r['full1']})")
    assert page.evaluate(f"{TL}.search('script')") >= 1
    page.close()


def test_streams_past_the_track_bound_share_the_last_track(lapse, tmp_path):
    n = 300  # (device, stream) pairs: the view has 256 tracks
    recs = [lf.GpuRecord(name=1, stream=s, start_ns=1000 + s, end_ns=2000 + s) for s in range(n)]
    run = write_run(tmp_path, ("main-4242.lapse", gpu_file(recs)))
    out = all_outputs(lapse, run, tmp_path)
    gpu, ops = gpu_ops(out["page"])
    tracks = gpu["tracks"]
    assert len(tracks) == 256 and len(ops) == n
    assert [t["more"] for t in tracks[:-1]] == [0] * 255 and tracks[-1]["more"] == n - 256
    assert len(tracks[-1]["begin"]) == n - 255


def test_overlapping_records_past_the_rows_stay_in_16_rows(lapse, tmp_path):
    n = 20000  # every record over the same microsecond on one stream
    recs = [lf.GpuRecord(name=1, node=1, start_ns=2000, end_ns=3000, launch_ns=1500)] * n
    run = write_run(tmp_path, ("main-4242.lapse", gpu_file(recs)))
    out = all_outputs(lapse, run, tmp_path)
    (track,) = gpu_ops(out["page"])[0]["tracks"]
    assert track["rows"] == 16 and len(track["row"]) == n and max(track["row"]) == 15
    for name in ("view", "report", "export"):
        assert out[name].seconds < 10, (name, out[name].seconds)


REFUSED = [
    ("a missing node", dict(records=[lf.GpuRecord(name=1, node=3)]),
     "gpu record 0 names a name or node that does not exist"),
    ("a missing name", dict(records=[lf.GpuRecord(name=2, node=1)]),
     "gpu record 0 names a name or node that does not exist"),
    ("reversed times", dict(records=[lf.GpuRecord(name=1, start_ns=2000, end_ns=1999)]),
     "gpu record 0 ends before it starts"),
    ("an unknown kind", dict(records=[lf.GpuRecord(kind=4, name=1)]), "gpu record 0 has kind 4"),
    ("kind 0", dict(records=[lf.GpuRecord(kind=0)]), "gpu record 0 has kind 0"),
    ("an unknown state", dict(records=[], state=3), "gpu activity section has state 3"),
    ("a huge record count", dict(records=[lf.GpuRecord(name=1)], count=0xFFFFFFFF),
     "gpu activity section: 4294967295 records do not fill its 56 bytes"),
    ("a huge name count", dict(records=[], name_count=0xFFFFFFFF),
     "gpu activity section claims 4294967295 names, more than it holds"),
    ("names not starting with \"\"", dict(records=[], names=["gemm"]),
     "gpu activity section's names must start with the empty name"),
]


@pytest.mark.parametrize("what,section,reason", REFUSED, ids=[c[0] for c in REFUSED])
def test_refused_section_is_one_line_and_the_rest_is_shown(lapse, tmp_path, what, section, reason):
    good = gpu_file([lf.GpuRecord(name=1, node=1, start_ns=2000, end_ns=3000, launch_ns=1500)])
    bad = gpu_file(**section, pid=4343)
    run = write_run(tmp_path, ("main-4242.lapse", good), ("main-4343.lapse", bad))
    out = all_outputs(lapse, run, tmp_path)
    for name in ("view", "export"):
        lines = [line for line in out[name].stderr.splitlines() if "main-4343.lapse" in line]
        assert len(lines) == 1 and reason in lines[0], (name, out[name].stderr)
    assert [u["reason"] for u in out["doc"]["unreadable"]] == [reason]
    assert [p["pid"] for p in out["page"]["processes"]] == [4242]
    assert len(gpu_ops(out["page"])[1]) == 1
    # alone: one line, exit 1, no page
    alone = write_run(tmp_path / "alone", ("main-4343.lapse", bad))
    html = tmp_path / "alone.html"
    r = lapse.run("view", str(alone), "-o", str(html))
    assert r.returncode == 1 and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert not html.exists()
