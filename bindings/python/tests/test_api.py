"""Exact calls for nvtxr's own behaviour: async functions, generators,
threads, exceptions, torch-style and nvtxpy-style calls, no tool."""

from conftest import check, run


def test_two_interleaved_coroutines_give_two_whole_ranges():
    process, calls = run(
        """
        import asyncio
        import nvtxr as nvtx
        nvtx.name_threads(False)

        @nvtx.annotate()
        async def fetch(n):
            nvtx.mark(f"fetch {n} started")
            await asyncio.sleep(0.05)
            nvtx.mark(f"fetch {n} done")

        async def main():
            await asyncio.gather(fetch(1), fetch(2))

        asyncio.run(main())
        """
    )
    check(process)
    assert calls == [
        "Initialize",
        # As NVIDIA's package: the domain's first use asks whether it is enabled.
        "ExtInit module=2 compat=0x0104 version=3 size=40 segments=1 segment=0 slots=63 types=28x4",
        "DomainIsEnabled default",
        'DomainRegisterStringA default "fetch"',
        'DomainRangeStartEx default {msg=reg:"fetch" color=0x000000ff} -> 1',
        'DomainRegisterStringA default "fetch 1 started"',
        'DomainMarkEx default {msg=reg:"fetch 1 started" color=0x000000ff}',
        'DomainRangeStartEx default {msg=reg:"fetch" color=0x000000ff} -> 2',
        'DomainRegisterStringA default "fetch 2 started"',
        'DomainMarkEx default {msg=reg:"fetch 2 started" color=0x000000ff}',
        'DomainRegisterStringA default "fetch 1 done"',
        'DomainMarkEx default {msg=reg:"fetch 1 done" color=0x000000ff}',
        "DomainRangeEnd default 1",
        'DomainRegisterStringA default "fetch 2 done"',
        'DomainMarkEx default {msg=reg:"fetch 2 done" color=0x000000ff}',
        "DomainRangeEnd default 2",
    ]


def test_a_generator_is_one_range_from_first_next_to_close():
    process, calls = run(
        """
        import nvtxr as nvtx
        nvtx.name_threads(False)

        class Loader:
            @nvtx.annotate(color="green")
            def batches(self):
                for i in range(10):
                    yield i

        it = Loader().batches()
        nvtx.mark("created")
        print(next(it), next(it))
        it.close()
        nvtx.mark("closed")
        """
    )
    check(process)
    assert process.stdout == "0 1\n"
    assert calls == [
        "Initialize",
        # As NVIDIA's package: the domain's first use asks whether it is enabled.
        "ExtInit module=2 compat=0x0104 version=3 size=40 segments=1 segment=0 slots=63 types=28x4",
        "DomainIsEnabled default",
        'DomainRegisterStringA default "batches"',
        'DomainRegisterStringA default "created"',
        'DomainMarkEx default {msg=reg:"created" color=0x000000ff}',
        'DomainRangeStartEx default {msg=reg:"batches" color=0x00008000} -> 1',
        "DomainRangeEnd default 1",
        'DomainRegisterStringA default "closed"',
        'DomainMarkEx default {msg=reg:"closed" color=0x000000ff}',
    ]


def range_calls(calls):
    """The tool's range calls, without their attributes."""
    return [c.split(" {")[0] for c in calls if "Range" in c]


def test_an_exception_inside_annotate_closes_the_range():
    process, calls = run(
        """
        import nvtxr as nvtx
        nvtx.name_threads(False)

        @nvtx.annotate("fails")
        def fails():
            raise ValueError("boom")

        try:
            with nvtx.annotate("outer"):
                fails()
        except ValueError as e:
            print("caught", e)
        """
    )
    check(process)
    assert process.stdout == "caught boom\n"
    assert range_calls(calls) == [
        "DomainRangePushEx default",
        "DomainRangePushEx default",
        "DomainRangePop default -> 1",
        "DomainRangePop default -> 0",
    ]


