"""lapse.instrument: decorate a module you cannot edit, in place; span tags.

    import lapse, mylib.solver
    lapse.instrument(mylib.solver, include=("solve*", "Grid.*"), tag="mylib")

    # in mylib itself, at import: its spans stay dormant unless a run asks for them
    lapse.register_opt_in_tag("mylib")
"""

from __future__ import annotations

import fnmatch
import importlib
import types
from typing import Any, Sequence

from . import _lapse

ENV = "LAPSE_ENABLE_TAGS"


def environment_tags() -> frozenset[str]:
    """The tags $LAPSE_ENABLE_TAGS enables (comma-separated)."""
    import os

    return frozenset(t.strip() for t in os.environ.get(ENV, "").split(",") if t.strip())


def _patterns(label: str, value: Any) -> tuple[str, ...]:
    if isinstance(value, str):
        value = (value,)
    value = tuple(value)
    if not all(isinstance(p, str) for p in value):
        raise TypeError(f"instrument: {label} takes glob patterns (str)")
    return value


def instrument(module: types.ModuleType | str, include: Sequence[str] | str = ("*",),
               exclude: Sequence[str] | str = (), prefix: str | None = None,
               tag: str | None = None) -> list[str]:
    """Decorates, in place, the functions that `module` (a module or its name, then
    imported) defines: its functions and its classes' methods, static and class
    methods, whose qualified name (``solve``, ``Grid.step``) matches a glob of
    `include` and none of `exclude`. Each becomes ``span(prefix + qualname,
    tag=tag)``, as ``@span`` makes it (a plain function stays itself; a generator or
    coroutine function is replaced by its wrapper). Functions that are spans
    already, imported from elsewhere, properties and nested classes are left alone.
    Returns the span names, in the module's order."""
    if isinstance(module, str):
        module = importlib.import_module(module)
    if not isinstance(module, types.ModuleType):
        raise TypeError(f"instrument: a module or a module name, not {type(module).__name__}")
    include, exclude = _patterns("include", include), _patterns("exclude", exclude)
    if prefix is not None and not isinstance(prefix, str):
        raise TypeError("instrument: prefix is a str")
    if tag is not None:
        _lapse.span("lapse.instrument", tag=tag)  # a bad tag raises before anything changes
    chosen: list[tuple[Any, str, Any, str]] = []  # (owner, attribute, value, qualname)
    for attr, value in list(vars(module).items()):
        if isinstance(value, type) and value.__module__ == module.__name__:
            for inner, member in list(vars(value).items()):
                fn = member.__func__ if isinstance(member, (staticmethod, classmethod)) else member
                if isinstance(fn, types.FunctionType) and fn.__module__ == module.__name__:
                    chosen.append((value, inner, member, fn.__qualname__))
        elif isinstance(value, types.FunctionType) and value.__module__ == module.__name__:
            chosen.append((module, attr, value, value.__qualname__))
    names = []
    for owner, attr, value, qualname in chosen:
        fn = value.__func__ if isinstance(value, (staticmethod, classmethod)) else value
        if hasattr(fn, "__lapse_span__") or fn.__name__.startswith("<"):
            continue
        if not any(fnmatch.fnmatchcase(qualname, p) for p in include) or \
                any(fnmatch.fnmatchcase(qualname, p) for p in exclude):
            continue
        name = (prefix or "") + qualname
        wrapped = _lapse.span(name, tag=tag)(value)
        if wrapped is not value:
            setattr(owner, attr, wrapped)
        names.append(name)
    return names


def register_opt_in_tag(tag: str) -> None:
    """Makes the spans tagged `tag` dormant unless a run enables the tag
    (``Profiler(enable_tags=...)``, ``$LAPSE_ENABLE_TAGS``, ``lapse run
    --enable-tag``): a library that ships its own spans calls this at import, so
    that its users pay for them only when they ask. Applies at once, also to a
    session already active."""
    _lapse.register_opt_in_tag(tag)
