"""A decorated recursive function goes exactly as deep under a session as without
one, on every interpreter, and its spans are recorded and closed: the timed call
path holds no C frame per level (3.11 crashed at 20,000 levels, 3.12 and 3.13 ran
into their C recursion limits at 748 and 4,998). The deep runs happen in a child
process: a crash there fails the test instead of ending the test run."""

from __future__ import annotations

import builtins
import dis
import gc
import inspect
import io
import json
import pickle
import signal
import subprocess
import sys
import textwrap
import time
import traceback
import types
import weakref

import pytest

import lapse
import lapse._lapse as core
from lapse import Profiler, span

from conftest import phases, report

HEADER = """
import json, sys, threading
import lapse
from lapse import Profiler, span
"""


def run_child(body: str, run_dir, timeout: float = 240) -> dict:
    """Runs HEADER + body in a child of this interpreter; its last stdout line is
    JSON. A crash or an exception fails with what the child printed."""
    r = subprocess.run([sys.executable, "-c", HEADER + textwrap.dedent(body), str(run_dir)],
                       capture_output=True, text=True, timeout=timeout)
    assert r.returncode == 0, f"exit {r.returncode}\n{r.stdout[-2000:]}\n{r.stderr[-4000:]}"
    return json.loads(r.stdout.strip().splitlines()[-1])


def calls_of(got: dict, names: tuple[str, ...]) -> int:
    """Calls of the paths made of these names only, folded levels included (the tree
    folds paths deeper than max_depth into the deepest one)."""
    total = 0
    for path, p in got.items():
        if all(part in names for part in path.split("/")):
            total += p["calls"] + p["folded"]
    return total


def no_unmatched_ends(doc: dict) -> None:
    assert all(w["unmatched_ends"] == 0 for w in doc["workers"]), doc["workers"]
    assert not [c for c in doc["caveats"] if c.get("kind") == "unmatched_ends"], doc["caveats"]


PROBE = """
limit = {limit}
if limit:
    sys.setrecursionlimit(limit)
deepest = 0

@span
def down(n):
    global deepest
    deepest = n
    down(n + 1)

@span
def even(n):
    global deepest
    deepest = n
    odd(n + 1)

@span
def odd(n):
    global deepest
    deepest = n
    even(n + 1)

def reach(fn):
    global deepest
    deepest = 0
    try:
        fn(1)
    except RecursionError:
        pass
    return deepest

without = [reach(down), reach(even)]
with Profiler(run_dir=sys.argv[1]) as p:
    within = [reach(down), reach(even)]
    left_open = lapse.current()
print(json.dumps({{"without": without, "with": within, "open": left_open, "file": p.file}}))
"""


@pytest.mark.parametrize("limit", [None, 20_100], ids=["default_limit", "limit_20100"])
def test_recursion_goes_as_deep_under_a_session(tmp_path, limit):
    """The depth a recursion reaches before RecursionError, without and with a
    session, in the same process: one function, and two calling each other."""
    got = run_child(PROBE.format(limit=limit), tmp_path)
    print(f"recursion depth (limit {limit}): without {got['without']}, with {got['with']}")
    assert got["with"] == got["without"], got
    if limit:
        assert min(got["with"]) >= 20_000, got
    assert got["open"] == ""  # every span closed on the way out of the RecursionError
    doc = report(got["file"])
    no_unmatched_ends(doc)
    tree = phases(doc)
    assert tree["down"]["calls"] == 1 and tree["even"]["calls"] == 1
    assert tree["even/odd"]["calls"] == 1
    assert calls_of(tree, ("down",)) == got["with"][0]
    assert calls_of(tree, ("even", "odd")) == got["with"][1]


def test_a_deep_recursion_that_raises_at_the_bottom_and_is_caught_halfway(tmp_path):
    got = run_child("""
        sys.setrecursionlimit(20_100)

        @span
        def down(n):
            if n == 20_000:
                raise KeyError(n)
            if n == 10_000:
                try:
                    return down(n + 1)
                except KeyError:
                    return "caught", lapse.current().count(".") + 1
            return down(n + 1)

        with Profiler(run_dir=sys.argv[1]) as p:
            result = down(1)
            left_open = lapse.current()
            with span("after"):
                pass
        print(json.dumps({"result": result, "open": left_open, "file": p.file}))
        """, tmp_path)
    caught, open_there = got["result"]
    assert caught == "caught"
    assert open_there == 65  # max_depth spans and the folded one: the stack is full there
    assert got["open"] == ""
    doc = report(got["file"])
    no_unmatched_ends(doc)
    tree = phases(doc)
    assert calls_of(tree, ("down",)) == 20_000
    assert tree["down"]["calls"] == 1 and tree["after"]["calls"] == 1  # "after" at the top