def test_annotate_entered_and_exited_by_hand_with_or_without_exception_arguments():
    process, calls = run(
        """
        import nvtxr as nvtx
        nvtx.name_threads(False)

        a = nvtx.annotate("by hand")
        a.__enter__()
        print(a.__exit__())
        a.__enter__()
        print(a.__exit__(ValueError, ValueError("x"), None))
        try:
            a.__exit__(1, 2, 3, 4)
        except TypeError:
            print("four arguments refused")
        """
    )
    check(process)
    assert process.stdout == "False\nFalse\nfour arguments refused\n"
    assert range_calls(calls) == [
        "DomainRangePushEx default",
        "DomainRangePop default -> 0",
        "DomainRangePushEx default",
        "DomainRangePop default -> 0",
    ]


def test_each_python_thread_names_its_os_thread_once():
    process, calls = run(
        """
        import threading
        import nvtxr as nvtx

        def work():
            for _ in range(3):
                nvtx.mark("tick")

        threads = [threading.Thread(target=work, name=f"loader-{i}") for i in range(2)]
        for t in threads:
            t.start()
            t.join()
        nvtx.mark("main")
        """
    )
    check(process)
    names = [c for c in calls if c.startswith("NameOsThreadA")]
    assert names == [
        'NameOsThreadA tid=self "loader-0"',
        'NameOsThreadA tid=self "loader-1"',
        'NameOsThreadA tid=self "MainThread"',
    ]
    assert len([c for c in calls if '"tick"' in c and c.startswith("DomainMarkEx")]) == 6


def test_torch_style_calls_are_pytorchs_text_calls():
    code = """
        import nvtxr
        import nvtxr.torch as nvtx
        nvtxr.name_threads(False)
        print(nvtx.range_push("outer"), nvtx.range_push("inner"))
        print(nvtx.range_pop(), nvtx.range_pop())
        r = nvtx.range_start("async")
        nvtx.range_end(r)
        nvtx.mark("instant")
        with nvtx.range("step {}", 3):
            pass
        """
    process, calls = run(code)
    check(process)
    assert process.stdout == "0 1\n1 0\n"
    assert calls == [
        'RangePushA "outer" -> 0',
        'RangePushA "inner" -> 1',
        "RangePop -> 1",
        "RangePop -> 0",
        'RangeStartA "async" -> 1',
        "RangeEnd 1",
        'MarkA "instant"',
        'RangePushA "step 3" -> 0',
        "RangePop -> 0",
    ]
    # Without CUDA, without a tool: no exception, NVTX's no-tool values.
    process, calls = run(code, tool=None)
    check(process)
    assert process.stdout == "-2 -2\n-2 -2\n" and calls == []


def test_nvtxpy_style_ranges_count_and_time_without_a_tool():
    process, calls = run(
        """
        import time
        import nvtxr
        import nvtxr.nvtxpy as nvtxpy

        @nvtxpy.profiled("decorated")
        def work():
            time.sleep(0.01)

        for _ in range(3):
            with nvtxpy.profile_range("step", color=nvtxpy.colors.green):
                work()
        stats = nvtxr.stats()
        print(stats["step"][0], stats["decorated"][0], stats["step"][1] >= 0.03)
        """,
        tool=None,
    )
    check(process)
    assert process.stdout == "3 3 True\n"
    assert calls == []


def test_no_tool_and_a_missing_tool_never_raise():
    code = """
        import nvtxr as nvtx
        with nvtx.annotate("x", color="no such color at all"):
            pass
        @nvtx.annotate()
        def f():
            return 5
        print(nvtx.enabled(), nvtx.tool_attached(), f(), nvtx.start_range("r"), nvtx.push_range("p"), nvtx.load_error() is None)
        nvtx.end_range(None)
        nvtx.mark("m", payload=object())
        """
    process, _ = run(code, tool=None)
    check(process)
    assert process.stdout == "True False 5 None -2 True\n"
    assert process.stderr == ""
    process, _ = run(code, tool="/nonexistent/libtool.so")
    check(process)
    assert process.stdout == "True False 5 None -2 False\n"
    assert process.stderr.count("\n") == 1
    assert process.stderr.startswith("nvtxr: could not load NVTX tool \"/nonexistent/libtool.so\"")


