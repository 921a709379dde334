"""Causality: lapse_signal / LAPSE_WAIT_ON across real processes and threads
(tests/e2e/e2e_causal.c, a producer and a consumer in ping-pong), paired by name and
order on the one clock, and the critical path of that known program with the phases
on it, in `lapse report --json` and the text report."""

from __future__ import annotations

import pathlib

import pytest

from conftest import profile_env, run_program

ROUNDS, PRODUCE_US, CONSUME_US = 20, 2000, 1000


def causal_run(lapse, tmp: pathlib.Path, mode: str) -> tuple[dict, dict, pathlib.Path]:
    runs = tmp / "runs"
    r = run_program([lapse.program("e2e_causal"), mode, ROUNDS, PRODUCE_US, CONSUME_US],
                    profile_env(runs))
    assert r.returncode == 0, r.stderr
    who = {}
    for line in r.stdout.splitlines():
        name, pid, tid = line.split()
        who[name] = (int(pid), int(tid))
    run = next(runs.iterdir())
    return lapse.report_json(run), who, run


@pytest.mark.parametrize("mode", ["procs", "threads"])
def test_pairs_and_critical_path(lapse, tmp_path, mode):
    doc, who, run = causal_run(lapse, tmp_path, mode)
    c = doc["causality"]
    n = 2 * ROUNDS + 1  # "ready", then "batch" and "ack" each round
    assert c["signals"] == n and c["waits"] == n
    assert c["unmatched_waits"] == 0 and c["unconsumed_signals"] == 0 and c["dropped"] == 0
    pairs = c["pairs"]
    assert len(pairs) == n and c["blocking_pairs"] == n
    prod, cons = who["producer"], who["consumer"]
    if mode == "procs":
        assert prod[0] != cons[0]
    else:
        assert prod[0] == cons[0] and prod[1] != cons[1]
    # in order of the waits' ends the rounds alternate: batch k, ack k, batch k+1, ...
    assert [p["name"] for p in pairs] == ["ready"] + ["batch", "ack"] * ROUNDS
    for p in pairs:
        src, dst = (prod, cons) if p["name"] == "batch" else (cons, prod)
        assert (p["signal_pid"], p["signal_tid"]) == src
        assert (p["wait_pid"], p["wait_tid"]) == dst
        assert p["wait_begin_ns"] < p["signal_ns"] <= p["wait_end_ns"]
    # exact: each signal comes after the wait of the round before it ended (the token
    # it answers), so the k-th wait is paired with the k-th signal
    for before, after in zip(pairs, pairs[1:]):
        assert before["wait_end_ns"] <= after["signal_ns"]

    cp = c["critical_path"]
    segs = cp["segments"]
    # the consumer's start, then produce, consume, produce, ...: one segment per round
    # and side, alternating, and the producer's last, after its last wait for "ack"
    assert [(s["pid"], s["tid"]) for s in segs] == [cons] + [prod, cons] * ROUNDS + [prod]
    assert segs[0]["from_pair"] is None
    for s, nxt in zip(segs, segs[1:]):
        pair = pairs[nxt["from_pair"]]
        assert pair["signal_ns"] == s["end_ns"] and pair["wait_end_ns"] == nxt["begin_ns"]
    assert cp["length_ns"] == cp["end_ns"] - cp["begin_ns"]
    assert cp["length_ns"] <= doc["run"]["runtime_ns"]
    assert segs[-1]["begin_ns"] == pairs[-1]["wait_end_ns"] and segs[-1]["end_ns"] == cp["end_ns"]
    phases = {(p["role"], p["path"]): p for p in cp["phases"]}
    prole = "producer" if mode == "procs" else doc["workers"][0]["role"]
    crole = "consumer" if mode == "procs" else prole
    ppath, cpath = "produce", "consume"
    produce, consume = phases[(prole, ppath)], phases[(crole, cpath)]
    # every round's work is on the path, slept at least as long as asked (a loaded
    # machine oversleeps, the 1 ms sleeps more than the 2 ms ones, so which of the two
    # holds more varies: the phases come by time, these two first)
    assert produce["ns"] >= ROUNDS * PRODUCE_US * 1000
    assert consume["ns"] >= ROUNDS * CONSUME_US * 1000
    by_time = [p["ns"] for p in cp["phases"]]
    assert by_time == sorted(by_time, reverse=True)
    assert {id(p) for p in cp["phases"][:2]} == {id(produce), id(consume)}
    on_path = sum(p["ns"] for p in cp["phases"]) + cp["wake_ns"]
    assert on_path == cp["length_ns"]
    # the wake-ups are the hand-offs the path took, from signal to the wait's end
    # (scheduling delay: large under load); the rest is nearly all the work
    assert cp["wake_ns"] == sum(pairs[s["from_pair"]]["wait_end_ns"] - pairs[s["from_pair"]]["signal_ns"]
                                for s in segs[1:])
    assert produce["ns"] + consume["ns"] > 0.9 * (cp["length_ns"] - cp["wake_ns"])
    assert abs(produce["share"] - produce["ns"] / cp["length_ns"]) < 1e-5
    assert cp["processes"] == (2 if mode == "procs" else 1)

    text = lapse.run("report", run).stdout
    assert f"CAUSALITY  {n} signals, {n} waits: {n} pairs" in text
    assert "CRITICAL PATH" in text and f"{prole}:{ppath}" in text


def test_unmatched_unconsumed_and_not_blocking(lapse, tmp_path):
    """A signal before its wait pairs but did not block (not on the path); a wait no
    signal ends is unmatched; a signal no wait takes is unconsumed; with no blocking
    wait the path is the one thread, all in span "edges"."""
    runs = tmp_path / "runs"
    r = run_program([lapse.program("e2e_causal"), "edges"], profile_env(runs))
    assert r.returncode == 0, r.stderr
    doc = lapse.report_json(next(runs.iterdir()))
    c = doc["causality"]
    assert (c["signals"], c["waits"], c["blocking_pairs"]) == (2, 2, 0)
    assert (c["unmatched_waits"], c["unconsumed_signals"]) == (1, 1)
    (pair,) = c["pairs"]
    assert pair["name"] == "early" and not pair["blocking"]
    assert pair["signal_ns"] <= pair["wait_begin_ns"]
    (seg,) = c["critical_path"]["segments"]
    assert seg["from_pair"] is None and c["critical_path"]["wake_ns"] == 0
    top = c["critical_path"]["phases"][0]
    assert top["path"] == "edges/wait:never" and top["ns"] >= 1_000_000


def test_no_causality_is_null(lapse, workers_run):
    """A run without signals or waits says so: null, and no block in the text."""
    doc = lapse.report_json(workers_run.run_dir)
    assert doc["causality"] is None
    assert "CAUSALITY" not in lapse.run("report", workers_run.run_dir).stdout
