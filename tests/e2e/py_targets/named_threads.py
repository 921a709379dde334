"""A Python target for thread names in `lapse dump` / `lapse record`.

Always: the main thread, and a thread started with _thread.start_new_thread (never a
threading.Thread: it has no Python name) that sets its OS name to "raw-os".
With --threading (this module is imported only then):
  worker-A      threading.Thread(name="worker-A"), OS name set to "os-worker";
                spins in spin_named (a pure Python loop)
  Thread-N (sleeper)  a thread with threading's default name
  dict-named    a thread whose instance dict was materialized (vars(thread))
Prints "ready {json: key -> native thread id, "threading": imported or not}" once
every thread runs.
"""
import _thread
import ctypes
import json
import sys
import time

libc = ctypes.CDLL(None, use_errno=True)
PR_SET_NAME = 15
started = {}
lock = _thread.allocate_lock()


def set_os_name(name: bytes) -> None:
    libc.prctl(PR_SET_NAME, ctypes.c_char_p(name), 0, 0, 0)


def note(key):
    with lock:
        started[key] = _thread.get_native_id()


def raw_thread():
    set_os_name(b"raw-os")
    note("raw")
    time.sleep(1000)


def spin_named():
    set_os_name(b"os-worker")
    note("worker-A")
    x = 0
    while True:
        x += 1


def sleeper():
    note("sleeper")
    time.sleep(1000)


def dict_named():
    note("dict-named")
    time.sleep(1000)


def main():
    want = {"raw"}
    _thread.start_new_thread(raw_thread, ())
    if "--threading" in sys.argv:
        import threading
        threading.Thread(target=spin_named, name="worker-A", daemon=True).start()
        threading.Thread(target=sleeper, daemon=True).start()
        t = threading.Thread(target=dict_named, name="dict-named", daemon=True)
        vars(t)  # the instance's real dict, made from its inline values
        t.start()
        want |= {"worker-A", "sleeper", "dict-named"}
    while True:
        with lock:
            if want <= set(started):
                break
        time.sleep(0.01)
    ids = dict(started, main=_thread.get_native_id())
    print("ready", json.dumps({"ids": ids, "threading": "threading" in sys.modules}), flush=True)
    time.sleep(1000)


if __name__ == "__main__":
    main()
