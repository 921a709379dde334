"""Profile: the result of a profiled run, as pure immutable data.

A ``Profile`` is what ``Profiler.result()`` and ``Profile.load(path)`` give you. It
holds two things and nothing else:

- the report document of the run (schema ``lapse.report`` version 2, documented in
  ``docs/report.md``), as the C analysis computed it when the profile was loaded;
- the bytes of every ``.lapse`` file of the run (of its newest attempt) as the reader
  read them: all of a file it took, and of a file it refused only what it examined
  before refusing it, so the profile can be saved, rendered, compared and exported
  after the processes, and even the files it came from, are gone.

It never refers to live files::

    from lapse import Profile

    before = Profile.load("runs/")          # the newest run under runs/
    after = Profile.load("runs-new/")
    after.show()                            # the text report, as `lapse report` prints it
    after.bottlenecks(5)                    # the paths with the most self time
    after.diff(before).show()               # what changed, with a stated test
    after.save("after.lapse")               # a .lapse file (or a run directory)
    after.perfetto("trace.json")            # open in ui.perfetto.dev

Paths are *dotted*: the names of the spans from the top-level one down, joined with
``"."`` (``"request.forward"``). ``PathStats.names`` keeps the names themselves,
which stays exact when a name holds a ``"."``. (The C reports and the JSON document
join names with ``"/"``.)

Every number is what the C layer measured: durations are integer nanoseconds, a
value that is not defined (the p50 of a path that completed no call) is ``None``,
never 0.
"""

from __future__ import annotations

import copy
import html as _html
import json
import os
import pathlib
import sys
from dataclasses import dataclass, field, fields
from types import MappingProxyType
from typing import IO, Any, Mapping, NamedTuple, TypeAlias

from . import _lapse

__all__ = ["Caveat", "DiffRow", "PathStats", "Profile", "ProfileDiff", "Usage", "Worker"]

StrPath: TypeAlias = "str | os.PathLike[str]"

_SUFFIX = ".lapse"


# ---- records ----


@dataclass(frozen=True)
class RankSpread:
    """How a path's per-rank total time spreads over the ranks of its role.

    ``ranks`` is n, the role's ranks; ``entered`` is k, the ranks with time in the
    path. ``min_ns``, ``median_ns`` and ``max_ns`` are over all n ranks' totals (the
    processes of one rank added), a rank that never entered the path counting as 0;
    ``slowest_rank`` is the rank of ``max_ns`` (None when no rank entered).
    """

    ranks: int
    entered: int
    min_ns: int
    median_ns: int
    max_ns: int
    slowest_rank: int | None

    def __str__(self) -> str:
        return (f"min {self.min_ns} ns, median {self.median_ns} ns, max {self.max_ns} ns "
                f"(rank {self.slowest_rank}), in {self.entered}/{self.ranks} ranks")


@dataclass(frozen=True)
class PathStats:
    """One span path of one role, merged over every thread and process of the role.

    Attributes:
        role: the role of the processes that ran it.
        path: the names joined with ``"."``, top-level first (``"step.compute"``).
        names: the names themselves.
        calls: completed calls.
        total_ns: their total wall time.
        self_ns: ``total_ns`` minus the time of child spans (never below 0).
        mean_ns, p50_ns, p90_ns, p95_ns, p99_ns: wall time per call; quantiles are
            estimated from a merged log-linear histogram (error below 1/8 of the
            value). ``None`` when the path completed no call.
        min_ns, max_ns: the fastest and slowest call (``None`` without calls).
        in_processes: processes of the role that completed at least one call.
        share_of_busy: ``total_ns`` as a fraction of the role's busy time (the sum
            of its processes' top-level spans); ``None`` when the role has none.
        folded: spans folded into this path by the depth or path bound.
        counters: counter name -> sum, for counters counted while this path was
            the innermost open span (read-only mapping).
        sample_stride: for a path recorded from a sampled phase, the stride (1 entry
            in sample_stride measured and scaled up); None when measured.
        self_estimated: its self time includes estimates (its own, or a child's).
        across_ranks: a ``RankSpread`` when the role's processes have ranks (an MPI,
            torchrun or SLURM job), else None.
    """

    role: str
    path: str
    names: tuple[str, ...]
    calls: int
    total_ns: int
    self_ns: int
    mean_ns: int | None
    p50_ns: int | None
    p90_ns: int | None
    p95_ns: int | None
    p99_ns: int | None
    min_ns: int | None
    max_ns: int | None
    in_processes: int
    share_of_busy: float | None
    folded: int
    counters: Mapping[str, int] = field(hash=False)
    sample_stride: int | None = None
    self_estimated: bool = False
    across_ranks: RankSpread | None = None

    @property
    def estimated(self) -> bool:
        """Its figures come from a sampled phase: 1 entry in ``sample_stride`` was
        measured and scaled up. An estimate, not a measurement."""
        return self.sample_stride is not None

    @property
    def depth(self) -> int:
        """1 for a top-level span."""
        return len(self.names)

    @property
    def key(self) -> str:
        """``"role:path"``: unique within a profile."""
        return f"{self.role}:{self.path}"