def test_mutual_recursion_20000_deep(tmp_path):
    got = run_child("""
        sys.setrecursionlimit(20_100)

        @span
        def is_even(n):
            return True if n == 0 else is_odd(n - 1)

        @span
        def is_odd(n):
            return False if n == 0 else is_even(n - 1)

        with Profiler(run_dir=sys.argv[1]) as p:
            result = [is_even(20_000), is_odd(20_000), is_even(19_999)]
        print(json.dumps({"result": result, "file": p.file}))
        """, tmp_path)
    assert got["result"] == [True, False, False]
    doc = report(got["file"])
    no_unmatched_ends(doc)
    tree = phases(doc)
    assert tree["is_even"]["calls"] == 2 and tree["is_odd"]["calls"] == 1
    assert tree["is_even/is_odd"]["calls"] == 2
    assert calls_of(tree, ("is_even", "is_odd")) == 3 * 20_001 - 1


def test_threads_recurse_20000_deep_at_once_on_small_stacks(tmp_path):
    """Four threads at once, each on a 256 KiB C stack: a C frame per level would
    overflow it within a few hundred levels."""
    got = run_child("""
        sys.setrecursionlimit(20_100)
        threading.stack_size(256 * 1024)

        @span
        def down(n):
            return 0 if n == 0 else 1 + down(n - 1)

        def run_threads():
            results = []

            def work():
                results.append(down(20_000))

            threads = [threading.Thread(target=work) for _ in range(4)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            return results

        without = run_threads()
        with Profiler(run_dir=sys.argv[1]) as p:
            within = run_threads()
        print(json.dumps({"without": without, "with": within, "file": p.file}))
        """, tmp_path)
    assert got["without"] == got["with"] == [20_000] * 4
    doc = report(got["file"])
    no_unmatched_ends(doc)
    tree = phases(doc)
    assert tree["down"]["calls"] == 4
    assert calls_of(tree, ("down",)) == 4 * 20_001


@pytest.mark.filterwarnings("error::pytest.PytestUnraisableExceptionWarning")
def test_exceptions_from_a_signal_handler_close_every_span_once(tmp_path):
    """A signal handler that raises does so at whichever instruction checks for
    signals next: every span, of timed code too, still ends exactly once, and the
    exception reaches the program (none is raised inside lapse and lost)."""

    class Tick(Exception):
        pass

    armed = [False]

    def handler(signum, frame):
        if armed[0]:
            armed[0] = False
            raise Tick

    @span
    def leaf():
        pass

    @span
    def down(n):
        return leaf() if n == 0 else down(n - 1)

    caught = rounds = 0
    old = signal.signal(signal.SIGALRM, handler)
    try:
        with Profiler(run_dir=tmp_path) as p:
            signal.setitimer(signal.ITIMER_REAL, 0.0001, 0.0001)
            deadline = time.monotonic() + 1.0
            while time.monotonic() < deadline:
                try:
                    armed[0] = True
                    down(40)  # past the depth where 3.12+ switches to timed code
                    armed[0] = False
                except Tick:
                    caught += 1
                rounds += 1
            signal.setitimer(signal.ITIMER_REAL, 0, 0)
            left_open = lapse.current()
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0, 0)
        signal.signal(signal.SIGALRM, old)
    assert caught > 100, (caught, rounds)
    assert left_open == ""
    doc = report(p.file)
    no_unmatched_ends(doc)
    # a round whose Tick came at down's RESUME, before its first instruction, has
    # no call of down
    assert rounds - caught <= phases(doc)["down"]["calls"] <= rounds


