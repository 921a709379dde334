"""Out of memory while a report is built is an error: one line and a non-zero exit,
never a report that reads as complete (CAVEATS none, or blocks left out in silence).

libfail_alloc.so (LD_PRELOAD, tests/e2e/preload/fail_alloc.c) lets the first N
allocations of `lapse report` succeed and fails every one after them, as in a
process that has run out of memory. N takes every value from 0 to the number of
allocations the report makes, so that each allocation is the first to fail once."""

from __future__ import annotations

import json
import os
import re

from conftest import clean_env, profile_env, run_program, stderr_lines

OOM_LINE = re.compile(r"^lapse report: (.+: )?out of memory\b")
# the time of reading, and what is measured from it
TIME_OF_READING = re.compile(r'^\s*"(read_real_ns|silent_ns)": \d+,?$', re.M)


def ranked_run(lapse, tmp_path):
    """Three ranks of a world of four (rank 3 left no file), rank 0 with a phase of
    its own, and a file that cannot be read: ranks, ACROSS RANKS and caveats."""
    runs = tmp_path / "runs"
    for rank in range(3):
        env = profile_env(runs, RANK=rank, WORLD_SIZE=4, LOCAL_RANK=rank, LAPSE_RUN_ID="oom")
        args = [lapse.program("e2e_rank"), 3, 1000] + (["ckpt"] if rank == 0 else [])
        r = run_program(args, env)
        assert r.returncode == 0, r.stderr
    host = next((runs / "oom").iterdir())
    (host / "zz-damaged.lapse").write_bytes(b"\x89LAPSE\r\n" + b"\0" * 40)
    return runs


def shim_env(lapse, **extra) -> dict[str, str]:
    # (under AddressSanitizer the shim comes before its runtime: allowed here)
    asan = ":".join(filter(None, [os.environ.get("ASAN_OPTIONS"), "verify_asan_link_order=0"]))
    return clean_env(LD_PRELOAD=str(lapse.build / "libfail_alloc.so"), ASAN_OPTIONS=asan, **extra)


def test_every_allocation_that_fails_is_an_error(lapse, tmp_path):
    runs = ranked_run(lapse, tmp_path)
    for args in (["report", runs], ["report", runs, "--json"]):
        json_out = "--json" in args
        ref = lapse.run(*args)
        assert ref.returncode == 0, ref.stderr
        expected = TIME_OF_READING.sub("", ref.stdout)
        assert "missing_ranks" in expected and "zz-damaged.lapse" in expected, expected
        assert ("ACROSS RANKS" in expected) or json_out, expected

        count_file = tmp_path / "allocations"
        counted = lapse.run(*args, env=shim_env(lapse, LAPSE_TEST_COUNT_ALLOCS=count_file))
        assert counted.returncode == 0 and TIME_OF_READING.sub("", counted.stdout) == expected
        allocations = int(count_file.read_text())
        assert allocations > 50, allocations  # the shim saw the report's allocations

        for n in range(allocations + 1):
            r = lapse.run(*args, env=shim_env(lapse, LAPSE_TEST_FAIL_ALLOC_AFTER=n))
            what = f"{' '.join(map(str, args[:1] + args[2:]))} with allocation {n + 1} failing"
            if r.returncode == 0:  # nothing that failed was needed: the same report
                assert TIME_OF_READING.sub("", r.stdout) == expected, what
                assert r.stderr == "", what
                continue
            assert r.returncode == 1, (what, r.returncode, r.stderr)
            lines = stderr_lines(r.stderr)
            assert len(lines) == 1 and OOM_LINE.match(lines[0]), (what, r.stderr)
            if json_out:  # no document, or one cut short: never one that parses
                try:
                    json.loads(r.stdout)
                except ValueError:
                    pass
                else:
                    raise AssertionError(f"{what}: a whole JSON document on stdout")
            else:  # never a CAVEATS block, which would read as the end of a report
                assert "CAVEATS" not in r.stdout, (what, r.stdout)
