"""Bad input to `lapse report`: one clear line and the documented exit status."""

from __future__ import annotations


def test_missing_path(lapse, tmp_path):
    missing = tmp_path / "no-such-run"
    r = lapse.run("report", missing)
    assert r.returncode == 1, (r.returncode, r.stderr)
    assert len(r.stderr.splitlines()) == 1, r.stderr
    assert str(missing) in r.stderr or missing.name in r.stderr, r.stderr
    assert r.stdout == ""


def test_missing_path_json(lapse, tmp_path):
    r = lapse.run("report", tmp_path / "no-such-run", "--json")
    assert r.returncode == 1, (r.returncode, r.stderr)
    assert len(r.stderr.splitlines()) == 1, r.stderr


def test_directory_without_lapse_files(lapse, tmp_path):
    (tmp_path / "empty").mkdir()
    r = lapse.run("report", tmp_path / "empty")
    assert r.returncode == 1, (r.returncode, r.stderr)
    assert len(r.stderr.splitlines()) == 1, r.stderr


def test_unknown_flag(lapse, workers_run):
    r = lapse.run("report", workers_run.run_dir, "--no-such-flag")
    assert r.returncode == 2, (r.returncode, r.stderr)
    assert r.stderr.strip(), "a usage error says why"


def test_help(lapse):
    r = lapse.run("report", "--help")
    assert r.returncode == 0, (r.returncode, r.stderr)
    assert "report" in r.stdout
    assert "--json" in r.stdout


def test_unknown_command(lapse):
    r = lapse.run("no-such-command")
    assert r.returncode == 2
    assert len(r.stderr.splitlines()) == 1, r.stderr


def test_help_claims_only_supported_languages(lapse):
    """`lapse --help` names a language only where the project ships its binding:
    C/C++ (include/lapse.h), Python (python/lapse), Fortran (a fortran/ module)."""
    from conftest import REPO
    r = lapse.run("--help")
    assert r.returncode == 0, r.stderr
    for language, binding in (("Fortran", REPO / "fortran"), ("Rust", REPO / "rust"),
                              ("Julia", REPO / "julia")):
        if language in r.stdout:
            assert binding.is_dir(), f"--help names {language}, which lapse does not support"


# ---- every option of every command, in each of its forms (issue 10) ----
#
# The options come from the commands' own tables (src/cli/cmd_*.c, the table
# getopt_long parses), so an option added there is tried here too: one that takes a
# value fails test_every_option_has_values until VALUES says what to give it.

import re  # noqa: E402

import pytest  # noqa: E402

from conftest import REPO  # noqa: E402

_TABLE = re.compile(r"static const struct option options\[\] = \{(.*?)\n\};", re.S)
_ENTRY = re.compile(r'\{"([a-z-]+)", (no|required)_argument, NULL, (\'(.)\'|\w+)\}')
NO_PID = "2147483646"  # no such process: a parse that passed fails at once, exit 1


_MACRO = re.compile(r"#define (CLI_\w+_OPTIONS)((?:.*\\\n)*.*)")


def option_tables() -> dict[str, list[tuple[str, bool, str | None]]]:
    """command -> [(long name, takes a value, short letter or None)], from the source
    (a table's entries and those of the CLI_*_OPTIONS macros it names)."""
    cli = REPO / "src" / "cli"
    macros = {name: body for h in cli.glob("*.h") for name, body in _MACRO.findall(h.read_text())}
    tables = {}
    for src in sorted(cli.glob("cmd_*.c")):
        m = _TABLE.search(src.read_text())
        if m:
            body = m.group(1)
            for name, entries in macros.items():
                body = body.replace(name, entries)
            tables[src.stem[4:]] = [(name, arg == "required", short or None)
                                    for name, arg, _, short in _ENTRY.findall(body)]
    return tables


TABLES = option_tables()

# What a command is given beside the option under test, so that once the options
# parse, it fails at once with exit 1 (nothing to read), never with a usage error.
OPERANDS = {"report": ["/nonexistent/run"], "diff": ["/nonexistent/a", "/nonexistent/b"],
            "export": ["/nonexistent/run"], "dump": [NO_PID], "top": [NO_PID],
            "record": ["--pid", NO_PID], "view": ["/nonexistent/a", "/nonexistent/b"]}

