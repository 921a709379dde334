"""A thread that polls every millisecond (while True: sleep(0.001)) beside a main
thread that spins: the poller runs for a few microseconds after each wake and sleeps
the rest of the time, so it is waiting at almost every instant. Prints "ready".

usage: poller.py SECONDS
"""
import sys
import threading
import time


def poll():
    while True:
        time.sleep(0.001)


def spin(seconds):
    t0 = time.monotonic()
    x = 0
    while time.monotonic() - t0 < seconds:
        for i in range(1000):
            x += i
    return x


def main():
    threading.Thread(target=poll, name="poller", daemon=True).start()
    print("ready", flush=True)
    spin(float(sys.argv[1]))


if __name__ == "__main__":
    main()
