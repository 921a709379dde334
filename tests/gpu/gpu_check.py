"""What the real-GPU checks of tests/gpu/ share: a check printed as one line (PASS or
FAIL with its figures), and torch with a CUDA device, or the one line that says why
there is nothing to check (the script then exits 77)."""

from __future__ import annotations

import sys
from typing import Any

failures = 0


def check(ok: Any, what: str) -> None:
    global failures
    print(("PASS " if ok else "FAIL ") + what, flush=True)
    failures += not ok


def exit_code() -> int:
    """0: every check held; 1: one failed."""
    return 1 if failures else 0


def cuda_torch(script: str) -> Any:
    """torch, where it imports and sees a CUDA device; else None, said on one line."""
    try:
        import torch
    except ImportError as e:
        print(f"{script}: no torch for {sys.executable} ({e}): nothing checked")
        return None
    if not torch.cuda.is_available():
        print(f"{script}: no CUDA device (torch {torch.__version__}, CUDA "
              f"{torch.version.cuda or 'none'}): nothing checked")
        return None
    return torch
