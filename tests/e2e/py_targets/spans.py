"""A Python target with lapse spans open while it works, through the C library
loaded with ctypes (LAPSE_PROFILE=1 in the environment starts a session when it
loads): "train" around the loop, "train/step" around hot(), nothing around cold().

usage: spans.py LIBLAPSE SECONDS
"""
import ctypes
import sys
import time


def work(n):
    x = 0
    for i in range(n):
        x += i * i
    return x


def hot():
    return work(30000)


def cold():
    return work(10000)


def main():
    lib = ctypes.CDLL(sys.argv[1])
    lib.lapse_intern.restype = ctypes.c_uint32
    lib.lapse_intern.argtypes = [ctypes.c_char_p]
    lib.lapse_span_begin_id.argtypes = [ctypes.c_uint32]
    lib.lapse_span_end_id.argtypes = [ctypes.c_uint32]
    train, step = lib.lapse_intern(b"train"), lib.lapse_intern(b"step")
    end = time.monotonic() + float(sys.argv[2])
    lib.lapse_span_begin_id(train)
    while time.monotonic() < end:
        lib.lapse_span_begin_id(step)
        hot()
        lib.lapse_span_end_id(step)
        cold()
    lib.lapse_span_end_id(train)


if __name__ == "__main__":
    main()
