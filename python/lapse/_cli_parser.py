"""The argument parser of the Python commands (lapse run, lapse lines): usage errors
in the C commands' form (docs/cli.md): one line that says what is wrong and where
help is, exit 2."""

from __future__ import annotations

import argparse
import sys


class CliParser(argparse.ArgumentParser):
    def error(self, message: str):  # type: ignore[override]
        if message.startswith("unrecognized arguments: "):
            message = f"unknown option '{message.split(': ', 1)[1].split()[0].split('=')[0]}'"
        sys.stderr.write(f"{self.prog}: {message} ({self.prog} --help explains)\n")
        sys.exit(2)
