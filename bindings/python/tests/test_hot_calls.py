"""The hot calls' hand-written entries (the module's and `Domain`'s `mark`,
`push_range`, `pop_range`, `start_range`, `end_range`,
`annotate.__enter__`/`__exit__` and `_call`, see `src/fastcall.rs`): every
shape of call answers the same with and without a tool, and wrong ones
raise the same `TypeError`s."""

from conftest import check, run

SHAPES = """
    import inspect
    import nvtxr as nvtx
    from nvtxr import _native
    nvtx.name_threads(False)

    d = nvtx.get_domain("hot")
    a = d.get_event_attributes(message="s")

    def show(label, call):
        try:
            print(label, "->", repr(call()))
        except TypeError as e:
            print(label, "-> TypeError:", e)

    show("push_range(a)", lambda: d.push_range(a))
    show("pop_range()", lambda: d.pop_range())
    show("push_range(None)", lambda: d.push_range(None))
    show("pop_range()", lambda: d.pop_range())
    show("push_range(message=, color=)", lambda: d.push_range(message="m", color="red"))
    show("pop_range()", lambda: d.pop_range())
    show("push_range(attributes=a)", lambda: d.push_range(attributes=a))
    show("pop_range()", lambda: d.pop_range())
    show("mark(a)", lambda: d.mark(a))
    show("mark()", lambda: d.mark())
    show("mark(None, message=)", lambda: d.mark(None, message="q"))
    rid = d.start_range(a)
    show("end_range(id)", lambda: d.end_range(rid))
    rid = d.start_range(message="kw")
    show("end_range(range_id=id)", lambda: d.end_range(range_id=rid))

    show("push_range(1)", lambda: d.push_range(1))
    show("push_range(a, a)", lambda: d.push_range(a, a))
    show("push_range(foo=)", lambda: d.push_range(foo=1))
    show("push_range(a, attributes=a)", lambda: d.push_range(a, attributes=a))
    show("end_range()", lambda: d.end_range())
    show("end_range(None)", lambda: d.end_range(None))
    show("end_range('x')", lambda: d.end_range("x"))
    show("pop_range(1)", lambda: d.pop_range(1))
    show("Domain.push_range(3)", lambda: nvtx.Domain.push_range(3))

    r = nvtx.annotate("w")
    with r as entered:
        print("enter returns the annotate:", entered is r)
    show("__exit__()", lambda: r.__exit__())
    show("__exit__(1, 2, 3, 4)", lambda: r.__exit__(1, 2, 3, 4))
    show("__exit__(x=)", lambda: r.__exit__(x=1))

    @nvtx.annotate("f")
    def f(x, y=2):
        return x + y

    show("f(1)", lambda: f(1))
    show("f(1, y=5)", lambda: f(1, y=5))
    show("_call(1, f, ())", lambda: _native._call(1, f, ()))
    show("_call(a, f)", lambda: _native._call(a, f))
    show("_call(a, f, [])", lambda: _native._call(a, f, []))

    def boom():
        raise ValueError("inside")

    try:
        _native._call(a, boom, ())
    except ValueError as e:
        print("raised through _call:", e)

    for method in (nvtx.Domain.push_range, nvtx.Domain.pop_range, nvtx.Domain.end_range, _native._call):
        print(method.__name__, inspect.signature(method))
"""

# What both runs print, in order; `{depth}` and `{id}` differ by tool.
EXPECTED = """\
push_range(a) -> {depth0}
pop_range() -> {depth0}
push_range(None) -> {depth0}
pop_range() -> {depth0}
push_range(message=, color=) -> {depth0}
pop_range() -> {depth0}
push_range(attributes=a) -> {depth0}
pop_range() -> {depth0}
mark(a) -> None
mark() -> None
mark(None, message=) -> None
end_range(id) -> None
end_range(range_id=id) -> None
push_range(1) -> TypeError: argument 'attributes': 'int' object cannot be cast as 'EventAttributes'
push_range(a, a) -> TypeError: push_range() takes from 0 to 1 positional arguments but 2 were given
push_range(foo=) -> TypeError: push_range() got an unexpected keyword argument 'foo'
push_range(a, attributes=a) -> TypeError: push_range() got multiple values for argument 'attributes'
end_range() -> TypeError: end_range() missing required argument 'range_id' (pos 1)
end_range(None) -> TypeError: argument 'range_id': 'NoneType' object cannot be interpreted as an integer
end_range('x') -> TypeError: argument 'range_id': 'str' object cannot be interpreted as an integer
pop_range(1) -> TypeError: Domain.pop_range() takes no arguments (1 given)
Domain.push_range(3) -> TypeError: descriptor 'push_range' for 'nvtxr.Domain' objects doesn't apply to a 'int' object
enter returns the annotate: True
__exit__() -> False
__exit__(1, 2, 3, 4) -> TypeError: __exit__() takes from 0 to 3 positional arguments but 4 were given
__exit__(x=) -> TypeError: __exit__() got an unexpected keyword argument 'x'
f(1) -> 3
f(1, y=5) -> 6
_call(1, f, ()) -> TypeError: argument 'a': 'int' object cannot be cast as 'EventAttributes'
_call(a, f) -> TypeError: _call() missing required argument 'args' (pos 3)
_call(a, f, []) -> TypeError: argument 'args': 'list' object cannot be cast as 'tuple'
raised through _call: inside
push_range (self, /, attributes=None, *, message=None, color=None, category=None, payload=None)
pop_range (self, /)
end_range (self, /, range_id)
_call (a, func, args, kwargs=None, _spec=None)
"""