def test_bad_input_with_a_tool_is_a_warning_and_the_event_is_still_sent():
    # Never an exception: without a tool nothing is read, and a program
    # must not fail only when it is profiled (see test_trust.py).
    process, calls = run(
        """
        import warnings
        import nvtxr as nvtx
        nvtx.name_threads(False)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            for bad in ({"color": "no such color"}, {"category": 1.5}, {"color": 2**40}):
                nvtx.mark("m", **bad)
            nvtx.mark("with payload", payload=object())
            print(len(w), "unsupported payload" in str(w[-1].message))
        """
    )
    check(process)
    assert process.stdout == "4 True\n"
    assert [c for c in calls if c.startswith("DomainMarkEx")] == [
        'DomainMarkEx default {msg=reg:"m" color=0x000000ff}',
        'DomainMarkEx default {msg=reg:"m" color=0x000000ff}',
        'DomainMarkEx default {msg=reg:"m" color=0x000000ff}',
        'DomainMarkEx default {msg=reg:"with payload" color=0x000000ff}',
    ]


def test_formatted_messages_keep_the_string_cache_bounded():
    process, calls = run(
        """
        import nvtxr as nvtx
        nvtx.name_threads(False)
        d = nvtx.get_domain("many")
        for i in range(70000):
            d.mark(message=f"item {i}")
        """
    )
    check(process)
    registered = [c for c in calls if c.startswith("DomainRegisterStringA")]
    assert len(registered) == 65536
    assert calls[-1] == 'DomainMarkEx domain="many" {msg="item 69999" color=0x000000ff}'


def test_a_thread_is_named_at_its_first_call_of_any_kind_and_again_after_fork():
    process, calls = run(
        """
        import os, threading
        import nvtxr as nvtx

        rid = nvtx.start_range("handed over")
        t = threading.Thread(target=nvtx.end_range, args=(rid,), name="ender")
        t.start()
        t.join()
        pid = os.fork()
        if pid == 0:
            nvtx.mark("in the child")
            os._exit(0)
        os.waitpid(pid, 0)
        """
    )
    check(process)
    names = [c for c in calls if c.startswith("NameOsThreadA")]
    # The main thread at its first call, the thread that only ended a range,
    # and the forked child's main thread at its first call.
    assert names == [
        'NameOsThreadA tid=self "MainThread"',
        'NameOsThreadA tid=self "ender"',
        'NameOsThreadA tid=self "MainThread"',
    ], calls


def test_counters_as_nvidias_package_makes_them():
    process, calls = run(
        """
        import warnings
        import nvtxr as nvtx
        nvtx.name_threads(False)
        d = nvtx.get_domain("Training")
        loss = d.get_counter("loss", float, semantics=nvtx.CounterSemantics(min=0.0))
        steps = d.get_counter("steps", int)
        assert isinstance(loss, nvtx.Float64Counter) and isinstance(steps, nvtx.Int64Counter)
        assert d.get_counter("loss", float, semantics=nvtx.CounterSemantics(min=0.0)) is loss, "made once"
        loss.sample(0.5)
        steps.sample(3)
        steps.sample_no_value(nvtx.CounterNoValueReason.UNAVAILABLE)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            odd = d.get_counter("odd", complex)
        assert isinstance(odd, nvtx.Float64Counter), odd
        assert "not supported" in str(caught[0].message)
        """
    )
    check(process)
    counters = [c for c in calls if c.startswith("Counter")]
    tool_clock = "time(v1 domain=1)"
    assert counters == [
        'CounterRegister domain="Training" name="loss" schema=44 description=NULL scope=0 '
        f"semantics=[{tool_clock}, counter(v2 flags=0x114 unit=NULL scale=1/1 limits=3 min=0x0)]",
        f'CounterRegister domain="Training" name="steps" schema=17 description=NULL scope=0 semantics=[{tool_clock}]',
        'CounterSampleFloat64 domain="Training" counter=4294967303 value=0.5',
        'CounterSampleInt64 domain="Training" counter=4294967303 value=3',
        'CounterSampleNoValue domain="Training" counter=4294967303 reason=2',
        f'CounterRegister domain="Training" name="odd" schema=44 description=NULL scope=0 semantics=[{tool_clock}]',
    ], calls