@dataclass(frozen=True)
class Usage:
    """The header's four numbers of a process or a role, as the report computed them:
    wall time, CPU time (user + sys) and cores busy (CPU / wall), context switches.
    A figure a file does not carry (an older writer's; a target ``lapse record``
    could not read at its end) is ``None``, never 0. A role's wall time runs from the
    earliest start of its processes to the latest end; its CPU time and switches are
    their sums, known only when known for every one of them."""

    processes: int
    wall_ns: int
    cpu_ns: int | None
    cpu_user_ns: int | None
    cpu_sys_ns: int | None
    cores_busy: float | None
    ctx_voluntary: int | None
    ctx_involuntary: int | None


def _usage(u: Mapping[str, Any] | None) -> Usage | None:
    return Usage(**{f.name: u.get(f.name) for f in fields(Usage)}) if u else None


@dataclass(frozen=True)
class Worker:
    """One process of the run: one ``.lapse`` file that could be read.

    ``state`` says what can be said about how it ended: ``"final"`` (it wrote its
    final file at stop, exit or a terminating signal, named by ``end_reason``),
    ``"stopped_early"``, ``"gone"``, ``"running"`` or ``"ended_unseen"`` (see
    docs/report.md; derived when the profile was loaded). ``rank``,
    ``world_size`` and ``local_rank`` are ``None`` when the launcher did not say;
    ``launcher`` names the one that did (``"openmpi"``, ``"torchrun"``, ``"slurm"``,
    ...; docs/format.md), ``job_id`` is the scheduler's job ("" when none).
    """

    file: str
    host: str
    pid: int
    ppid: int
    role: str
    rank: int | None
    world_size: int | None
    local_rank: int | None
    launcher: str
    job_id: str
    run_id: str
    final: bool
    end_reason: str
    state: str
    write_seq: int
    write_failures: int  #: writes of its session that failed before the one its file holds
    write_error: str  #: the last of those failures ("" when none)
    start_real_ns: int
    written_real_ns: int
    wall_ns: int
    cpu_user_ns: int
    cpu_sys_ns: int
    max_rss_kb: int
    threads: int
    busy_ns: int
    span_calls: int
    stale: bool
    snapshot_interval_ms: int
    timeline_dropped: int
    folded_depth: int
    folded_paths: int
    unmatched_ends: int
    dropped_counters: int
    max_spans: int
    usage: Usage | None = None  #: wall, CPU, cores busy, context switches (None: an older document)

    @property
    def written_at(self) -> float:
        """When its file was last written, in seconds since the epoch."""
        return self.written_real_ns / 1e9


class Caveat(NamedTuple):
    """Something that makes the numbers incomplete or distorted: ``(kind, message)``.

    Kinds, in the order the report lists them: ``unreadable``, ``duplicate``,
    ``stale``, ``not_final``, ``signal``, ``write_failed``, ``child_no_file``,
    ``leftover_tmp``, ``superseded``, ``inconsistent``, ``dropped_spans``, ``folded``,
    ``unmatched_ends``, ``dropped_counters``, ``overflow``, ``missing_ranks``,
    ``io_unreadable``, ``sampling``.
    ``Profile.to_dict()["caveats"]`` has their details (file, pid, counts).
    """

    kind: str
    message: str