def _faces(fn, *args):
    """What a user sees of a decorated function: a traceback through it, its frames,
    its signature, and its pickled self."""
    try:
        fn(*args)
    except ZeroDivisionError as exc:
        tb = "".join(traceback.format_exception(exc))
    return tb, inspect.signature(fn), pickle.loads(pickle.dumps(fn)) is fn


@span
def _recurse_then_fail(n, frames):
    """docstring kept"""
    if n == 0:
        frames.append([f.function for f in inspect.stack(0)[:60]])
        return 1 / 0
    return _recurse_then_fail(n - 1, frames)


@pytest.mark.parametrize("depth", [3, 100], ids=["shallow", "deep"])
def test_a_timed_function_looks_the_same(tmp_path, depth):
    """Tracebacks (lines and carets), frames, signature, pickling and attributes of
    a decorated function are the same under a session as without one, shallow and
    past the depth where 3.12+ switches to timed code."""
    fn = _recurse_then_fail
    dormant_frames: list = []
    dormant = _faces(fn, depth, dormant_frames)
    timed_frames: list = []
    with Profiler(run_dir=tmp_path) as p:
        timed = _faces(fn, depth, timed_frames)
    assert timed == dormant
    assert timed_frames == dormant_frames
    assert fn.__name__ == "_recurse_then_fail" and fn.__doc__ == "docstring kept"
    assert type(fn) is types.FunctionType and fn.__lapse_span__ == "_recurse_then_fail"
    assert calls_of(phases(report(p.file)), ("_recurse_then_fail",)) == depth + 1


def test_a_tracer_sees_the_same_events(tmp_path):
    """A debugger's or coverage's line tracer sees the same events from timed code
    as from the function's own (what is inserted has no line of its own), shallow
    and past the depth where 3.12+ switches to timed code."""

    @span
    def work(n):
        total = 0
        for i in range(3):
            try:
                if i % 2:
                    raise ValueError(i)
                total += i
            except ValueError:
                total -= 1
        if n == 40:
            raise KeyError(total)
        return work(n + 1) if n else total

    def traced():
        events = []

        def tracer(frame, event, arg):
            if frame.f_code.co_name == "work":
                events.append((event, frame.f_lineno))
            return tracer

        sys.settrace(tracer)
        try:
            work(0)
            with pytest.raises(KeyError):
                work(1)
        finally:
            sys.settrace(None)
        return events

    own = traced()
    with Profiler(run_dir=tmp_path):
        timed = traced()
    assert timed == own and len(own) > 400


def test_a_function_whose_timed_code_cannot_be_made_is_named(tmp_path):
    """A function whose code has no RESUME where it starts (here: made so) has no
    timed code; a warning names it (3.11: when the session starts, and it is not
    timed; 3.12+: when it is called past the depth that needs it, and it is timed
    with a C frame per call from there on), and it runs as it does without lapse."""

    def strange(n):
        return 0 if n == 0 else 1 + strange(n - 1)

    raw = bytearray(strange.__code__.co_code)
    raw[next(i.offset for i in dis.get_instructions(strange) if i.opname == "RESUME")] = \
        dis.opmap["NOP"]
    strange.__code__ = strange.__code__.replace(co_code=bytes(raw))
    strange = span(strange)
    with pytest.warns(RuntimeWarning, match="strange.*timed"):
        with Profiler(run_dir=tmp_path):
            assert strange(40) == 40


class _Globals(dict):
    pass


@pytest.mark.parametrize("scope, why", [
    ({"__builtins__": {"len": len}}, "builtins are not"),
    (_Globals(__builtins__=builtins), "globals are not a plain dict"),
], ids=["builtins_of_its_own", "globals_a_dict_subclass"])
def test_a_function_whose_timed_code_would_not_find_its_marks_is_named(tmp_path, scope, why):
    """Timed code finds its span marks among the builtins, past the globals: a
    function made with builtins of its own (exec with a "__builtins__" of its own,
    as namedtuple makes __new__) or with globals whose lookups could run Python code
    has no timed code; a warning names it when the session starts (3.11: it is not
    timed; 3.12+: timed with a C frame per call, also past the depth where it would
    switch), and it runs as it does without lapse."""
    exec("def own(n):\n    return len('x') if n == 0 else 1 + own(n - 1)\n", scope)
    own = span(scope["own"])
    code = own.__code__
    assert own(40) == 41
    with pytest.warns(RuntimeWarning, match=f"own.*timed.*{why}"):
        with Profiler(run_dir=tmp_path) as p:
            assert own(40) == 41
            assert own.__code__ is code
    assert calls_of(phases(report(p.file)), ("own",)) == (0 if sys.version_info < (3, 12) else 41)


