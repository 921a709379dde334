"""A small writer of .lapse files and packs, from docs/format.md, for tests that need
files no real writer makes (hostile depths, inconsistent sums, overlapping packs).

It is written from the specification, not from the C encoder, so a test that reads
what it writes also checks the two agree. Used by tests/e2e and tests/python.
"""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass, field

FILE_MAGIC = b"\x89LAPSE\r\n"
PACK_MAGIC = b"\x89LAPSEPK"

META_U64, META_I64, META_F64, META_STR, META_U32 = 1, 2, 3, 4, 5
META_TYPES = {
    "lapse_version": META_STR, "host": META_STR, "role": META_STR, "run_id": META_STR,
    "job_id": META_STR, "launcher": META_STR, "end_reason": META_STR,
    "clock_source": META_STR, "pid": META_I64, "ppid": META_I64, "rank": META_I64,
    "world_size": META_I64, "local_rank": META_I64, "start_real_ns": META_U64,
    "start_mono_ns": META_U64, "write_real_ns": META_U64, "write_mono_ns": META_U64,
    "anchor_real_ns": META_U64, "anchor_mono_ns": META_U64, "wall_ns": META_U64,
    "write_seq": META_U64, "final": META_U32, "snapshot_interval_ms": META_U32,
    "max_spans": META_U64, "max_depth": META_U64, "max_paths": META_U64,
    "max_counters": META_U64, "cpu_user_ns": META_U64, "cpu_sys_ns": META_U64,
    "cpu_unknown": META_U32, "ctx_voluntary": META_I64, "ctx_involuntary": META_I64,
    "timeline_dropped": META_U64,
    "window_backend": META_STR, "window_phase": META_STR, "window_start": META_U64,
    "window_stop": META_U64, "window_entries": META_U64, "window_opened_entry": META_U64,
    "window_closed_entry": META_U64, "window_open_ns": META_U64, "window_close_ns": META_U64,
    "window_trace": META_STR, "window_error": META_STR,
    "activity_pauses": META_U32, "activity_paused_ns": META_U64,
    "activity_pause_from_ns": META_U64, "activity_pause_to_ns": META_U64,
}


def _crc(b: bytes) -> int:
    return zlib.crc32(b) & 0xFFFFFFFF


def _str(s: str | bytes) -> bytes:
    b = s.encode() if isinstance(s, str) else s
    return struct.pack("<I", len(b)) + b


def _section(kind: int, count: int, payload: bytes) -> bytes:
    head = struct.pack("<IIQI", kind, count, len(payload), _crc(payload))
    head += struct.pack("<I", _crc(head))
    return head + payload + b"\0" * (-len(payload) % 8)