# (command, option) -> (a good value, a bad value or None when every value is good)
VALUES = {
    ("report", "top"): ("5", "0"),
    ("diff", "top"): ("3", "x"),
    ("export", "perfetto"): ("out.json", None),
    ("export", "gecko"): ("out.json", None),
    ("export", "flamegraph"): ("out.svg", None),
    ("export", "speedscope"): ("out.json", None),
    ("export", "collapsed"): ("out.txt", None),
    ("export", "pstats"): ("out.prof", None),
    ("export", "hdf5"): ("out.h5", None),
    ("top", "rate"): ("200", "0"),
    ("top", "interval"): ("0.5", "0"),
    ("top", "rows"): ("5", "0"),
    ("top", "duration"): ("2", "-1"),
    ("top", "mode"): ("cpu", "foo"),
    ("top", "pid"): (NO_PID, "x"),
    ("record", "rate"): ("200", "0"),
    ("record", "duration"): ("2", "-1"),
    ("record", "mode"): ("gil", "foo"),
    ("record", "hide-root"): ("boot.py", ""),
    ("record", "output"): ("out.txt", ""),
    ("record", "format"): ("collapsed", "png"),
    ("record", "pid"): (NO_PID, "x"),
    ("view", "output"): ("out.html", ""),
}

CASES = [(cmd, name, value, short) for cmd, table in TABLES.items()
         for name, value, short in table if name != "help"]


def forms(name: str, short: str | None, value: str) -> list[list[str]]:
    out = [[f"--{name}={value}"], [f"--{name}", value]]
    if short:
        out += [[f"-{short}{value}"], [f"-{short}", value]]
    return out


def usage_error(r, cmd: str) -> str:
    """A usage error's message, after checking its form: exit 2 and one line, naming
    the command and where help is."""
    assert r.returncode == 2, (r.args, r.returncode, r.stderr)
    lines = r.stderr.splitlines()
    hint = f" (lapse {cmd} --help explains)"
    assert len(lines) == 1 and lines[0].startswith(f"lapse {cmd}: "), r.stderr
    assert lines[0].endswith(hint), r.stderr
    return lines[0][: -len(hint)]


def operands(cmd: str, name: str) -> list[str]:
    return [] if name == "pid" else OPERANDS[cmd]


def test_tables_found():
    assert set(TABLES) == set(OPERANDS), "a command without a test context, or a table not found"
    for cmd, table in TABLES.items():
        assert ("help", False, "h") in table, cmd


@pytest.mark.parametrize("cmd,name,value,short", CASES)
def test_every_option_has_values(cmd, name, value, short):
    if value:
        assert (cmd, name) in VALUES, f"lapse {cmd} --{name}: add a good and a bad value to VALUES"


@pytest.mark.parametrize("cmd,name,value,short", CASES)
def test_option_forms(lapse, tmp_path, cmd, name, value, short):
    """Each form of each option parses: the command then fails on its operands (exit
    1, no usage); a bad value is named in one line with exit 2, in every form."""
    if not value:
        for args in [[f"--{name}"]] + ([[f"-{short}"]] if short else []):
            r = lapse.run(cmd, *args, *operands(cmd, name))
            assert r.returncode == 1 and "usage:" not in r.stderr, (args, r.returncode, r.stderr)
        line = usage_error(lapse.run(cmd, f"--{name}=1", *operands(cmd, name)), cmd)
        assert line == f"lapse {cmd}: --{name} takes no value", line
        return
    good, bad = VALUES[(cmd, name)]
    if good.startswith("out."):
        good = str(tmp_path / good)
    for args in forms(name, short, good):
        r = lapse.run(cmd, *args, *operands(cmd, name))
        assert r.returncode == 1 and "usage:" not in r.stderr, (args, r.returncode, r.stderr)
    if bad is not None:
        for args in forms(name, short, bad):
            if bad == "" and len(args) == 1 and not args[0].startswith("--"):
                continue  # "-o" with nothing attached is the detached form
            line = usage_error(lapse.run(cmd, *args, *operands(cmd, name)), cmd)
            assert line.startswith(f"lapse {cmd}: --{name} needs ") and \
                line.endswith(f"(got '{bad}')"), (args, line)
    # the value missing at the end of the line
    line = usage_error(lapse.run(cmd, *operands(cmd, name), f"--{name}"), cmd)
    assert line == f"lapse {cmd}: --{name} needs a value", line


@pytest.mark.parametrize("cmd", sorted(OPERANDS))
@pytest.mark.parametrize("flag", ["--x", "--x=5", "-x"])
def test_unknown_option(lapse, cmd, flag):
    line = usage_error(lapse.run(cmd, flag, *OPERANDS[cmd]), cmd)
    assert line == f"lapse {cmd}: unknown option '{flag.split('=')[0]}'", line


@pytest.mark.parametrize("cmd", sorted(OPERANDS))
def test_help_forms(lapse, cmd):
    for flag in ("-h", "--help"):
        r = lapse.run(cmd, flag)
        assert r.returncode == 0 and r.stdout.startswith(f"usage: lapse {cmd}"), (flag, r.stderr)
