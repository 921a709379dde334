"""A Python target that parks its threads in known functions at known lines, for
`lapse dump` / `lapse record` tests. Each parking line is marked with a comment
"# PARK:<name>" so that tests find its line number from this file.

Threads:
  MainThread   main -> park_main                        (time.sleep)
  first-line   first_line_park                         (its first body line sleeps)
  gen          gen_consumer -> park_gen (a generator)   (time.sleep inside the generator)
  coro         run_coro -> asyncio ... -> park_coro (a coroutine) -> inner (sleep)
  spinner      spin (holds the GIL most of the time: a pure Python loop)
Prints "ready {json: thread name -> native thread id}" on stdout once every thread
has passed the barrier in front of its parking place.
"""
import asyncio
import json
import sys
import threading
import time

ready = threading.Barrier(5)


def first_line_park():
    time.sleep(1000)  # PARK:first_line


def park_gen():
    ready.wait()
    yield 1
    time.sleep(1000)  # PARK:gen
    yield 2


def gen_consumer():
    for _ in park_gen():
        pass


async def park_coro():
    ready.wait()
    time.sleep(1000)  # PARK:coro


def run_coro():
    asyncio.run(park_coro())


def spin():
    ready.wait()
    x = 0
    while True:
        x += 1  # PARK:spin


def first_line_thread():
    ready.wait()
    first_line_park()


def park_main():
    ready.wait()
    ids = {t.name: t.native_id for t in threading.enumerate()}
    print("ready", json.dumps(ids), flush=True)
    time.sleep(1000)  # PARK:main


def main():
    threads = [
        threading.Thread(target=first_line_thread, name="first-line", daemon=True),
        threading.Thread(target=gen_consumer, name="gen", daemon=True),
        threading.Thread(target=run_coro, name="coro", daemon=True),
    ]
    if "--no-spin" not in sys.argv:
        threads.append(threading.Thread(target=spin, name="spinner", daemon=True))
    else:
        threads.append(threading.Thread(target=ready.wait, name="waiter", daemon=True))
    for t in threads:
        t.start()
    park_main()


if __name__ == "__main__":
    main()
