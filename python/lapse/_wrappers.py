"""Wrappers for what one call cannot time: coroutine functions, generators and
async generators. Used by lapse.span at decoration time only."""

from __future__ import annotations

import functools
from typing import Any, Callable


def wrap_special(name: str, fn: Callable[..., Any], span: Any) -> Any:
    """Wraps a coroutine function, generator function or async generator function
    in `span` (a lapse.Span, which serves every call at once).

    - a coroutine function: one span from the first resume to the return, in the
      task's own context (it covers its awaits: wall time);
    - a generator or async generator: one span per resumption (each next/send/
      throw), so the span measures the time spent inside the generator and never
      stays open while the consumer runs.
    """
    import inspect

    if inspect.iscoroutinefunction(fn):

        @functools.wraps(fn)
        async def coroutine_wrapper(*args: Any, **kwargs: Any) -> Any:
            with span:
                return await fn(*args, **kwargs)

        coroutine_wrapper.__lapse_span__ = name  # type: ignore[attr-defined]
        return coroutine_wrapper

    if inspect.isasyncgenfunction(fn):

        @functools.wraps(fn)
        async def async_generator_wrapper(*args: Any, **kwargs: Any) -> Any:
            agen = fn(*args, **kwargs)
            resume: Any = agen.asend
            value: Any = None
            while True:
                try:
                    with span:
                        item = await resume(value)
                except StopAsyncIteration:
                    return
                try:
                    value = yield item
                    resume = agen.asend
                except GeneratorExit:
                    await agen.aclose()
                    raise
                except BaseException as exc:  # thrown in: hand it to the generator
                    value, resume = exc, agen.athrow

        async_generator_wrapper.__lapse_span__ = name  # type: ignore[attr-defined]
        return async_generator_wrapper

    @functools.wraps(fn)
    def generator_wrapper(*args: Any, **kwargs: Any) -> Any:
        gen = fn(*args, **kwargs)
        resume: Any = gen.send
        value: Any = None
        while True:
            try:
                with span:
                    item = resume(value)
            except StopIteration as stop:
                return stop.value
            try:
                value = yield item
                resume = gen.send
            except GeneratorExit:
                gen.close()
                raise
            except BaseException as exc:  # thrown in: hand it to the generator
                value, resume = exc, gen.throw

    generator_wrapper.__lapse_span__ = name  # type: ignore[attr-defined]
    return generator_wrapper