def test_timed_code_does_not_outlive_its_function(tmp_path):
    """Functions compiled and decorated over and over (generated code) leave
    nothing behind: their code and timed code go with them."""
    refs = []
    with Profiler(run_dir=tmp_path):
        for i in range(3):
            scope: dict = {}
            exec(compile("def gen(n):\n    return 0 if n == 0 else gen(n - 1)\n",
                         f"<gen{i}>", "exec"), scope)
            original = scope["gen"].__code__
            assert span(scope["gen"]) is scope["gen"]
            assert scope["gen"](40) == 0  # past the depth where 3.12+ switches
            assert scope["gen"].__code__ is not original  # it runs its timed code
            refs.append((weakref.ref(original), weakref.ref(scope["gen"].__code__)))
            del scope, original
    gc.collect()
    assert [(a(), b()) for a, b in refs] == [(None, None)] * 3


def test_timed_code_marks_pickle():
    """Code is copied by value by some pickling libraries: a timed code's marks
    pickle by their span name."""
    marks = core._span_marks("pickled_span")
    assert pickle.loads(pickle.dumps(marks)) is marks
    assert -marks == 0 and marks ^ 0 is None  # dormant: nothing begun, nothing ended


class _ByValue(pickle.Pickler):
    """Pickles code objects by their fields, as cloudpickle does."""

    def reducer_override(self, obj):
        if obj is types.CodeType:  # not importable by name: builtins.code
            return eval, ("__import__('types').CodeType",)
        if type(obj) is types.CodeType:
            c = obj
            return types.CodeType, (
                c.co_argcount, c.co_posonlyargcount, c.co_kwonlyargcount, c.co_nlocals,
                c.co_stacksize, c.co_flags, c.co_code, c.co_consts, c.co_names, c.co_varnames,
                c.co_filename, c.co_name, c.co_qualname, c.co_firstlineno, c.co_linetable,
                c.co_exceptiontable, c.co_freevars, c.co_cellvars)
        return NotImplemented


def test_a_timed_code_pickled_by_value_runs_in_a_fresh_process(tmp_path):
    """A timed code copied by value into a process that has made no span marks
    finds its marks there (unpickling them puts them among that process's
    builtins) and times its calls there."""

    def add(a, b):
        return a + b

    timed = core._timed_code(add.__code__, core._span_marks("by_value"))
    data = io.BytesIO()
    _ByValue(data).dump(timed)
    (tmp_path / "code.pickle").write_bytes(data.getvalue())
    got = run_child("""
        import pickle, types
        code = pickle.loads(open(sys.argv[1] + "/code.pickle", "rb").read())
        add = types.FunctionType(code, {"__builtins__": __builtins__})
        with Profiler(run_dir=sys.argv[1]) as p:
            result = add(2, 3)
        print(json.dumps({"result": [result, add(4, 5)], "file": p.file}))
        """, tmp_path)
    assert got["result"] == [5, 9]
    assert phases(report(got["file"]))["by_value"]["calls"] == 1


# ---- the timed code read back with dis, against the code it was made from ----

_BEGIN = ["LOAD_GLOBAL", "UNARY_NEGATIVE"]
_END = ["LOAD_GLOBAL", "SWAP", "BINARY_OP", "POP_TOP"]
_HANDLER = ["SWAP"] + _END + ["SWAP", "RERAISE"]
_NONE = (None, None, None, None)


def _groups(code):
    """(start offset incl. EXTENDED_ARG prefixes, instruction) of each instruction."""
    out, start = [], None
    for i in dis.get_instructions(code):
        if i.opname == "EXTENDED_ARG":
            start = i.offset if start is None else start
            continue
        out.append((i.offset if start is None else start, i))
        start = None
    return out