@dataclass(frozen=True)
class DiffRow:
    """One path compared between the before side (A) and the after side (B).

    ``changed`` is the verdict: a two-sample Kolmogorov-Smirnov test on the two
    histograms rejects "same distribution" at alpha = 0.01 (``ks_d >
    ks_threshold``) *and* the p50 moved by at least 5%. Ratios are B / A (``None``
    when a side is absent or A is 0); per-call times are ``None`` on an absent side.
    """

    key: str
    role: str
    path: str
    names: tuple[str, ...]
    presence: str  #: "both", "only_a" (gone in the after run), "only_b" (new)
    calls_a: int
    calls_b: int
    total_a_ns: int
    total_b_ns: int
    total_delta_ns: int
    mean_a_ns: int | None
    mean_b_ns: int | None
    p50_a_ns: int | None
    p50_b_ns: int | None
    p99_a_ns: int | None
    p99_b_ns: int | None
    mean_ratio: float | None
    p50_ratio: float | None
    p99_ratio: float | None
    ks_d: float | None
    ks_threshold: float | None
    ks_significant: bool
    changed: bool
    few_calls: bool  #: fewer than 30 calls on a side: too few to call a change
    tail_moved: bool  #: |p99 ratio - p50 ratio| > 0.25

    @property
    def flags(self) -> tuple[str, ...]:
        """The flags that hold: ``"changed"``, ``"few_calls"``, ``"tail_moved"``."""
        return tuple(n for n in ("changed", "few_calls", "tail_moved") if getattr(self, n))


# ---- helpers ----


def _plural(n: int, word: str, many: str | None = None) -> str:
    return f"{n} {word if n == 1 else (many or word + 's')}"


def _dotted(names: tuple[str, ...]) -> str:
    return ".".join(names)


def _is_lapse_name(name: str) -> bool:
    return len(name) > len(_SUFFIX) and name.endswith(_SUFFIX) and not name.startswith(".")


def _names_of(phases: list[Mapping[str, Any]]) -> list[tuple[str, ...]]:
    """Each phase's names, top-level first, from its chain of parents (schema 2: each
    phase has its own ``name`` and its ``parent``'s index); schema 1 listed them."""
    out: list[tuple[str, ...] | None] = [None] * len(phases)
    for i in range(len(phases)):
        chain = []
        j: int | None = i
        while j is not None and out[j] is None and len(chain) <= len(phases):
            ph = phases[j]
            if "names" in ph:
                out[j] = tuple(ph["names"])
                break
            chain.append(j)
            j = ph.get("parent")
        names: tuple[str, ...] = (out[j] or ()) if j is not None else ()
        for k in reversed(chain):
            names = names + (phases[k]["name"],)
            out[k] = names
    return [n or () for n in out]


def _held_name(run: Mapping[str, Any], file: str) -> str:
    """The name under which a profile holds a file the report names (a pack member
    ``FILE[i]`` is held as FILE)."""
    if file.endswith("]") and "[" in file:
        file = file[: file.rindex("[")]
    where = run["dir"].rstrip("/") or run["dir"]
    if run.get("single_file"):
        return pathlib.PurePath(where).name
    return file[len(where) + 1:] if file.startswith(where + "/") else file


def _path_stats(role: str, ph: Mapping[str, Any], names: tuple[str, ...]) -> PathStats:
    counters = {c["name"]: c["sum"] for c in ph.get("counters", ())}
    return PathStats(
        role=role,
        path=_dotted(names),
        names=names,
        calls=ph["calls"],
        total_ns=ph["total_ns"],
        self_ns=ph["self_ns"],
        mean_ns=ph.get("mean_ns"),
        p50_ns=ph.get("p50_ns"),
        p90_ns=ph.get("p90_ns"),
        p95_ns=ph.get("p95_ns"),
        p99_ns=ph.get("p99_ns"),
        min_ns=ph.get("min_ns"),
        max_ns=ph.get("max_ns"),
        in_processes=ph.get("in_processes", 0),
        share_of_busy=ph.get("share_of_busy"),
        folded=ph.get("folded", 0),
        counters=MappingProxyType(counters),
        sample_stride=ph.get("sample_stride"),
        self_estimated=bool(ph.get("self_estimated", False)),
        across_ranks=RankSpread(**ph["across_ranks"]) if ph.get("across_ranks") else None,
    )


_WORKER_DEFAULTS: dict[str, Any] = {"rank": None, "world_size": None, "local_rank": None}


def _worker(w: Mapping[str, Any]) -> Worker:
    values: dict[str, Any] = {"usage": _usage(w.get("usage"))}
    for f in fields(Worker):
        if f.name == "usage":
            continue
        if f.name in w:
            values[f.name] = w[f.name]
        else:
            values[f.name] = _WORKER_DEFAULTS.get(f.name, "" if f.type == "str" else 0)
    return Worker(**values)


# ---- Profile ----


_FRAME_COLUMNS = ("role", "path", "names", "depth", "calls", "total_ns", "self_ns", "mean_ns",
                  "p50_ns", "p90_ns", "p95_ns", "p99_ns", "min_ns", "max_ns", "in_processes",
                  "share_of_busy", "folded", "estimated", "sample_stride", "self_estimated",
                  "counters")


