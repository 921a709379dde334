"""The interpreter's own view of its parked threads, for comparison with lapse dump:
starts parked.py's threads (no spinner), waits until they sleep, then prints
"frames {json}": for each other thread's native id, its stack innermost first as
[code name, file, line] from sys._current_frames(), then sleeps.
"""
import json
import os
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import parked  # noqa: E402


def main():
    threads = [
        threading.Thread(target=parked.first_line_thread, name="first-line", daemon=True),
        threading.Thread(target=parked.gen_consumer, name="gen", daemon=True),
        threading.Thread(target=parked.run_coro, name="coro", daemon=True),
        threading.Thread(target=parked.ready.wait, name="waiter", daemon=True),
    ]
    for t in threads:
        t.start()
    parked.ready.wait()
    time.sleep(0.5)  # every parked thread is in time.sleep by now
    by_ident = {t.ident: t.native_id for t in threading.enumerate()}
    out = {}
    for ident, frame in sys._current_frames().items():
        if ident == threading.get_ident() or ident not in by_ident:
            continue
        stack = []
        f = frame
        while f is not None:
            stack.append([f.f_code.co_name, f.f_code.co_filename, f.f_lineno])
            f = f.f_back
        out[str(by_ident[ident])] = stack
    print("frames", json.dumps(out), flush=True)
    time.sleep(1000)


if __name__ == "__main__":
    main()