def check_timed_code(fn) -> None:
    code = fn.__code__
    marks = core._span_marks("checked")
    made = core._timed_code(code, marks)
    old, new = _groups(code), _groups(made)
    at = 0
    stands_for: dict[int, int] = {}  # old start -> new start of what stands for it
    pairs = []

    def expect(names, positions):
        nonlocal at
        got = [i.opname for _, i in new[at:at + len(names)]]
        assert got == names, (fn, at, got, names)
        for _, i in new[at:at + len(names)]:
            assert i.positions == positions, (fn, i)
            if i.opname == "LOAD_GLOBAL":  # the marks, from the builtins module
                assert vars(builtins)[i.argval] is marks and i.arg % 2 == 0, (fn, i)
            if i.opname == "BINARY_OP":
                assert i.argrepr == "^"
        at += len(names)

    for start, i in old:
        stands_for[start] = new[at][0]
        if i.opname == "RETURN_VALUE":
            expect(["SWAP"] + _END, i.positions)
        elif i.opname == "RETURN_CONST":
            expect(_END, i.positions)
        n = new[at][1]
        assert (n.opname, n.positions) == (i.opname, i.positions), (fn, i, n)
        if i.opcode in dis.hasjrel:
            pairs.append((i.argval, n.argval))
        else:
            assert n.arg == i.arg, (fn, i, n)
        at += 1
        if i.opname == "RESUME":
            expect(_BEGIN, _NONE)
            body = new[at][0]
    handler = new[at][0]
    expect(_HANDLER, _NONE)
    assert at == len(new)
    assert all(a is b for a, b in zip(made.co_consts, code.co_consts))
    assert made.co_consts[len(code.co_consts):] == (marks, code)  # and what it was made from
    assert made.co_names[:len(code.co_names)] == code.co_names
    assert vars(builtins)[made.co_names[len(code.co_names)]] is marks
    stands_for[len(code.co_code)] = handler
    for old_target, new_target in pairs:
        assert stands_for[old_target] == new_target, (fn, old_target, new_target)
    entries = [(stands_for[e.start], stands_for[e.end], stands_for[e.target], e.depth + 1, e.lasti)
               for e in dis._parse_exception_table(code)]
    covered, want = body, []
    for s, e, _, _, _ in entries + [(handler, handler, 0, 0, 0)]:
        if s > covered:
            want.append((covered, s, handler, 1, True))
        covered = max(covered, e)
    want = sorted(entries + want)
    got = [(e.start, e.end, e.target, e.depth, e.lasti) for e in dis._parse_exception_table(made)]
    assert got == want, fn
    assert made.co_stacksize >= code.co_stacksize + 1


def _corpus():
    import argparse
    import ast
    import calendar
    import configparser
    import dataclasses
    import difflib
    import enum
    import fractions
    import ipaddress
    import json.decoder
    import json.encoder
    import shlex
    import statistics
    import tokenize
    import urllib.parse

    seen = set()
    for module in (argparse, ast, calendar, configparser, dataclasses, difflib, enum, fractions,
                   inspect, ipaddress, json.decoder, json.encoder, shlex, statistics, textwrap,
                   tokenize, traceback, urllib.parse):
        for value in list(vars(module).values()):
            members = vars(value).values() if isinstance(value, type) else [value]
            for f in members:
                f = getattr(f, "__func__", f)
                if (isinstance(f, types.FunctionType) and id(f.__code__) not in seen
                        and not f.__code__.co_flags & 0x3A0):
                    seen.add(id(f.__code__))
                    yield f


def _big(n_consts: int, n_lines: int):
    """A function whose jumps and constants need EXTENDED_ARG."""
    body = "".join(f"    x{i} = {i}.5 if n else x\n" for i in range(n_consts))
    body += "    while n:\n" + "".join(f"        n -= {i % 3 + 1}\n" for i in range(n_lines))
    src = f"def big(n, x=0):\n{body}    return x\n"
    scope: dict = {}
    exec(compile(src, "<big>", "exec"), scope)
    return scope["big"]


