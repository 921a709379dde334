"""What LineProfiler and the automatic spans share: the functions a namespace holds,
and an import hook that hands a chosen module's code to them before it runs."""

from __future__ import annotations

import importlib.machinery
import sys
import types
from typing import Any, Callable, Iterator, Sequence


def functions_of(values: Sequence[Any], seen: set[int] | None = None) -> Iterator[types.FunctionType]:
    """The plain functions among values, and those of the classes among them
    (methods, static and class methods, properties, and what a decorator wraps),
    each once."""
    seen = set() if seen is None else seen
    for value in values:
        if id(value) in seen:
            continue
        seen.add(id(value))
        if isinstance(value, (staticmethod, classmethod)):
            value = value.__func__
        if isinstance(value, property):
            yield from functions_of([value.fget, value.fset, value.fdel], seen)
        elif isinstance(value, types.FunctionType):
            yield value
            wrapped = getattr(value, "__wrapped__", None)
            if wrapped is not None:
                yield from functions_of([wrapped], seen)
        elif isinstance(value, type):
            yield from functions_of(list(vars(value).values()), seen)


class _HookedLoader:
    """A chosen module's source loader: its module code goes to on_code before it
    runs (and so every function and class body in it), the module to on_module after."""

    def __init__(self, loader: importlib.machinery.SourceFileLoader, hook: ImportHook):
        self._loader = loader
        self._hook = hook

    def __getattr__(self, name: str) -> Any:
        return getattr(self._loader, name)

    def create_module(self, spec: Any) -> Any:
        return self._loader.create_module(spec)

    def exec_module(self, module: types.ModuleType) -> None:
        loader = self._loader
        module.__loader__ = loader
        if module.__spec__ is not None:
            module.__spec__.loader = loader
        code = loader.get_code(module.__name__)
        if code is None:
            raise ImportError(f"cannot load {module.__name__}: no code")
        if self._hook.on_code is not None:
            self._hook.on_code(code)
        exec(code, module.__dict__)
        if self._hook.on_module is not None:
            self._hook.on_module(module)


class ImportHook:
    """First on sys.meta_path while installed: a module whose spec `chooses` (its
    name and spec) is loaded through _HookedLoader."""

    def __init__(self, chooses: Callable[[str, Any], bool],
                 on_code: Callable[[types.CodeType], None] | None = None,
                 on_module: Callable[[types.ModuleType], None] | None = None):
        self.chooses = chooses
        self.on_code = on_code
        self.on_module = on_module

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> Any:
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(name, path, target)
            if spec is None:
                continue
            if isinstance(spec.loader, importlib.machinery.SourceFileLoader) and self.chooses(name, spec):
                spec.loader = _HookedLoader(spec.loader, self)
            return spec
        return None

    def install(self) -> None:
        sys.meta_path.insert(0, self)

    def remove(self) -> None:
        if self in sys.meta_path:
            sys.meta_path.remove(self)
