"""What ``@annotate`` wraps a function in: push/pop around a plain call,
start/end around the whole life of a coroutine, generator or async
generator (they interleave on one thread, so push/pop would nest wrongly)."""

import functools
import inspect

from nvtxr._native import _call, _end, _start


def decorate(func, attributes):
    if inspect.iscoroutinefunction(func):

        @functools.wraps(func)
        async def coroutine(*args, **kwargs):
            range_id = _start(attributes)
            try:
                return await func(*args, **kwargs)
            finally:
                _end(attributes, range_id)

        return coroutine

    if inspect.isasyncgenfunction(func):

        @functools.wraps(func)
        async def async_generator(*args, **kwargs):
            range_id = _start(attributes)
            try:
                async for item in func(*args, **kwargs):
                    yield item
            finally:
                _end(attributes, range_id)

        return async_generator

    if inspect.isgeneratorfunction(func):

        @functools.wraps(func)
        def generator(*args, **kwargs):
            range_id = _start(attributes)
            try:
                return (yield from func(*args, **kwargs))
            finally:
                _end(attributes, range_id)

        return generator

    @functools.wraps(func)
    def call(*args, **kwargs):
        return _call(attributes, func, args, kwargs)

    return call