def _shapes():
    def closure(a):
        b = [a]

        def inner():
            return b, a
        return inner

    def tries(n):
        try:
            try:
                if n == 1:
                    return "one"
                raise ValueError(n)
            finally:
                n += 1
        except ValueError as e:
            return e
        else:
            return None
        finally:
            n = 0

    def loops(items):
        out = {k: [v * 2 for v in range(k)] for k in items}
        for k in items:
            with open(__file__) as f:
                if k:
                    return f.read(1)
        while items:
            items = items[1:]
            if not items:
                break
        else:
            return 0
        return out

    def matches(x):
        match x:
            case [a, *rest]:
                return a, rest
            case {"k": v}:
                return v
            case str() | bytes():
                return "s"
        return None

    def empty():
        pass

    return [closure, closure(1), tries, loops, matches, empty, _big(300, 20), _big(2, 3000),
            _recurse_then_fail]


def test_timed_code_reads_back_as_the_code_it_was_made_from():
    """dis reads the timed code of some 2,500 stdlib functions and of odd shapes
    (EXTENDED_ARG jumps and constants, closures, match, nested try, with, loops) as
    the function's own instructions, arguments, jump targets, positions and
    exception table, with only the begin, the ends and the handler added."""
    checked = 0
    for fn in [*_shapes(), *_corpus()]:
        check_timed_code(fn)
        checked += 1
    assert checked > 1000


def _literal(value) -> bool:
    """What a tracer of bytecode (torch.compile's Dynamo) takes as a constant."""
    if type(value) in (tuple, frozenset):
        return all(map(_literal, value))
    return type(value) in (type(None), bool, int, float, complex, str, bytes, type(...),
                           type(NotImplemented), types.CodeType)


def test_timed_code_loads_nothing_a_bytecode_tracer_refuses():
    """torch.compile traces timed code: it makes a constant of what LOAD_CONST loads
    (and raised on a SpanMarks there), and of a builtin that LOAD_GLOBAL finds and
    that is not callable. Timed code loads its marks from the builtins, callable,
    and only literals as constants."""
    marks = core._span_marks("checked")
    checked = 0
    for fn in [*_shapes(), *_corpus()]:
        for i in dis.get_instructions(core._timed_code(fn.__code__, marks)):
            if i.opname in ("LOAD_CONST", "RETURN_CONST"):
                assert _literal(i.argval), (fn, i)
            elif (i.opname == "LOAD_GLOBAL" and i.argval not in fn.__globals__
                    and i.argval in vars(builtins)):
                value = vars(builtins)[i.argval]
                assert callable(value) or _literal(value), (fn, i)
        checked += 1
    assert checked > 1000


def test_timed_stdlib_functions_behave_as_their_own(tmp_path):
    """Every plain function of json, textwrap and difflib run as timed code (as a
    session makes them) returns what it returns untimed."""
    import difflib
    import json.decoder
    import json.encoder

    def work():
        doc = {"a": [1, 2.5, None, {"b": "ü" * 3}], "c": [[[]]] * 3}
        text = json.dumps(doc, indent=2, sort_keys=True) + json.dumps(doc)
        back = json.loads(text.split("\n}")[0] + "\n}")
        wrapped = textwrap.fill("lapse " * 200, width=37) + textwrap.dedent("  a\n  b\n")
        diff = list(difflib.unified_diff(wrapped.splitlines(), text.splitlines(), lineterm=""))
        close = difflib.get_close_matches("lapze", ["lapse", "laps", "elapse"])
        return back, wrapped, diff, close

    own = work()
    swapped = []
    with Profiler(run_dir=tmp_path) as p:
        for module in (json, json.decoder, json.encoder, textwrap, difflib):
            for value in list(vars(module).values()):
                members = vars(value).values() if isinstance(value, type) else [value]
                for f in members:
                    f = getattr(f, "__func__", f)
                    # (a session leaves a function with builtins of its own, such as a
                    # namedtuple's __new__, without timed code: it would not find its
                    # marks)
                    if (isinstance(f, types.FunctionType) and not f.__code__.co_flags & 0x3A0
                            and f.__builtins__ is vars(builtins)):
                        marks = core._span_marks(f.__qualname__)
                        swapped.append((f, f.__code__))
                        f.__code__ = core._timed_code(f.__code__, marks)
        try:
            timed = work()
            left_open = lapse.current()
        finally:
            for f, code in swapped:
                f.__code__ = code
    assert timed == own
    assert left_open == "" and len(swapped) > 50
    tree = phases(report(p.file))
    assert tree["dumps"]["calls"] == 2 and tree["fill"]["calls"] == 1
