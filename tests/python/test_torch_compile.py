"""torch.compile of code that calls @span functions, during a session: Dynamo
traces a timed function's code, graph-breaks at its span marks (they run eagerly)
and never raises; every call that runs records its span, and the results are the
eager ones. Each program runs in a child of its own (Dynamo's caches and counters
are per process), compiled and run once dormant, then in a session, then after it.
Where torch is not installed (CPython 3.12+ here), test_deep_recursion.py checks
that timed code holds nothing that Dynamo cannot load."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

from conftest import needs_torch, phases, report

ROUNDS = 3

HEADER = """
import json, sys, warnings
warnings.filterwarnings("ignore", message="Failed to initialize NumPy")
import torch
from torch._dynamo.utils import counters
import lapse
from lapse import Profiler, span

torch.manual_seed(0)
x = torch.randn(8, 8)
"""

FOOTER = """
want = eager(x)
first = compiled(x)  # dormant: compiled as the function's own code
graphs_dormant = counters["stats"]["unique_graphs"]
with Profiler(run_dir=sys.argv[1]) as p:
    got = [warm(x)]
    got += [compiled(x) for _ in range({rounds})]
    left_open = lapse.current()
after = compiled(x)
print(json.dumps({{
    "same": all(torch.allclose(r, want) for r in [first, *got, after] if r is not None),
    "open": left_open,
    "file": p.file,
    "graphs_dormant": graphs_dormant,
    "graphs": counters["stats"]["unique_graphs"],
    "breaks": list(counters["graph_break"]),
}}))
"""

PROGRAMS = {
    # torch.compile of a @span function
    "function": """
        @span
        def f(x):
            return torch.sin(x) * 2 + x

        eager = f
        compiled = torch.compile(f)
        warm = lambda x: None
        """,
    # a compiled module whose forward calls @span functions
    "module": """
        @span
        def scale(y):
            return torch.relu(y) * 2

        @span
        def shift(y):
            return y + 1

        class Net(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.lin = torch.nn.Linear(8, 8)

            def forward(self, x):
                y = scale(self.lin(x))
                return shift(torch.tanh(y)).sum()

        eager = Net()
        compiled = torch.compile(eager)
        warm = lambda x: None
        """,
    # a compiled function calling a @span function that an eager call in the
    # session has switched to its timed code (3.12+: deeper than 32 timed calls)
    "deep": """
        @span
        def down(n, y):
            return y if n == 0 else down(n - 1, y + 1)

        def eager(x):
            return down(40, torch.cos(x)) * 3

        compiled = torch.compile(eager)
        warm = eager
        """,
}

# Dynamo inlines the code of a function that a compiled function calls: on 3.11,
# in a session, that is its timed code (a graph break at its marks, and the call
# runs eagerly); on 3.12+ its own code, unless it was switched to its timed code,
# so the calls inlined into a graph record no span. (Read in torch's source;
# torch is installed on CPython 3.11 only here.)
INLINED = 0 if sys.version_info < (3, 12) else 1
SPANS = {
    "function": {"f": ROUNDS},
    "module": {"scale": ROUNDS * (1 - INLINED), "shift": ROUNDS * (1 - INLINED)},
    "deep": {"down": (ROUNDS + 1) * 41},
}


@pytest.mark.parametrize("program", list(PROGRAMS))
def test_torch_compile_during_a_session(tmp_path, program):
    needs_torch()
    source = HEADER + textwrap.dedent(PROGRAMS[program]) + FOOTER.format(rounds=ROUNDS)
    r = subprocess.run([sys.executable, "-c", source, str(tmp_path)], capture_output=True,
                       text=True, timeout=600)
    assert r.returncode == 0, f"exit {r.returncode}\n{r.stdout[-2000:]}\n{r.stderr[-6000:]}"
    got = json.loads(r.stdout.strip().splitlines()[-1])
    assert got["same"], got  # dormant, in the session and after it: the eager results
    assert got["open"] == ""
    assert got["graphs_dormant"] >= 1, got  # Dynamo compiled the program
    # the only graph breaks are lapse's span marks (3.11: every timed call; 3.12+:
    # the calls deeper than the switch)
    assert all("SpanMarks" in reason for reason in got["breaks"]), got["breaks"]
    doc = report(got["file"])
    assert all(w["unmatched_ends"] == 0 for w in doc["workers"]), doc["workers"]
    tree = phases(doc)
    calls = {name: sum(p["calls"] + p["folded"] for path, p in tree.items()
                       if set(path.split("/")) == {name})
             for name in SPANS[program]}
    assert calls == SPANS[program], tree
