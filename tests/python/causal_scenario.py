"""A producer and a consumer in ping-pong through lapse.signal / lapse.wait_on, run in
a fresh interpreter: threads (queue.Queue) or processes (multiprocessing, fork, a
Pipe). Each round the producer sleeps PRODUCE_S in span "produce", signals "batch"
and hands it over; the consumer, in wait_on("batch"), takes it, sleeps CONSUME_S in
span "consume", signals "ack" and hands that back; the producer waits for it in
wait_on("ack"). Each wait begins before what ends it is sent.

usage: python causal_scenario.py threads|procs ROUNDS RUN_DIR
Prints "producer PID TID" and "consumer PID TID"."""

from __future__ import annotations

import multiprocessing as mp
import os
import queue
import sys
import threading
import time

import lapse
from lapse import Profiler, span

PRODUCE_S, CONSUME_S = 0.002, 0.001


_say = threading.Lock()


def say(who: str) -> None:
    with _say:  # the two threads' lines whole
        print(who, os.getpid(), threading.get_native_id(), flush=True)


def producer(rounds: int, put, get) -> None:
    say("producer")
    for _ in range(rounds):
        with span("produce"):
            time.sleep(PRODUCE_S)
        lapse.signal("batch")
        with lapse.wait_on("ack"):
            put()
            get()


def consumer(rounds: int, put, get) -> None:
    say("consumer")
    for k in range(rounds):
        with lapse.wait_on("batch"):
            if k:
                put()
            get()
        with span("consume"):
            time.sleep(CONSUME_S)
        lapse.signal("ack")
    put()


def child(rounds: int, conn) -> None:
    with Profiler(role="consumer"):
        consumer(rounds, lambda: conn.send(1), conn.recv)


def main() -> int:
    mode, rounds, run_dir = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    with Profiler(run_dir=run_dir, role="producer"):
        if mode == "threads":
            to_c: queue.Queue = queue.Queue()
            to_p: queue.Queue = queue.Queue()
            t = threading.Thread(target=consumer, name="consumer",
                                 args=(rounds, lambda: to_p.put(1), to_c.get))
            t.start()
            producer(rounds, lambda: to_c.put(1), to_p.get)
            t.join()
        else:
            here, there = mp.get_context("fork").Pipe()
            c = mp.get_context("fork").Process(target=child, args=(rounds, there))
            c.start()
            producer(rounds, lambda: here.send(1), here.recv)
            c.join()
            if c.exitcode:
                return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
