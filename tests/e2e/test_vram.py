"""VRAM from torch (section 14 GPU_MEMORY) in the GPU block, from files written by
tests/e2e/lapse_files.py (from docs/format.md): per device (uuid) the largest process
peak of the role, a device without a uuid on its own line, NVML's figures `-`; the
view page's figures are the JSON report's."""

from __future__ import annotations

import json

import lapse_files as lf
from test_view import browser, lapse, open_page, parse_shown, pointer  # noqa: F401 (fixture)

MB = 1000 * 1000
UUID = "GPU-1111aaaa-0000-0000-0000-000000000000"


def vram_run(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    a = lf.chain(lf.process(10, role="learner"), 1, "step")
    a.sections += [lf.gpu_device_section(1000, [(0, "Fake GPU 0", 4, 4, 200, 4, 100, 130 * MB)]),
                   lf.gpu_memory_section(7, 0, "", [(0, UUID, "Fake H200", 100 * MB, 120 * MB)])]
    b = lf.chain(lf.process(11, role="learner"), 1, "step")
    b.sections.append(lf.gpu_memory_section(
        9, 2, "", [(0, UUID, "Fake H200", 150 * MB, 140 * MB), (1, "", "Fake H200", 5 * MB, 8 * MB),
                   (2, "GPU-3333", "Fake H200", 0, 0)]))
    c = lf.chain(lf.process(12, role="learner"), 1, "step")
    for f, name in ((a, "a"), (b, "b"), (c, "c")):
        (run / f"{name}.lapse").write_bytes(f.encode())
    return run


def test_largest_process_peak_per_device(tmp_path) -> None:
    run = vram_run(tmp_path)
    role = json.loads(lapse("report", str(run), "--json").stdout)["roles"][0]
    assert role["gpu_state"] == "measured" and role["vram_state"] == "measured"
    assert [g["vram_held_peak_bytes"] for g in role["gpu"]] == [130 * MB]  # NVML's, beside
    v0, v1 = role["vram"]  # the never-used device 2 (peaks 0) is left out
    assert (v0["uuid"], v0["processes"], v0["pid"]) == (UUID, 2, 11)
    assert v0["allocated_peak_bytes"] == 150 * MB and v0["reserved_peak_bytes"] == 140 * MB
    assert (v1["uuid"], v1["torch_index"], v1["processes"]) == ("", 1, 1)
    assert v1["allocated_peak_bytes"] == 5 * MB and v1["reserved_peak_bytes"] == 8 * MB
    assert v0["busy_pct"] is None and v0["vram_held_peak_bytes"] is None
    assert role["vram_resets"] == 2
    text = lapse("report", str(run)).stdout
    assert "Fake GPU 0 (device 0, pid 10 on testhost)" in text
    assert (f"  cuda:0 Fake H200 ({UUID}, pid 11 on testhost, the largest of its processes): "
            "busy -, idle -, this run -;\n"
            "    VRAM held peak -; VRAM allocated (peak) 150.0 MB; VRAM reserved (peak) 140.0 MB\n") in text
    assert "cuda:1 Fake H200 (no uuid, pid 11 on testhost): busy -" in text
    assert "torch's peak stats were reset (seen at 2 readings)" in text


def test_view_figures_are_the_json_reports(browser, tmp_path) -> None:  # noqa: F811
    run = vram_run(tmp_path)
    html = tmp_path / "v.html"
    lapse("view", str(run), "-o", str(html))
    report = json.loads(lapse("report", str(run), "--json").stdout)
    page = open_page(browser, html)
    figs = page.eval_on_selector_all(
        "#tab-summary table.vram [data-json]",
        "els => els.map(e => [e.dataset.json, e.dataset.kind, e.dataset.value, e.textContent])")
    assert sorted(f[0] for f in figs) == sorted(
        f"/roles/0/vram/{i}/{k}" for i in (0, 1)
        for k in ("pid", "processes", "allocated_peak_bytes", "reserved_peak_bytes"))
    for ptr, kind, value, shown in figs:
        want = pointer(report, ptr)
        assert json.loads(value) == want, ptr
        got, tol = parse_shown(kind, shown)
        assert abs(got - want) <= tol * 1.0001 + 1e-9, (ptr, shown, want)
    cells = page.eval_on_selector_all("#tab-summary table.vram tr:nth-child(2) td",
                                      "els => els.map(e => e.textContent)")
    assert cells[4:8] == ["-", "-", "-", "-"]  # NVML's figures: not joined, unknown
    page.close()
