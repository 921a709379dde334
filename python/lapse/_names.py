"""Names built from data, caught by their shape.

`phase(f"episode_{i}")` grows the span tree for the life of the process until it
folds at the path bound. One name says nothing; many names of one *shape* (digit
runs replaced by "#") do. The C core calls `on_new_name` the first time it sees a
name in this process."""

from __future__ import annotations

import re
import warnings

WARN_AT = 128  #: distinct names of one shape before the warning

_DIGITS = re.compile(r"\d+")
_by_shape: dict[str, int] = {}
_warned: set[str] = set()
strict = False  #: set by a Profiler(strict_names=True) while it is active


def shape_of(name: str) -> str:
    return _DIGITS.sub("#", name)


def on_new_name(name: str) -> None:
    shape = shape_of(name)
    if shape == name:
        return  # no digits: a fixed name
    seen = _by_shape.get(shape, 0) + 1
    _by_shape[shape] = seen
    if strict and seen >= 2:
        raise ValueError(
            f"lapse: strict_names: {name!r} is the second span name of the shape {shape!r}; "
            "names built from data grow the span tree without bound: use a fixed name and "
            "count() for the varying part")
    if seen == WARN_AT and shape not in _warned:
        _warned.add(shape)
        warnings.warn(
            f"{WARN_AT} distinct span names share the shape {shape!r} (most recently "
            f"{name!r}). Names built from data grow the span tree until it folds at the "
            "path bound and the report stops being readable: use a fixed name and count() "
            "for the varying part.", RuntimeWarning, stacklevel=3)