def test_every_shape_answers_the_same_with_and_without_a_tool():
    process, calls = run(SHAPES, tool=None)
    check(process)
    assert process.stdout == EXPECTED.format(depth0=-2)
    assert process.stderr == ""
    assert calls == []

    process, calls = run(SHAPES)
    check(process)
    assert process.stdout == EXPECTED.format(depth0=0)
    assert process.stderr == ""
    # Each call that was not refused reached the tool, once, in order.
    events = [c for c in calls if not c.startswith(("Initialize", "ExtInit", "DomainIsEnabled"))]
    assert events == [
        'DomainCreateA "hot"',
        'DomainRegisterStringA domain="hot" "s"',
        'DomainRangePushEx domain="hot" {msg=reg:"s" color=0x000000ff} -> 0',
        'DomainRangePop domain="hot" -> 0',
        'DomainRangePushEx domain="hot" {color=0x000000ff} -> 0',
        'DomainRangePop domain="hot" -> 0',
        'DomainRegisterStringA domain="hot" "m"',
        'DomainRangePushEx domain="hot" {msg=reg:"m" color=0x00ff0000} -> 0',
        'DomainRangePop domain="hot" -> 0',
        'DomainRangePushEx domain="hot" {msg=reg:"s" color=0x000000ff} -> 0',
        'DomainRangePop domain="hot" -> 0',
        'DomainMarkEx domain="hot" {msg=reg:"s" color=0x000000ff}',
        'DomainMarkEx domain="hot" {color=0x000000ff}',
        'DomainRegisterStringA domain="hot" "q"',
        'DomainMarkEx domain="hot" {msg=reg:"q" color=0x000000ff}',
        'DomainRangeStartEx domain="hot" {msg=reg:"s" color=0x000000ff} -> 1',
        'DomainRangeEnd domain="hot" 1',
        'DomainRegisterStringA domain="hot" "kw"',
        'DomainRangeStartEx domain="hot" {msg=reg:"kw" color=0x000000ff} -> 2',
        'DomainRangeEnd domain="hot" 2',
        'DomainRegisterStringA default "w"',
        'DomainRangePushEx default {msg=reg:"w" color=0x000000ff} -> 0',
        'DomainRangePop default -> 0',
        # `__exit__()` by hand after the `with`: nothing open.
        'DomainRangePop default -> -1',
        'DomainRegisterStringA default "f"',
        'DomainRangePushEx default {msg=reg:"f" color=0x000000ff} -> 0',
        'DomainRangePop default -> 0',
        'DomainRangePushEx default {msg=reg:"f" color=0x000000ff} -> 0',
        'DomainRangePop default -> 0',
        'DomainRangePushEx domain="hot" {msg=reg:"s" color=0x000000ff} -> 0',
        'DomainRangePop domain="hot" -> 0',
    ]


