"""lapse view's caveats and bands (docs/view.md), in a real browser (test_view.py's): the
page's count of caveats and its list are `lapse report --json`'s (and a diff's `lapse
diff --json`'s), a process a caveat is about is marked in the Timeline, its backend
window and its ACTIVITY pauses are bands at the report's times. The run comes from
lapse_files.py (docs/format.md): known spans, a window, pauses, dropped spans and a
truncated file, so every figure is known."""

from __future__ import annotations

import json

import lapse_files as lf
import test_view as tv
from test_view import browser, open_page  # noqa: F401 (the fixture)

TL = "window.lapseView.timeline"
MS = 10**6


def main_file(pid: int = 4242, caveats: bool = True) -> lf.LapseFile:
    """main pid: six entries of "step" at k ms .. k.8 ms (k = 1..6) and a kernel in each;
    with caveats, a torch window over entries 3..4 (open at entry 3, 3 ms, closed at
    entry 5, 5 ms), ACTIVITY paused twice between 2.5 and 4.5 ms (1.5 ms in all; no
    kernel of entries 3 and 4) and 7 spans dropped past max_spans."""
    meta: dict[str, object] = {"max_spans": 6}
    if caveats:
        meta.update(timeline_dropped=7, window_backend="torch", window_phase="step",
                    window_start=3, window_stop=5, window_entries=6, window_opened_entry=3,
                    window_closed_entry=5, window_open_ns=3 * MS, window_close_ns=5 * MS,
                    activity_pauses=2, activity_paused_ns=1500 * 1000,
                    activity_pause_from_ns=2500 * 1000, activity_pause_to_ns=4500 * 1000)
    f = lf.process(pid, role="main", **meta)
    step = f.name("step")
    f.nodes[0].child_ns = 6 * 800 * 1000
    f.nodes.append(lf.Node(0, step, 1, calls=6, total_ns=6 * 800 * 1000, hist={100: 6}))
    recs = []
    for k in range(1, 7):
        f.spans.append((0, step, 1, k * MS, k * MS + 800 * 1000))
        if not caveats or k not in (3, 4):
            recs.append(lf.GpuRecord(name=1, node=1, start_ns=k * MS + 200 * 1000,
                                     end_ns=k * MS + 500 * 1000, launch_ns=k * MS + 100 * 1000))
    f.activity = lf.GpuActivity(records=recs, names=["", "gemm"])
    return f


def write_run(dest, files):
    host = dest / "h"
    host.mkdir(parents=True)
    for name, data in files:
        (host / name).write_bytes(data)
    return dest