class Profile:
    """The result of a profiled run: pure, immutable data (see the module docstring).

    Get one from ``Profiler.result()`` or ``Profile.load(path)``. Everything it
    returns is a copy or a frozen record, so nothing you do to a result changes the
    profile.

    Rendering (``show()``, ``str()``, ``diff()``, ``perfetto()``, ``html()``) runs the same C
    code as the ``lapse`` command on the held bytes, in memory (no temporary file is
    written); file and directory names in the text are those the profile was loaded
    from. States that depend on the time of reading (a process ``running`` or
    ``ended_unseen``) are derived again when the text is rendered; the numbers never
    change.
    """

    __slots__ = ("_doc", "_files", "_sizes", "_text")

    _doc: dict[str, Any]
    _files: Mapping[str, bytes]
    _sizes: Mapping[str, int]
    _text: str | None

    def __init__(self, document: Mapping[str, Any], files: Mapping[str, bytes],
                 sizes: Mapping[str, int] | None = None) -> None:
        """Builds a profile from a report document and the files it was made from.

        This is the low-level constructor: use ``Profile.load`` or
        ``Profiler.result()``. ``document`` is the parsed output of
        ``lapse report --json`` (schema ``lapse.report`` 2) and ``files`` maps each
        file's path relative to the run directory (``"<host>/<name>.lapse"``, or the
        file name for a single file) to its bytes. ``sizes`` gives, for a file held
        in part (the bytes a reader examined before refusing it), its size: on disk
        it is those bytes followed by a hole. All are copied.
        """
        if document.get("schema") != "lapse.report":
            raise ValueError("not a lapse.report document")
        if not files:
            raise ValueError("a Profile needs the bytes of at least one .lapse file")
        object.__setattr__(self, "_doc", copy.deepcopy(dict(document)))
        object.__setattr__(
            self, "_files", MappingProxyType({str(k): bytes(v) for k, v in sorted(files.items())})
        )
        held = {str(k): int(v) for k, v in (sizes or {}).items()}
        object.__setattr__(
            self, "_sizes",
            MappingProxyType({k: v for k, v in held.items() if k in self._files and v > len(self._files[k])}),
        )
        object.__setattr__(self, "_text", None)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("a lapse.Profile is immutable")

    def __delattr__(self, name: str) -> None:
        raise AttributeError("a lapse.Profile is immutable")

    def __reduce__(self) -> tuple[Any, ...]:
        return (Profile, (self._doc, dict(self._files), dict(self._sizes)))

    # ---- loading and saving ----

    @classmethod
    def load(cls, path: StrPath) -> Profile:
        """Loads a run, as ``lapse report`` reads it.

        ``path`` is a ``.lapse`` file (a run of one process), a run directory
        (``<run_dir>/<run_id>/`` holding ``<host>/*.lapse``) or a directory of runs,
        whose newest attempt is loaded with the attempts that ran at the same time
        (processes started separately into one run directory are one run); those
        that ended before it began are named in the caveats as ``superseded`` and
        are not part of the profile.

        A file that cannot be read (truncated, not a .lapse file) is named in the
        caveats as ``unreadable``, and so is the copy of a process another file holds
        (``duplicate``); of such a file the profile holds the bytes the reader
        examined before refusing it (a 2 GB file of zeros: its first 32 bytes), so a
        saved profile keeps the caveat. Entries the reader does not open (a FIFO, a
        device, a symbolic link that leaves the run directory or loops, a directory
        named ``*.lapse``) are named with the reason, and nothing of them is held.

        A run that is still being written can be loaded: the report is a snapshot,
        and the bytes held are those that reading read, file by file.

        Raises:
            FileNotFoundError: ``path`` does not exist.
            ValueError: it holds no .lapse file, or none of its files is readable.
            OSError: it cannot be read.
        """
        text, held = _lapse.load(os.fspath(path))
        doc = json.loads(text)
        files = {name: data for name, data, _ in held}
        sizes = {name: size for name, data, size in held if size > len(data)}
        if not files:  # the run went away between the listing and the read
            raise FileNotFoundError(f"{doc['run']['dir']}: the run's files are gone")
        return cls(doc, files, sizes)

    def save(self, path: StrPath) -> pathlib.Path:
        """Writes the run in the ``.lapse`` format, so that ``Profile.load`` and the
        ``lapse`` command read it, and returns what it wrote.

        - A run of one file is written to ``path`` itself (``".lapse"`` is appended
          when ``path`` has no suffix; an existing directory receives the file under
          its own name). An existing file is replaced.
        - A run of several files becomes the run directory ``path``, laid out as the
          run was: ``<path>/<host>/<file name>``. ``path`` must not exist or be an
          empty directory (so that two runs are never mixed).

        Files are written atomically (a temporary file of their own, created next
        to them without following links, then a rename), with mode 0600 and new
        directories 0700 (0640 and 0750 with ``LAPSE_SHARE=1``; the umask applies).
        A file held in part (see ``load``) is written as the bytes held, then a hole
        to its size.
        """
        target = pathlib.Path(path)
        if len(self._files) == 1:
            ((rel, data),) = self._files.items()
            if target.is_dir():
                target = target / pathlib.PurePosixPath(rel).name
            elif not target.suffix:
                target = target.with_name(target.name + _SUFFIX)
            _lapse.write_file(os.fspath(target), data, self._sizes.get(rel, 0))
            return target
        if target.exists() and (not target.is_dir() or any(target.iterdir())):
            raise FileExistsError(
                f"{target}: exists and is not an empty directory (a run of "
                f"{len(self._files)} files is saved as a directory of its own)"
            )
        for rel, data in self._files.items():
            _lapse.write_file(os.fspath(target.joinpath(*pathlib.PurePosixPath(rel).parts)), data,
                              self._sizes.get(rel, 0))
        return target

    def _unheld(self) -> list[tuple[str, str]]:
        """(file, reason) of the unreadable files the report names and the profile
        holds nothing of: a rendering names them as the report did."""
        run = self._doc["run"]
        return [(u["file"], u["reason"]) for u in self._doc.get("unreadable", ())
                if _held_name(run, u["file"]) not in self._files]

    def _in_memory(self) -> tuple[str, bool, list[tuple[str, bytes, int]]]:
        """The held files as the C reader takes a run in memory: (the run's directory,
        or the file of a run of one, as reports name it; single file; [(path relative
        to it, bytes, size)]). Nothing is written."""
        run = self._doc["run"]
        return (run["dir"], bool(run.get("single_file")),
                [(rel, data, self._sizes.get(rel, len(data))) for rel, data in self._files.items()])

    def _render(self, top: int) -> str:
        return _lapse.report(self._in_memory(), json=False, top=top, unreadable=self._unheld())

    # ---- reading ----

    def trace_report(self, top: int = 10) -> str:
        """GPU ACTIVITY BY SPAN of every role (Feature.ACTIVITY): per span that launched
        them, the kernels, their GPU time and its share of the role's, the copies and sets
        with their bytes, and the kernels that took the most GPU time (``top`` of them per
        role); then what kept GPU activity from being complete (caveats
        ``activity_missing``, ``dropped_activities``). The same report model as
        ``lapse report`` (its figures are in ``to_dict()``, each role's
        ``gpu_activity``); "no GPU activity recorded" when no role has any."""
        return _lapse.report(self._in_memory(), top=top, unreadable=self._unheld(), gpu=True)

    def show(self, file: IO[str] | None = None, top: int = 10) -> None:
        """Prints the text report (what ``lapse report`` prints) to ``file``
        (default: standard output). ``top``: rows of DOMINANT PHASES per role."""
        out = sys.stdout if file is None else file
        out.write(str(self) if top == 10 else self._render(top))

    def __str__(self) -> str:
        if self._text is None:
            object.__setattr__(self, "_text", self._render(10))
        assert self._text is not None
        return self._text

    def __repr__(self) -> str:
        run = self._doc["run"]
        counts = run.get("roles") or {}
        roles = ", ".join(f"{r} x{n}" for r, n in sorted(counts.items()))
        paths = sum(len(r.get("phases", ())) for r in self._doc.get("roles", ()))
        caveats = len(self._doc.get("caveats", ()))
        return (
            f"<lapse.Profile run {run.get('id') or '?'} "
            f"{_plural(run.get('processes', 0), 'process', 'processes')}"
            f"{f' ({roles})' if roles else ''}, {_plural(paths, 'path')}, "
            f"{_plural(caveats, 'caveat') if caveats else 'no caveats'}>"
        )

    def html(self, path: StrPath, compress: bool = True) -> pathlib.Path:
        """Writes the page ``lapse view`` writes (docs/view.md: Summary, Timeline and
        Flame tabs, one self-contained HTML file to open offline) and returns its path.

        The page is rendered by the same C code from the held bytes, in memory (no
        temporary file is written), and replaces ``path`` atomically, mode 0600
        (0640 with ``LAPSE_SHARE=1``). ``compress``: deflate the data when lapse was
        built with zlib (the browser inflates them); ``False`` keeps plain JSON.

        Raises:
            OSError: ``path`` cannot be written.
        """
        target = pathlib.Path(path)
        _lapse.view(self._in_memory(), os.fspath(target), compress=compress,
                    unreadable=self._unheld())
        return target

    def _repr_html_(self) -> str:
        """The ``html()`` page for notebooks, inside an ``<iframe srcdoc>``: a page of
        its own, so that its script runs and its styles stay in it (Jupyter does not
        run a script placed in an output's HTML directly)."""
        page = _lapse.view(self._in_memory(), unreadable=self._unheld())
        return (f'<iframe srcdoc="{_html.escape(page, quote=True)}" '
                'style="width: 100%; height: 640px; border: 1px solid #ccc"></iframe>')

    def _roles(self, role: str | None) -> list[Mapping[str, Any]]:
        roles: list[Mapping[str, Any]] = self._doc.get("roles", [])
        if role is None:
            return roles
        chosen = [r for r in roles if r["role"] == role]
        if not chosen:
            raise ValueError(f"no role {role!r} in this profile (roles: {', '.join(self.roles) or 'none'})")
        return chosen

    def stats(self, role: str | None = None) -> dict[str, PathStats]:
        """Every span path, merged over the threads and processes of its role.

        Keys are the dotted paths when the profile has one role or ``role`` is
        given, else ``"role:dotted.path"`` (the same code in two roles is two
        entries). Paths are in path order (a parent before its children); use
        ``bottlenecks()`` for the order by self time. (Two paths whose dotted forms
        coincide because a name holds a ``"."`` share a key: the last one wins;
        ``to_dict()`` has them all.)

        Raises:
            ValueError: ``role`` is not a role of this profile.
        """
        roles = self._roles(role)
        with_role = role is None and len(self._doc.get("roles", [])) > 1
        out: dict[str, PathStats] = {}
        for r in roles:
            phases = r.get("phases", [])
            for ph, names in zip(phases, _names_of(phases)):
                ps = _path_stats(r["role"], ph, names)
                out[ps.key if with_role else ps.path] = ps
        return out

    def bottlenecks(self, n: int = 10, role: str | None = None) -> list[PathStats]:
        """The ``n`` paths with the most self time (their total minus the time of
        their child spans), largest first; over every role unless ``role`` is
        given. Self time is where the time went *in* that span's own code."""
        if n < 0:
            raise ValueError("n must be >= 0")
        paths = self.stats(role).values()
        return sorted(paths, key=lambda s: (-s.self_ns, -s.total_ns, s.role, s.path))[:n]

    def diff(self, other: Profile, by_path: bool = False) -> ProfileDiff:
        """Compares this profile (the *after* side, B) with ``other`` (the
        *before* side, A): ``after.diff(before)``. Ratios are after / before.

        Rows are keyed by ``role:path``; with ``by_path=True`` by path alone, the
        roles of each side merged (for two runs that named their roles
        differently). See ``ProfileDiff`` for the rule that calls a row changed.
        """
        if not isinstance(other, Profile):
            raise TypeError(f"diff() needs a lapse.Profile, not {type(other).__name__}")
        return ProfileDiff._compute(before=other, after=self, by_path=by_path)

    def perfetto(self, path: StrPath) -> pathlib.Path:
        """Writes the timelines as Chrome trace JSON (what ``lapse export --perfetto``
        writes; open it in ui.perfetto.dev) and returns its path.

        One process track per file, one thread track per thread, one slice per
        timeline span. A process whose timeline was full misses spans; the
        ``dropped_spans`` property says how many.
        """
        target = pathlib.Path(path)
        _lapse.export_perfetto(self._in_memory(), os.fspath(target))
        return target

    def to_dataframe(self, role: str | None = None) -> Any:
        """The span paths as a pandas DataFrame, one row per path and role (of
        ``role`` only, when given), in path order: the ``PathStats`` figures as the
        report model holds them (nothing is recomputed). Columns: role, path, names
        (a tuple), depth, calls, total_ns, self_ns, mean_ns, p50_ns, p90_ns, p95_ns,
        p99_ns, min_ns, max_ns, in_processes, share_of_busy, folded, estimated,
        sample_stride, self_estimated, counters (a dict). ImportError when pandas is
        not installed."""
        from ._frames import data_frame

        rows = []
        for r in self._roles(role):
            phases = r.get("phases", [])
            for ph, names in zip(phases, _names_of(phases)):
                ps = _path_stats(r["role"], ph, names)
                rows.append({column: getattr(ps, column) for column in _FRAME_COLUMNS
                             if column != "counters"} | {"counters": dict(ps.counters)})
        return data_frame(rows, _FRAME_COLUMNS)

    def to_dict(self) -> dict[str, Any]:
        """A deep copy of the report document (schema ``lapse.report`` version 2,
        docs/report.md): paths joined with ``"/"``, every caveat with its details."""
        return copy.deepcopy(self._doc)

    def to_json(self, indent: int | None = None) -> str:
        """The report document as JSON (what ``lapse report --json`` printed when the
        profile was loaded)."""
        return json.dumps(self._doc, indent=indent)

    # ---- properties ----

    @property
    def run_id(self) -> str:
        """The run id ("" when unknown)."""
        return str(self._doc["run"].get("id", ""))

    @property
    def source(self) -> str:
        """The run directory (or file) the profile was loaded from. It may have
        changed or be gone since: the profile holds its own copy."""
        return str(self._doc["run"].get("dir", ""))

    @property
    def roles(self) -> tuple[str, ...]:
        """The roles of the run, by name."""
        return tuple(r["role"] for r in self._doc.get("roles", ()))

    @property
    def workers(self) -> tuple[Worker, ...]:
        """One record per readable file (process), in file order."""
        return tuple(_worker(w) for w in self._doc.get("workers", ()))

    @property
    def usage(self) -> Mapping[str, Usage]:
        """Role -> its ``Usage`` (wall, CPU, cores busy, context switches over its
        processes), as the report's header shows it; ``Worker.usage`` per process."""
        return MappingProxyType({r["role"]: u for r in self._doc.get("roles", ())
                                 if (u := _usage(r.get("usage"))) is not None})

    @property
    def caveats(self) -> tuple[Caveat, ...]:
        """What makes the numbers incomplete, as ``(kind, message)``; empty when
        nothing is known to be missing."""
        return tuple(Caveat(c["kind"], c["message"]) for c in self._doc.get("caveats", ()))

    @property
    def unreadable(self) -> tuple[tuple[str, str], ...]:
        """``(file, reason)`` for each file that could not be read."""
        return tuple((u["file"], u["reason"]) for u in self._doc.get("unreadable", ()))

    @property
    def dropped_spans(self) -> int:
        """Spans the bounded timelines had no room for (over all processes): they
        are in every aggregate number but missing from ``perfetto()``."""
        return sum(int(w.get("timeline_dropped", 0)) for w in self._doc.get("workers", ()))

    @property
    def runtime_ns(self) -> int:
        """Latest write minus earliest session start, over all readable files."""
        return int(self._doc["run"].get("runtime_ns", 0))

    @property
    def files(self) -> Mapping[str, bytes]:
        """The held ``.lapse`` files: path relative to the run directory -> bytes
        (read-only): a whole file, or of a file the reader refused the bytes it
        examined before refusing it (see ``load``)."""
        return self._files