def test_counters_without_a_tool_do_nothing():
    process, calls = run(
        """
        import nvtxr as nvtx
        c = nvtx.get_domain("x").get_counter("n", int)
        c.sample(1)
        c.sample_no_value(nvtx.CounterNoValueReason.ZERO)
        print(c)
        """,
        tool=None,
    )
    check(process)
    assert "<Int64Counter 'n'>" in process.stdout


def test_nvtx_disable_turns_every_call_off_as_nvidias_package_does():
    process, calls = run(
        """
        import nvtxr as nvtx
        with nvtx.annotate("x"):
            nvtx.mark("m", domain="d")
        nvtx.get_domain("d").get_counter("c", int).sample(1)
        print(nvtx.enabled(), nvtx.tool_attached(), nvtx.push_range("p"))
        """,
        env={"NVTX_DISABLE": "1"},
    )
    check(process)
    assert process.stdout == "False False -2\n"
    assert [c for c in calls if not c.startswith("init ")] == [], "nothing reached the tool"
    process, _ = run("import nvtxr as nvtx\nprint(nvtx.enabled())\n", env={"NVTX_DISABLE": ""})
    assert process.stdout == "True\n", "an empty NVTX_DISABLE does not disable"


def test_with_annotate_across_await_gives_each_task_its_own_range():
    # Task a holds its range 10 ms, task b 40 ms, concurrently on one thread:
    # push/pop ranges would close each other's (a's pop closing b's range).
    process, calls = run(
        """
        import asyncio
        import nvtxr as nvtx
        nvtx.name_threads(False)
        shared = nvtx.annotate("shared")

        async def task(name, seconds):
            with nvtx.annotate(name):
                await asyncio.sleep(seconds)
            with shared:
                await asyncio.sleep(seconds / 10)

        async def main():
            await asyncio.gather(task("a", 0.01), task("b", 0.04))

        asyncio.run(main())
        with nvtx.annotate("outside a loop"):
            pass
        """
    )
    check(process)
    events = [c for c in calls if "Range" in c]
    assert events == [
        'DomainRangeStartEx default {msg=reg:"a" color=0x000000ff} -> 1',
        'DomainRangeStartEx default {msg=reg:"b" color=0x000000ff} -> 2',
        "DomainRangeEnd default 1",
        'DomainRangeStartEx default {msg=reg:"shared" color=0x000000ff} -> 3',
        "DomainRangeEnd default 3",
        "DomainRangeEnd default 2",
        'DomainRangeStartEx default {msg=reg:"shared" color=0x000000ff} -> 4',
        "DomainRangeEnd default 4",
        'DomainRangePushEx default {msg=reg:"outside a loop" color=0x000000ff} -> 0',
        "DomainRangePop default -> 0",
    ], calls


def test_annotate_pickles_as_its_constructor_call():
    # As NVIDIA's annotate: a pickled annotate (a multiprocessing argument,
    # an attribute of a pickled object) is made again with the same arguments.
    process, calls = run(
        """
        import pickle
        import nvtxr as nvtx
        nvtx.name_threads(False)
        a = pickle.loads(pickle.dumps(nvtx.annotate("pickled", color="red", domain="d", payload=3)))
        with a:
            pass
        b = pickle.loads(pickle.dumps(nvtx.annotate()))
        print(type(a).__name__, type(b).__name__)
        """
    )
    check(process)
    assert process.stdout == "annotate annotate\n"
    assert [c for c in calls if c.startswith("DomainRange")] == [
        'DomainRangePushEx domain="d" {msg=reg:"pickled" color=0x00ff0000 payload=i64:3} -> 0',
        'DomainRangePop domain="d" -> 0',
    ]
    # With no tool, the arguments are kept all the same.
    process, _ = run(
        """
        import pickle
        import nvtxr as nvtx
        a = pickle.loads(pickle.dumps(nvtx.annotate("x", color="red")))
        print(a.__reduce__()[1])
        """,
        tool=None,
    )
    check(process)
    assert process.stdout == "('x', 'red', None, None, None)\n"