@dataclass
class Node:
    parent: int  # -1 for a thread root
    name: int
    depth: int
    calls: int = 0
    total_ns: int = 0
    child_ns: int = 0
    thread: int = 0
    hist: dict[int, int] = field(default_factory=dict)  # bucket -> count

    def encode(self) -> bytes:
        lo = min(self.total_ns // max(self.calls, 1), self.total_ns)
        b = struct.pack("<iIII", self.parent, self.thread, self.name, self.depth)
        b += struct.pack("<QQQQQQ", self.calls, self.total_ns, self.child_ns,
                         lo if self.calls else 0, lo if self.calls else 0, 0)
        b += struct.pack("<H", len(self.hist))
        for k in sorted(self.hist):
            b += struct.pack("<HQ", k, self.hist[k])
        return b


@dataclass
class GpuRecord:
    """One record of section 15 GPU_ACTIVITY (a kernel, memcpy or memset)."""

    kind: int = 1  # 1 kernel, 2 memcpy, 3 memset
    copy_kind: int = 0
    device: int = 0
    stream: int = 7
    name: int = 0  # index in the section's names
    node: int = 0xFFFFFFFF  # the launching span's node; 0xFFFFFFFF: launch not seen
    start_ns: int = 0
    end_ns: int = 0
    bytes: int = 0
    launch_ns: int = 0

    def encode(self) -> bytes:
        return struct.pack("<IIIIIIQQQQ", self.kind, self.copy_kind, self.device, self.stream,
                           self.name, self.node, self.start_ns, self.end_ns, self.bytes,
                           self.launch_ns)


@dataclass
class GpuActivity:
    """Section 15: `count` and `name_count` default to what it holds; names must start
    with ""."""

    records: list[GpuRecord] = field(default_factory=list)
    names: list[str | bytes] = field(default_factory=lambda: [""])
    state: int = 1
    note: str = ""
    dropped: int = 0
    count: int | None = None
    name_count: int | None = None

    def section(self) -> bytes:
        payload = struct.pack("<I", self.state) + _str(self.note) + struct.pack("<Q", self.dropped)
        names = len(self.names) if self.name_count is None else self.name_count
        payload += struct.pack("<I", names) + b"".join(_str(n) for n in self.names)
        payload += b"".join(r.encode() for r in self.records)
        return _section(15, len(self.records) if self.count is None else self.count, payload)


@dataclass
class LapseFile:
    """One process's file: meta, names, threads, nodes and counters."""

    meta: dict[str, object]
    names: list[str] = field(default_factory=lambda: [""])
    threads: list[tuple[int, str]] = field(default_factory=lambda: [(1, "main")])
    nodes: list[Node] = field(default_factory=list)
    counters: list[tuple[int, int, int, int]] = field(default_factory=list)  # node, name, sum, updates
    spans: list[tuple[int, int, int, int, int]] = field(default_factory=list)  # thread, name, depth, begin, end
    sections: list[tuple[int, int, bytes]] = field(default_factory=list)  # types 7 to 14, in order
    activity: GpuActivity | None = None

    def name(self, s: str) -> int:
        if s not in self.names:
            self.names.append(s)
        return self.names.index(s)

    def encode(self) -> bytes:
        meta = b""
        for k, v in self.meta.items():
            t = META_TYPES[k]
            meta += struct.pack("<H", len(k)) + k.encode() + bytes([t])
            if t == META_STR:
                meta += _str(str(v))
            elif t == META_I64:
                meta += struct.pack("<q", int(v))  # type: ignore[call-overload]
            else:
                meta += struct.pack("<Q", int(v))  # type: ignore[call-overload]
        body = _section(1, len(self.meta), meta)
        body += _section(2, len(self.names), b"".join(_str(n) for n in self.names))
        body += _section(3, len(self.threads),
                         b"".join(struct.pack("<q", t) + _str(n) for t, n in self.threads))
        body += _section(4, len(self.nodes), b"".join(n.encode() for n in self.nodes))
        body += _section(5, len(self.counters),
                         b"".join(struct.pack("<IIqQ", *c) for c in self.counters))
        sections = 5
        if self.spans:
            body += _section(6, len(self.spans),
                             b"".join(struct.pack("<IIIIQQ", t, n, d, 0, b, e) for t, n, d, b, e in self.spans))
            sections += 1
        for kind, count, payload in self.sections:
            body += _section(kind, count, payload)
            sections += 1
        if self.activity is not None:
            body += self.activity.section()
            sections += 1
        total = 32 + len(body)
        head = FILE_MAGIC + struct.pack("<IIQI", 1, 0, total, sections)
        head += struct.pack("<I", _crc(head))
        return head + body


def gpu_device_section(interval_ms: int, devices: list[tuple[int, str, int, int, int, int, int, int]],
                       failed: int = 0, error: str = "") -> tuple[int, int, bytes]:
    """Section 13 GPU_DEVICE: devices of (index, name, readings, busy readings, busy
    sum, own readings, own sum, VRAM held peak), without phases."""
    b = struct.pack("<IIQ", interval_ms, 0, failed) + _str(error)
    for index, name, *figures in devices:
        b += struct.pack("<II", index, 0) + _str(name) + struct.pack("<6Q", *figures)
    return 13, len(devices), b


def gpu_memory_section(readings: int, resets: int, error: str,
                       devices: list[tuple[int, str, str, int, int]]) -> tuple[int, int, bytes]:
    """Section 14 GPU_MEMORY: devices of (torch index, uuid, name, allocated peak,
    reserved peak)."""
    b = struct.pack("<QQ", readings, resets) + _str(error)
    for index, uuid, name, allocated, reserved in devices:
        b += struct.pack("<II", index, 0) + _str(uuid) + _str(name)
        b += struct.pack("<QQ", allocated, reserved)
    return 14, len(devices), b


def process(pid: int, role: str = "worker", host: str = "testhost", start: int = 10**18,
            **meta: object) -> LapseFile:
    """A final file of one process with a thread root and nothing else yet."""
    m: dict[str, object] = {
        "lapse_version": "test", "host": host, "role": role, "run_id": "hostile",
        "end_reason": "exit", "clock_source": "monotonic", "pid": pid, "ppid": 1,
        "start_real_ns": start, "write_real_ns": start + 10**9, "anchor_real_ns": start,
        "anchor_mono_ns": 0, "wall_ns": 10**9, "write_seq": 3, "final": 1,
        "snapshot_interval_ms": 5000, "max_depth": 64, "max_paths": 4096, "max_spans": 0,
        "max_counters": 4096,
    }
    m.update(meta)
    f = LapseFile(m)
    f.nodes.append(Node(-1, 0, 0))
    return f


def chain(f: LapseFile, depth: int, name: str = "a", ns: int = 1000) -> LapseFile:
    """Adds one path nested `depth` deep under the first thread's root: each level one
    call of `ns`, its child's time inside it."""
    n = f.name(name)
    root = f.nodes[0]
    root.child_ns = ns
    parent = 0
    for d in range(1, depth + 1):
        f.nodes.append(Node(parent, n, d, calls=1, total_ns=ns,
                            child_ns=ns if d < depth else 0, hist={100: 1}))
        parent = len(f.nodes) - 1
    return f


def pack(images: list[bytes], members: list[int] | None = None) -> bytes:
    """A pack of images. `members` lists, for each index entry, the image it points at
    (default: each image once); an image listed twice is two overlapping members."""
    members = list(range(len(images))) if members is None else members
    body_at = 32 + 16 * len(members)
    body = b""
    where = []
    for img in images:
        where.append((body_at + len(body), len(img)))
        body += img + b"\0" * (-len(img) % 8)
    idx = b"".join(struct.pack("<QQ", *where[i]) for i in members)
    head = PACK_MAGIC + struct.pack("<IIQ", 1, len(members), body_at + len(body))
    head += struct.pack("<I", _crc(idx))
    head += struct.pack("<I", _crc(head))
    return head + idx + body