def caveat_run(tmp_path):
    """main pid 4242 (window, pauses, dropped spans), main pid 4343 (none of them) and
    a truncated file."""
    cut = main_file(4545, caveats=False).encode()
    return write_run(tmp_path / "run", [("main-4242.lapse", main_file().encode()),
                                        ("main-4343.lapse", main_file(4343, caveats=False).encode()),
                                        ("main-4545.lapse", cut[: len(cut) // 2])])


def page_of(browser, run, tmp_path, *more):  # noqa: F811
    html = tmp_path / "v.html"
    tv.lapse("view", str(run), *more, "-o", str(html))
    return open_page(browser, html)


def shown_list(page) -> list[str]:
    return page.eval_on_selector_all("#caveat-list li", "els => els.map(e => e.textContent)")


def test_the_count_opens_the_reports_caveats(browser, tmp_path):  # noqa: F811
    run = caveat_run(tmp_path)
    doc = json.loads(tv.lapse("report", str(run), "--json").stdout)
    kinds = [c["kind"] for c in doc["caveats"]]
    assert {"dropped_spans", "activity_paused"} <= set(kinds) and len(kinds) >= 3, kinds
    page = page_of(browser, run, tmp_path)
    count = page.locator("#caveat-count")
    assert count.inner_text() == f"{len(kinds)} caveats"
    assert not page.locator("#caveat-list").is_visible()
    # from any tab: the count opens the list, in the report's words and order
    page.evaluate("window.lapseView.show('timeline')")
    count.click()
    assert page.locator("#caveat-list").is_visible()
    assert shown_list(page) == [c["message"] for c in doc["caveats"]]
    count.click()
    assert not page.locator("#caveat-list").is_visible()
    page.close()


def test_a_process_with_caveats_is_marked_in_its_lane(browser, tmp_path):  # noqa: F811
    run = caveat_run(tmp_path)
    doc = json.loads(tv.lapse("report", str(run), "--json").stdout)
    mine = [c["message"] for c in doc["caveats"] if c.get("pid") == 4242]
    assert len(mine) >= 2  # dropped spans, activity paused
    assert not [c for c in doc["caveats"] if c.get("pid") == 4343]
    page = page_of(browser, run, tmp_path)
    page.evaluate("window.lapseView.show('timeline')")
    lanes = page.evaluate(f"{TL}.lanes()")
    marks = page.evaluate(f"{TL}.marks()")
    (m,) = marks  # 4343 has none; the truncated file is no process
    assert lanes[m["lane"]]["kind"] == "process" and lanes[m["lane"]]["pid"] == 4242
    assert [doc["caveats"][i]["message"] for i in m["caveats"]] == mine
    tip = page.evaluate(f"{TL}.hover({(m['x0'] + m['x1']) / 2}, {m['y'] + m['h'] / 2})")
    assert tip.splitlines() == mine
    page.close()


def test_the_window_and_the_pauses_are_bands_at_the_reports_times(browser, tmp_path):  # noqa: F811
    run = caveat_run(tmp_path)
    doc = json.loads(tv.lapse("report", str(run), "--json").stdout)
    (w,) = doc["backend_windows"]
    assert w["pid"] == 4242 and w["open_at_ns"] == 3 * MS and w["close_at_ns"] == 5 * MS
    (pz,) = [c for c in doc["caveats"] if c["kind"] == "activity_paused"]
    assert pz["from_ns"] == 2500 * 1000 and pz["to_ns"] == 4500 * 1000
    page = page_of(browser, run, tmp_path)
    page.evaluate("window.lapseView.show('timeline')")
    lanes = page.evaluate(f"{TL}.lanes()")
    bands = page.evaluate(f"{TL}.bands()")
    assert sorted(b["kind"] for b in bands) == ["paused", "window"]
    win = next(b for b in bands if b["kind"] == "window")
    paused = next(b for b in bands if b["kind"] == "paused")
    # through the page's own scale, within a pixel of the report's open and close; and
    # the spans of entries 3 and 5 start there (one clock)
    x_open, x_close = page.evaluate(f"[{TL}.xOf({3 * MS}), {TL}.xOf({5 * MS})]")
    assert abs(win["x0"] - x_open) < 1 and abs(win["x1"] - x_close) < 1
    starts = sorted(b["x0"] for b in page.evaluate(f"{TL}.bars()")
                    if b.get("path") == "step" and lanes[b["lane"]]["pid"] == 4242)
    assert abs(starts[2] - win["x0"]) < 1 and abs(starts[4] - win["x1"]) < 1
    assert win["label"] == "torch window: entries 3..4 of step"
    # over 4242's lanes: from its process lane to its last one
    own = [i for i, l in enumerate(lanes) if l["pid"] == 4242]
    assert lanes[own[0]]["kind"] == "process" and win["y"] == lanes[own[0]]["y"]
    assert win["y"] + win["h"] == lanes[own[-1]]["y"] + lanes[own[-1]]["h"]
    # the pauses: one band (first start to last end) on its GPU track, with the count
    gpu = [i for i in own if lanes[i]["kind"] == "gpu"]
    assert len(gpu) == 1 and paused["y"] == lanes[gpu[0]]["y"] and paused["h"] == lanes[gpu[0]]["h"]
    x_from, x_to = page.evaluate(f"[{TL}.xOf({2500 * 1000}), {TL}.xOf({4500 * 1000})]")
    assert abs(paused["x0"] - x_from) < 1 and abs(paused["x1"] - x_to) < 1
    assert paused["label"] == "ACTIVITY paused (torch.profiler had CUPTI): 2 times, 1.5ms in all"
    assert paused["more"].startswith("From the first pause's start to the last one's end")
    tip = page.evaluate(f"{TL}.hover({(x_from + x_to) / 2}, {paused['y'] + 8})")
    assert tip.splitlines() == [paused["label"], paused["more"]]
    tip = page.evaluate(f"{TL}.hover({(x_open + x_close) / 2}, {win['y'] + 8})")
    assert tip.splitlines() == [win["label"], "Open from 3.0ms to 5.0ms after the run's start; no trace"]
    page.screenshot(path=str(tv.shots_dir() / "timeline-bands.png"))
    page.close()


def test_no_caveats_no_count_no_marks_no_bands(browser, tmp_path):  # noqa: F811
    run = write_run(tmp_path / "run", [("main-4343.lapse", main_file(4343, caveats=False).encode())])
    doc = json.loads(tv.lapse("report", str(run), "--json").stdout)
    assert doc["caveats"] == [] and doc["backend_windows"] == []
    page = page_of(browser, run, tmp_path)
    assert page.locator("#caveat-count").count() == 0 and page.locator("#caveat-list").count() == 0
    page.evaluate("window.lapseView.show('timeline')")
    assert page.evaluate(f"{TL}.marks()") == [] and page.evaluate(f"{TL}.bands()") == []
    page.close()


def test_the_diff_page_counts_both_sides_caveats(browser, tmp_path):  # noqa: F811
    a = caveat_run(tmp_path / "a")
    b = write_run(tmp_path / "b" / "run", [("main-4343.lapse", main_file(4343, caveats=False).encode())])
    want = json.loads(tv.lapse("diff", str(a), str(b), "--json").stdout)["caveats"]
    assert want and {c["side"] for c in want} == {"a"}
    page = page_of(browser, a, tmp_path, str(b))
    count = page.locator("#caveat-count")
    assert count.inner_text() == f"{len(want)} caveats"
    count.click()
    assert shown_list(page) == [c["side"].upper() + " " + c["message"] for c in want]
    page.close()


def test_a_window_still_open_and_a_pause_under_way_run_to_the_right_edge(browser, tmp_path):  # noqa: F811
    f = main_file()
    f.meta.update(window_closed_entry=0, window_close_ns=0, window_entries=6, activity_pause_to_ns=0)
    run = write_run(tmp_path / "run", [("main-4242.lapse", f.encode())])
    doc = json.loads(tv.lapse("report", str(run), "--json").stdout)
    (w,) = doc["backend_windows"]
    (pz,) = [c for c in doc["caveats"] if c["kind"] == "activity_paused"]
    assert w["state"] == "open" and w["close_at_ns"] is None and pz["to_ns"] is None
    page = page_of(browser, run, tmp_path)
    page.evaluate("window.lapseView.show('timeline')")
    rng = page.evaluate(f"{TL}.range()")
    bands = {b["kind"]: b for b in page.evaluate(f"{TL}.bands()")}
    assert bands["window"]["t1"] is None and bands["window"]["x1"] == rng["width"]
    assert bands["paused"]["t1"] is None and bands["paused"]["x1"] == rng["width"]
    assert bands["window"]["label"] == "torch window: entries 3..6 of step so far (still open when its file was written)"
    assert "still paused when its file was written" in bands["paused"]["more"]
    x_open = page.evaluate(f"{TL}.xOf({3 * MS})")
    assert abs(bands["window"]["x0"] - x_open) < 1
    page.close()


def test_the_text_report_says_why_a_window_has_no_trace(tmp_path):
    """A window still open when its file was written has no trace yet (no caveat to
    point at); a closed one without a trace points at its caveat only when it has one."""
    cases = {"open": ({"window_closed_entry": 0, "window_close_ns": 0},
                      "no trace yet (the backend writes it when the window closes)"),
             "failed": ({"window_error": "torch could not write its trace: OSError: full"},
                        "no trace (CAVEATS say why)"),
             "silent": ({}, "no trace (the backend named none and gave no reason)")}
    for name, (meta, line) in cases.items():
        f = main_file()
        f.meta.update(meta)
        run = write_run(tmp_path / name, [("main-4242.lapse", f.encode())])
        text = tv.lapse("report", str(run)).stdout
        assert f"    {line}\n" in text, (name, text)
        failed = "window_failed" in [c["kind"] for c in json.loads(
            tv.lapse("report", str(run), "--json").stdout)["caveats"]]
        assert failed == (name == "failed"), name
