"""Annotating never changes what a program sees, and ranges always balance:
generators and async generators delegated in full, bad arguments never an
error (with or without a tool), push and pop in one NVTX family, and the
profiler's ranges balanced on every thread whatever it interrupts."""

import sys

import pytest

from conftest import check, installed_path, interpreter, run


def balance(calls):
    """Checks pushes and pops pair up in order (never a pop with nothing
    open); returns how many ranges there were."""
    depth = pushes = 0
    for c in calls:
        if "RangePush" in c:
            depth += 1
            pushes += 1
        elif "RangePop" in c:
            depth -= 1
            assert depth >= 0, f"a pop with nothing open: {calls}"
    assert depth == 0, f"{depth} ranges never popped: {calls}"
    return pushes


DELEGATION = """
import asyncio
import nvtxr as nvtx

def trace(log):
    def numbers():
        try:
            got = yield 1
            log.append(f"sent {got}")
            try:
                yield 2
            except ValueError as e:
                log.append(f"caught {e}")
                got = yield 3
                log.append(f"sent {got}")
            yield 4
        finally:
            log.append("closed")
    return numbers

def atrace(log):
    async def numbers():
        try:
            got = yield 1
            log.append(f"sent {got}")
            try:
                yield 2
            except ValueError as e:
                log.append(f"caught {e}")
                got = yield 3
                log.append(f"sent {got}")
            yield 4
        finally:
            log.append("closed")
    return numbers

def drive(make):
    log = []
    g = make(log)()
    log.append(next(g))
    log.append(g.send("a"))
    log.append(g.throw(ValueError("v")))
    log.append(g.send("b"))
    g.close()
    return log

async def adrive(make):
    log = []
    g = make(log)()
    log.append(await g.asend(None))
    log.append(await g.asend("a"))
    log.append(await g.athrow(ValueError("v")))
    log.append(await g.asend("b"))
    await g.aclose()
    return log

plain = (drive(trace), asyncio.run(adrive(atrace)))
wrapped = (
    drive(lambda log: nvtx.annotate("g")(trace(log))),
    asyncio.run(adrive(lambda log: nvtx.annotate("ag")(atrace(log)))),
)
print(plain)
assert plain == wrapped, (plain, wrapped)
"""


@pytest.mark.parametrize("tool", ["event-log", None])
def test_annotated_generators_and_async_generators_behave_as_the_undecorated_ones(tool):
    process, calls = run(DELEGATION, tool=tool)
    check(process)
    expected = "[1, 'sent a', 2, 'caught v', 3, 'sent b', 4, 'closed']"
    assert process.stdout.strip() == f"({expected}, {expected})"
    if tool:
        starts = [c for c in calls if "RangeStart" in c]
        ends = [c for c in calls if "RangeEnd" in c]
        assert len(starts) == len(ends) == 2, calls


BAD_ARGUMENTS = """
import functools, warnings
import nvtxr as nvtx
nvtx.name_threads(False)
warnings.simplefilter("always")
with warnings.catch_warnings(record=True) as caught:
    with nvtx.annotate(message=1):
        pass
    with nvtx.annotate("bad color", color="no such color"):
        pass
    nvtx.mark("bad category", category=object())
    nvtx.mark("huge payload", payload=2**70)
    nvtx.mark("odd payload", payload="3")
    nvtx.end_range("bogus")
    part = nvtx.annotate()(functools.partial(int, base=2))
    print(part("101"))
print(len(caught))
for w in caught:
    print(w.message)
"""