# ---- ProfileDiff ----


class ProfileDiff:
    """Two profiles compared path by path: ``after.diff(before)``.

    A (``before``) is the profile passed to ``diff``, B (``after``) the one it was
    called on; ratios are B / A. A row is **changed** only when both hold:

    1. a two-sample Kolmogorov-Smirnov test on the two binned histograms rejects
       "same distribution" at alpha = 0.01 (D > 1.628 * sqrt((n + m) / (n * m)),
       n and m the calls on each side);
    2. the p50 moved by at least 5%.

    With few calls nothing can be called a change (5 calls against 5 need D > 1.03);
    such rows carry ``few_calls``. Rows present on one side only come first, then the
    rest by the size of the change in total time.
    """

    __slots__ = ("_doc", "_text", "_before", "_after", "_by_path")

    _doc: dict[str, Any]
    _text: str
    _before: Profile
    _after: Profile
    _by_path: bool

    def __init__(self) -> None:
        raise TypeError("use Profile.diff(): after.diff(before)")

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("a lapse.ProfileDiff is immutable")

    def __reduce__(self) -> tuple[Any, ...]:
        return (ProfileDiff._compute, (self._before, self._after, self._by_path))

    @classmethod
    def _compute(cls, before: Profile, after: Profile, by_path: bool) -> ProfileDiff:
        doc, text = cls._run(before, after, by_path, top=30, with_json=True)
        self = object.__new__(cls)
        object.__setattr__(self, "_doc", doc)
        object.__setattr__(self, "_text", text)
        object.__setattr__(self, "_before", before)
        object.__setattr__(self, "_after", after)
        object.__setattr__(self, "_by_path", by_path)
        return self

    @staticmethod
    def _run(before: Profile, after: Profile, by_path: bool, top: int,
             with_json: bool) -> tuple[dict[str, Any], str]:
        unheld = {"unreadable_a": before._unheld(), "unreadable_b": after._unheld()}
        a, b = before._in_memory(), after._in_memory()
        text = _lapse.diff(a, b, json=False, top=top, by_path=by_path, **unheld)
        raw = _lapse.diff(a, b, json=True, by_path=by_path, **unheld) if with_json else "{}"
        return json.loads(raw), text

    def _names_index(self) -> dict[tuple[str, str], tuple[str, ...]]:
        """(role, "/"-joined path) -> names, from both sides; role "" for any role."""
        index: dict[tuple[str, str], tuple[str, ...]] = {}
        for side in (self._before, self._after):
            for r in side._doc.get("roles", ()):
                phases = r.get("phases", [])
                for ph, names in zip(phases, _names_of(phases)):
                    index[(r["role"], ph["path"])] = names
                    index.setdefault(("", ph["path"]), names)
        return index

    @property
    def before(self) -> Profile:
        """Side A."""
        return self._before

    @property
    def after(self) -> Profile:
        """Side B."""
        return self._after

    @property
    def rows(self) -> list[DiffRow]:
        """Every row, in the diff's order. Paths are dotted, like
        ``Profile.stats()``; keys are ``"role:dotted.path"``, or the dotted path
        when the diff is by path."""
        by_path = self._doc.get("key") == "path"
        index = self._names_index()
        out = []
        for r in self._doc.get("rows", ()):
            names = index.get((r.get("role", ""), r["path"])) or tuple(r["path"].split("/"))
            dotted = _dotted(names)
            out.append(
                DiffRow(
                    key=dotted if by_path else f"{r['role']}:{dotted}",
                    role=r.get("role", ""),
                    path=dotted,
                    names=names,
                    presence=r["presence"],
                    calls_a=r["calls_a"],
                    calls_b=r["calls_b"],
                    total_a_ns=r["total_a_ns"],
                    total_b_ns=r["total_b_ns"],
                    total_delta_ns=r["total_delta_ns"],
                    mean_a_ns=r.get("mean_a_ns"),
                    mean_b_ns=r.get("mean_b_ns"),
                    p50_a_ns=r.get("p50_a_ns"),
                    p50_b_ns=r.get("p50_b_ns"),
                    p99_a_ns=r.get("p99_a_ns"),
                    p99_b_ns=r.get("p99_b_ns"),
                    mean_ratio=r.get("mean_ratio"),
                    p50_ratio=r.get("p50_ratio"),
                    p99_ratio=r.get("p99_ratio"),
                    ks_d=r.get("ks_d"),
                    ks_threshold=r.get("ks_threshold"),
                    ks_significant=bool(r.get("ks_significant")),
                    changed=bool(r.get("changed")),
                    few_calls=bool(r.get("few_calls")),
                    tail_moved=bool(r.get("tail_moved")),
                )
            )
        return out

    @property
    def changed(self) -> list[DiffRow]:
        """The rows called changed (see the class docstring for the rule)."""
        return [r for r in self.rows if r.changed]

    @property
    def summary(self) -> dict[str, Any]:
        """Counts: ``rows``, ``changed``, ``only_a``, ``only_b``, ``unchanged``,
        ``roles_in_common``."""
        return dict(self._doc.get("summary", {}))

    def show(self, file: IO[str] | None = None, top: int = 30) -> None:
        """Prints the text diff (what ``lapse diff`` prints) to ``file`` (default:
        standard output). ``top``: rows shown."""
        out = sys.stdout if file is None else file
        text = self._text if top == 30 else self._run(self._before, self._after, self._by_path, top,
                                                     with_json=False)[1]
        out.write(text)

    def __str__(self) -> str:
        return self._text

    def __repr__(self) -> str:
        s = self._doc.get("summary", {})
        return (
            f"<lapse.ProfileDiff {self._before.run_id or '?'} -> {self._after.run_id or '?'}: "
            f"{_plural(s.get('rows', 0), 'row')}, {s.get('changed', 0)} changed, "
            f"{s.get('only_a', 0)} only before, {s.get('only_b', 0)} only after>"
        )

    def _repr_html_(self) -> str:
        return f"<pre>{_html.escape(self._text)}</pre>"

    def to_dict(self) -> dict[str, Any]:
        """A deep copy of the diff document (schema ``lapse.diff`` version 1,
        docs/report.md; paths joined with ``"/"``)."""
        return copy.deepcopy(self._doc)

    def to_json(self, indent: int | None = None) -> str:
        """The diff document as JSON."""
        return json.dumps(self._doc, indent=indent)
