"""What ``@annotate`` wraps a function in: push/pop around a plain call,
start/end around the whole life of a coroutine, generator or async
generator (they interleave on one thread, so push/pop would nest wrongly).
Generators and async generators are delegated to in full: ``send``,
``throw`` and ``close`` (``asend``, ``athrow``, ``aclose``) reach the
wrapped one, so annotating never changes what a program sees."""

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
                # What `yield from` does for generators, by hand: values
                # sent, exceptions thrown and closing reach the wrapped one.
                inner = func(*args, **kwargs)
                step = inner.__anext__()
                while True:
                    try:
                        value = await step
                    except StopAsyncIteration:
                        return
                    try:
                        sent = yield value
                    except GeneratorExit:
                        await inner.aclose()
                        raise
                    except BaseException as error:
                        step = inner.athrow(error)
                    else:
                        step = inner.asend(sent)
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

    # The attributes as plain values, for compiled code (see nvtxr._compile).
    message = attributes.message
    spec = (
        getattr(message, "string", message),
        attributes.color,
        attributes.domain.name,
        attributes.category or None,
    )

    @functools.wraps(func)
    def call(*args, **kwargs):
        return _call(attributes, func, args, kwargs, spec)

    return call
