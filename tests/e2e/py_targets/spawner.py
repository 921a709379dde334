"""A parent Python that runs a child Python and waits for it (for --subprocesses).

usage: spawner.py PYTHON SCRIPT ARGS...
"""
import subprocess
import sys


def wait_for_child(proc):
    while proc.poll() is None:
        try:
            proc.wait(timeout=0.01)
        except subprocess.TimeoutExpired:
            pass  # a busy-ish wait so that the parent shows up in samples
    return proc.returncode


def main():
    proc = subprocess.Popen(sys.argv[1:])
    sys.exit(wait_for_child(proc))


if __name__ == "__main__":
    main()