MODULE_SHAPES = """
    import inspect
    import nvtxr as nvtx
    nvtx.name_threads(False)

    def show(label, call):
        try:
            print(label, "->", repr(call()))
        except TypeError as e:
            print(label, "-> TypeError:", e)

    show("push_range('r')", lambda: nvtx.push_range("r"))
    show("pop_range()", lambda: nvtx.pop_range())
    show("push_range('r', 'red', 'hot')", lambda: nvtx.push_range("r", "red", "hot"))
    show("pop_range('hot')", lambda: nvtx.pop_range("hot"))
    show("push_range(message=, domain=)", lambda: nvtx.push_range(message="k", domain="hot"))
    show("pop_range(domain=)", lambda: nvtx.pop_range(domain="hot"))
    show("push_range(**dict)", lambda: nvtx.push_range(**{"message": "d", "color": "green"}))
    show("pop_range()", lambda: nvtx.pop_range())
    show("mark('m', color=)", lambda: nvtx.mark("m", color="green"))
    show("mark()", lambda: nvtx.mark())
    r = nvtx.start_range("s", domain="hot")
    print("start_range gives", type(r).__name__)
    show("end_range(r)", lambda: nvtx.end_range(r))
    show("end_range(None)", lambda: nvtx.end_range(None))

    show("push_range(1, 2, 3, 4, 5, 6)", lambda: nvtx.push_range(1, 2, 3, 4, 5, 6))
    show("push_range(foo=)", lambda: nvtx.push_range(foo=1))
    show("push_range('a', message=)", lambda: nvtx.push_range("a", message="b"))
    show("push_range(domain=5)", lambda: nvtx.push_range("x", domain=5))
    show("mark('x', None, 5)", lambda: nvtx.mark("x", None, 5))
    show("pop_range(5)", lambda: nvtx.pop_range(5))
    show("pop_range('a', 'b')", lambda: nvtx.pop_range("a", "b"))
    show("end_range()", lambda: nvtx.end_range())

    for function in (nvtx.push_range, nvtx.pop_range, nvtx.mark, nvtx.start_range, nvtx.end_range):
        print(function.__name__, inspect.signature(function))
"""

MODULE_EXPECTED = """\
push_range('r') -> {depth0}
pop_range() -> {depth0}
push_range('r', 'red', 'hot') -> {depth0}
pop_range('hot') -> {depth0}
push_range(message=, domain=) -> {depth0}
pop_range(domain=) -> {depth0}
push_range(**dict) -> {depth0}
pop_range() -> {depth0}
mark('m', color=) -> None
mark() -> None
start_range gives {started}
end_range(r) -> None
end_range(None) -> None
push_range(1, 2, 3, 4, 5, 6) -> TypeError: push_range() takes from 0 to 5 positional arguments but 6 were given
push_range(foo=) -> TypeError: push_range() got an unexpected keyword argument 'foo'
push_range('a', message=) -> TypeError: push_range() got multiple values for argument 'message'
push_range(domain=5) -> TypeError: argument 'domain': 'int' object cannot be cast as 'str'
mark('x', None, 5) -> TypeError: argument 'domain': 'int' object cannot be cast as 'str'
pop_range(5) -> TypeError: argument 'domain': 'int' object cannot be cast as 'str'
pop_range('a', 'b') -> TypeError: pop_range() takes from 0 to 1 positional arguments but 2 were given
end_range() -> TypeError: end_range() missing required argument 'range_id' (pos 1)
push_range (message=None, color=None, domain=None, category=None, payload=None)
pop_range (domain=None)
mark (message=None, color=None, domain=None, category=None, payload=None)
start_range (message=None, color=None, domain=None, category=None, payload=None)
end_range (range_id)
"""


def test_the_module_functions_answer_the_same_with_and_without_a_tool():
    process, calls = run(MODULE_SHAPES, tool=None)
    check(process)
    assert process.stdout == MODULE_EXPECTED.format(depth0=-2, started="NoneType")
    assert process.stderr == ""
    assert calls == []

    process, calls = run(MODULE_SHAPES)
    check(process)
    assert process.stdout == MODULE_EXPECTED.format(depth0=0, started="tuple")
    assert process.stderr == ""
    events = [c for c in calls if not c.startswith(("Initialize", "ExtInit", "DomainIsEnabled"))]
    # The refused calls sent nothing; the others reached the tool once each.
    assert events == [
        'DomainRegisterStringA default "r"',
        'DomainRangePushEx default {msg=reg:"r" color=0x000000ff} -> 0',
        "DomainRangePop default -> 0",
        'DomainCreateA "hot"',
        'DomainRegisterStringA domain="hot" "r"',
        'DomainRangePushEx domain="hot" {msg=reg:"r" color=0x00ff0000} -> 0',
        'DomainRangePop domain="hot" -> 0',
        'DomainRegisterStringA domain="hot" "k"',
        'DomainRangePushEx domain="hot" {msg=reg:"k" color=0x000000ff} -> 0',
        'DomainRangePop domain="hot" -> 0',
        'DomainRegisterStringA default "d"',
        'DomainRangePushEx default {msg=reg:"d" color=0x00008000} -> 0',
        "DomainRangePop default -> 0",
        'DomainRegisterStringA default "m"',
        'DomainMarkEx default {msg=reg:"m" color=0x00008000}',
        "DomainMarkEx default {color=0x000000ff}",
        'DomainRegisterStringA domain="hot" "s"',
        'DomainRangeStartEx domain="hot" {msg=reg:"s" color=0x000000ff} -> 1',
        'DomainRangeEnd domain="hot" 1',
    ]