def test_bad_arguments_never_raise_with_or_without_a_tool():
    process, calls = run(BAD_ARGUMENTS, tool=None)
    check(process)
    # Without a tool nothing is read, so nothing is wrong.
    assert process.stdout.splitlines() == ["5", "0"]
    process, calls = run(BAD_ARGUMENTS)
    check(process)
    lines = process.stdout.splitlines()
    assert lines[:2] == ["5", "5"], lines
    assert lines[2:] == [
        'nvtxr: invalid color "no such color": use an ARGB int, "#RRGGBB" or one of '
        + lines[2].split("one of ")[1],
        lines[3],
        "nvtxr: payload 1180591620717411303424 is out of 64-bit range; the event is sent without it",
        "nvtxr: unsupported payload of type str (int, float, a NumPy array or scalar, list, tuple,"
        " range or bytes); the event is sent without it",
        "nvtxr: end_range('bogus'): not a range from start_range; ignored",
    ]
    assert lines[2].endswith("; the event is sent with the default color")
    assert lines[3].startswith("nvtxr: category must be a str or a 32-bit int, not <object object")
    assert 'DomainRangePushEx default {msg=reg:"1" color=0x000000ff} -> 0' in calls
    assert any('msg=reg:"int"' in c for c in calls), calls
    balance(calls)


def test_push_and_pop_go_through_one_family():
    process, calls = run(
        """
        import nvtxr as nvtx
        nvtx.name_threads(False)
        with nvtx.annotate():            # no message: attributes only
            pass
        nvtx.push_range()
        nvtx.pop_range()
        nvtx.end_range(nvtx.start_range(color="red"))
        nvtx.push_range("text")
        nvtx.pop_range()
        import nvtxr.torch as t          # torch.cuda.nvtx's calls: the A family
        t.range_push("torch")
        t.range_pop()
        """
    )
    check(process)
    domain_family = [c for c in calls if c.startswith("Domain") and "Register" not in c]
    assert domain_family == [
        "DomainIsEnabled default",
        "DomainRangePushEx default {color=0x000000ff} -> 0",
        "DomainRangePop default -> 0",
        "DomainRangePushEx default {color=0x000000ff} -> 0",
        "DomainRangePop default -> 0",
        "DomainRangeStartEx default {color=0x00ff0000} -> 1",
        "DomainRangeEnd default 1",
        'DomainRangePushEx default {msg=reg:"text" color=0x000000ff} -> 0',
        "DomainRangePop default -> 0",
    ]
    assert [c for c in calls if c.startswith("Range")] == [
        'RangePushA "torch" -> 0',
        "RangePop -> 0",
    ]


GENERATORS = {
    "pkg/__init__.py": "",
    "pkg/gens.py": """
import asyncio

def numbers():
    yield 1
    yield 2
    yield 3

def closers():
    for x in numbers():
        break
    g = numbers(); next(g); g.close()
    g = numbers(); next(g)
    try:
        g.throw(ValueError("in"))
    except ValueError:
        pass
    g = numbers()
    try:
        g.throw(KeyError("before the first next"))
    except KeyError:
        pass

async def sleeper():
    await asyncio.sleep(10)

async def cancelling():
    t = asyncio.ensure_future(sleeper())
    await asyncio.sleep(0.01)
    t.cancel()
    try:
        await t
    except asyncio.CancelledError:
        pass

def run_all():
    closers()
    asyncio.run(cancelling())
""",
    "pkg/hold.py": """
def hold(entered, go):
    if entered is not None:
        entered.set()
        go.wait()
    return 1
""",
}


def python_for(version):
    same = sys.version_info[:2] == tuple(map(int, version.split(".")))
    return sys.executable if same else interpreter(version)


def write_package(tmp_path):
    for name, text in GENERATORS.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)


@pytest.mark.parametrize("version", ["3.11", "3.12", "3.13"])
def test_profile_balances_generators_closed_early_thrown_into_and_cancelled(version, tmp_path):
    write_package(tmp_path)
    process, calls = run(
        "import nvtxr\nnvtxr.name_threads(False)\nimport pkg.gens\npkg.gens.run_all()\n",
        python=python_for(version),
        python_args=["-m", "nvtxr.profile", "--include", "pkg"],
        env={"PYTHONPATH": f"{tmp_path}:{installed_path()}"},
    )
    check(process)
    assert balance(calls) > 10


