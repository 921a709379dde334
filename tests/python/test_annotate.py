"""annotate=True: every span of Python code (with, decorated, phase) also opens
torch.profiler.record_function(name), so a torch.profiler capture shows lapse's spans,
nested as they ran; without torch it warns once and says why (``annotate_missing``);
off, nothing is called."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

from conftest import needs_torch


# torch is imported in a process of its own: a pytest process that imported it would
# make every child it forks start with torch's RSS (test_hostile_files bounds theirs)
CAPTURE = textwrap.dedent("""
    import json, sys
    import lapse
    from lapse import Profiler, span
    from torch.profiler import ProfilerActivity, profile

    @span("annotated.decorated")
    def decorated():
        with span("annotated.inner"):
            pass

    annotate = sys.argv[2] == "on"
    with profile(activities=[ProfilerActivity.CPU]) as capture:
        with Profiler(run_dir=sys.argv[1], annotate=annotate) as p:
            with span("annotated.outer"):
                decorated()
                with lapse.phase("annotated.phase"):
                    pass
            try:
                with span("annotated.raises"):
                    raise KeyError("through")
            except KeyError:
                pass
    events = {e.name: [e.time_range.start, e.time_range.end,
                       e.cpu_parent.name if e.cpu_parent else None]
              for e in capture.events() if e.name.startswith("annotated.")}
    print(json.dumps({"missing": p.annotate_missing, "events": events,
                      "failures": lapse._lapse.annotate_failures(),
                      "paths": list(p.result().stats())}))
""")


def capture(tmp_path, annotate: str) -> dict:
    out = subprocess.run([sys.executable, "-c", CAPTURE, str(tmp_path / "run"), annotate],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.splitlines()[-1])


def test_a_torch_profiler_capture_shows_the_spans_nested(tmp_path) -> None:
    needs_torch()
    got = capture(tmp_path, "on")
    assert got["missing"] is None and got["failures"] == 0
    events = got["events"]
    assert set(events) == {"annotated.outer", "annotated.decorated", "annotated.inner",
                           "annotated.phase", "annotated.raises"}

    def inside(child: str, parent: str) -> bool:
        c, q = events[child], events[parent]
        return q[0] <= c[0] and c[1] <= q[1]

    assert inside("annotated.inner", "annotated.decorated")
    assert inside("annotated.decorated", "annotated.outer")
    assert inside("annotated.phase", "annotated.outer")
    assert not inside("annotated.raises", "annotated.outer")
    assert events["annotated.inner"][2] == "annotated.decorated"
    assert events["annotated.decorated"][2] == "annotated.outer"
    # lapse's own report has them too
    paths = " ".join(got["paths"])
    assert "annotated.outer" in paths and "annotated.inner" in paths


def test_without_annotate_no_record_function_is_opened(tmp_path) -> None:
    needs_torch()
    got = capture(tmp_path, "off")
    assert got["events"] == {}
    assert "annotated.outer" in " ".join(got["paths"])


def test_without_torch_it_warns_once_and_says_why(tmp_path) -> None:
    # torch made unimportable (sys.modules["torch"] = None), in a process of its own:
    # the warning is once per process
    program = textwrap.dedent("""
        import sys, warnings
        sys.modules["torch"] = None
        import lapse
        from lapse import Profiler, span
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            for i in range(2):
                with Profiler(run_dir=sys.argv[1] + str(i), annotate=True) as p:
                    with span("no.torch"):
                        pass
                print("missing:", p.annotate_missing)
        print("warnings:", [str(w.message) for w in caught])
        print("spans:", list(p.result().stats()))
    """)
    out = subprocess.run([sys.executable, "-c", program, str(tmp_path / "run")],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0].startswith("missing: torch is not importable (") and lines[0] == lines[1]
    assert lines[2].count("lapse: annotate=True adds nothing: torch is not importable") == 1
    assert "no.torch" in lines[3]