@pytest.mark.parametrize("version", ["3.11", "3.12", "3.13"])
def test_profile_started_while_another_thread_runs_a_function_stays_balanced(version, tmp_path):
    write_package(tmp_path)
    process, calls = run(
        """
        import threading
        import nvtxr, nvtxr.profile
        import pkg.hold
        nvtxr.name_threads(False)
        entered, go = threading.Event(), threading.Event()
        t = threading.Thread(target=pkg.hold.hold, args=(entered, go))
        t.start()
        entered.wait()
        nvtxr.profile.start(["pkg"])
        go.set()          # its return comes after start(): no push to pop
        t.join()
        for _ in range(3):
            pkg.hold.hold(None, None)
        nvtxr.profile.stop()
        nvtxr.profile.start(["pkg"])   # a second window starts afresh
        for _ in range(2):
            pkg.hold.hold(None, None)
        nvtxr.profile.stop()
        """,
        python=python_for(version),
        env={"PYTHONPATH": f"{tmp_path}:{installed_path()}"},
    )
    check(process)
    assert balance(calls) == 5
    assert [c for c in calls if "hold" in c and "Push" in c] == [
        'DomainRangePushEx default {msg=reg:"hold" color=0x000000ff} -> 0'
    ] * 5


LONE_SURROGATES = r"""
import warnings
import nvtxr as nvtx
bad = "file\udcff"  # as os.fsdecode gives an undecodable file name
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    for kw in ({"message": bad}, {"message": "m", "category": bad}, {"message": "m", "domain": bad}):
        nvtx.mark(**kw)
        nvtx.push_range(**kw)
        nvtx.pop_range(domain=kw.get("domain"))
        nvtx.end_range(nvtx.start_range(**kw))
        with nvtx.annotate(**kw):
            pass
print("ok", len(caught))
for w in caught:
    print(w.category.__name__, w.message)
"""


def test_text_that_is_not_unicode_passes_with_a_tool_as_without():
    process, _ = run(LONE_SURROGATES, tool=None)
    assert check(process).stdout.splitlines() == ["ok 0"]
    process, calls = run(LONE_SURROGATES)
    lines = check(process).stdout.splitlines()
    assert lines[0] == "ok 1", lines
    assert lines[1].startswith("UnicodeWarning nvtxr: text that is not valid Unicode"), lines
    # The event log writes a backslash as two.
    escaped = r"file\\udcff"
    assert sum(f'msg=reg:"{escaped}"' in c for c in calls) == 4, calls
    assert f'DomainCreateA "{escaped}"' in calls, calls
    assert f'DomainNameCategoryA default 1 "{escaped}"' in calls, calls
    balance(calls)


ATTRIBUTES = r"""
import nvtxr as nvtx
a = nvtx.annotate("step", color="red", domain="d", category=3, payload=7)
print(a.attributes.message.string, hex(a.attributes.color), a.attributes.category,
      a.attributes.payload, a.attributes.domain.name)
b = nvtx.annotate()
print(b.attributes.message, b.attributes.payload)
with a:
    pass
"""


@pytest.mark.parametrize("tool", [None, "event-log"])
def test_annotate_shows_its_attributes_as_nvidias_does(tool):
    process, calls = run(ATTRIBUTES, tool=tool)
    assert check(process).stdout.splitlines() == ["step 0xff0000 3 7 d", "None None"]
    if tool:
        assert any('msg=reg:"step"' in c for c in calls), calls


SUBINTERPRETER = r"""
try:
    import _interpreters as m
    run = getattr(m, "run_string", None) or m.exec
except ImportError:
    import _xxsubinterpreters as m
    run = m.run_string
sub = m.create()
run(sub, "try:\n    import nvtxr\n    print('imported')\nexcept ImportError as e:\n    print('refused:', e)\n")
import nvtxr
print("main imports", nvtxr.enabled())
"""


@pytest.mark.parametrize("version", ["3.12", "3.13"])
def test_a_subinterpreter_is_refused_and_the_main_interpreter_still_imports(version):
    python = interpreter(version)
    process, _ = run(SUBINTERPRETER, tool=None, python=python, env={"PYTHONPATH": installed_path()})
    lines = check(process).stdout.splitlines()
    assert lines[0].startswith("refused: nvtxr cannot be imported in a subinterpreter"), lines
    assert lines[1] == "main imports True", lines
