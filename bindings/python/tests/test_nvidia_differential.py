"""The same programs through NVIDIA's `nvtx` package and through
`import nvtxr as nvtx` reach the tool as the same calls (NVIDIA's package
also destroys its domains at exit; nvtxr keeps them: those lines aside)."""

import textwrap

import pytest

from conftest import artifact, check, run

PROGRAMS = {
    "documented": """
        import threading
        import nvtx

        @nvtx.annotate("decorated", color="green")
        def decorated():
            pass

        @nvtx.annotate(color="red", domain="my_domain")
        def func():
            pass

        with nvtx.annotate("outer", color="blue", domain="python", payload=7):
            for i in range(3):
                with nvtx.annotate("inner", color="red", domain="python", category="loop", payload=i):
                    decorated()
        func()
        for epoch in range(2):
            nvtx.mark("epoch_start", color="green", payload=epoch)
            nvtx.mark("validation", color="yellow", payload=epoch + 0.5)
        r = nvtx.start_range("data_pipeline", color="blue")
        nvtx.end_range(r)
        nvtx.push_range("my_code_range", domain="my_domain")
        nvtx.pop_range(domain="my_domain")
    """,
    "cross_thread_and_categories": """
        import threading
        import nvtx

        ranges = {}
        for task in range(3):
            ranges[task] = nvtx.start_range(f"background_task_{task}", color="orange", payload=task)

        def finish(task):
            nvtx.end_range(ranges[task])

        for task in (2, 0, 1):
            t = threading.Thread(target=finish, args=(task,))
            t.start()
            t.join()
        nvtx.mark("io", category="disk", domain="store")
        nvtx.mark("net", category="network", domain="store")
        nvtx.mark("io again", category="disk", domain="store")
        nvtx.mark("numbered", category=7, payload=-3)
    """,
    "counters": """
        import nvtx

        d = nvtx.get_domain("metrics")
        loss = d.get_counter(
            "loss",
            float,
            description="training loss",
            semantics=nvtx.CounterSemantics(
                unit="nats", min=0.0, max=10.0, interpolation=nvtx.CounterInterpolation.LINEAR
            ),
        )
        memory = d.get_counter(
            "memory",
            int,
            scope="/node/gpu0",
            semantics=nvtx.CounterSemantics(
                unit="bytes", min=0, unit_scale_numerator=1024, value_type=nvtx.CounterValueType.DELTA
            ),
        )
        signed = d.get_counter("signed", int, semantics=nvtx.CounterSemantics(min=-5, max=5))
        ticks = d.get_counter("ticks", int, time_domain=nvtx.TimestampType.CPU_CLOCK_GETTIME_MONOTONIC)
        loss.sample(0.5)
        memory.sample(1024)
        signed.sample(-3)
        ticks.sample(7)
    """,
    "domain_objects": """
        import nvtx

        domain = nvtx.get_domain("trainer")
        step = domain.get_registered_string("step")
        attrs = domain.get_event_attributes(message="step", color="purple", category="compute", payload=1.5)
        domain.mark(attrs)
        domain.push_range(attrs)
        domain.pop_range()
        rid = domain.start_range(message="span", color="cyan")
        domain.end_range(rid)
        # Attributes changed in place: by set_event_attributes (None clears),
        # and by keywords given beside them.
        domain.set_event_attributes(attrs, message="changed", payload=None, category="io")
        domain.mark(attrs)
        domain.mark(attrs, color="red", payload=3)
        domain.push_range(attrs)
        domain.pop_range()
        print(domain.get_category_id("compute"), step.string)
    """,
}


def as_nvidia(code):
    return textwrap.dedent(code)


def as_nvtxr(code):
    imports = "import nvtxr as nvtx\nnvtx.name_threads(False)\n"
    return as_nvidia(code).replace("import nvtx\n", imports, 1)


# With the domain disabled, "domain_objects" is not a valid program for
# NVIDIA's package (its disabled domain returns None for
# get_registered_string, which the program reads).
CASES = [
    (name, mode)
    for name in sorted(PROGRAMS)
    for mode in ["record", "ext-disabled"]
    if (name, mode) != ("domain_objects", "ext-disabled")
]


@pytest.mark.parametrize("name,mode", CASES)
def test_same_calls_as_nvidias_package(name, mode):
    """`mode`: the tool answers nvtxDomainIsEnabled yes (every event reaches
    it), or no (NVIDIA's package then sends a domain's events nowhere)."""
    nvidia_path = artifact("NVIDIA_PYTHON_NVTX")
    code = PROGRAMS[name]
    env = {"NVTXR_EVENT_LOG_MODE": mode}
    nvidia, nvidia_calls = run(as_nvidia(code), env={"PYTHONPATH": nvidia_path, **env})
    ours, our_calls = run(as_nvtxr(code), env=env)
    check(nvidia)
    check(ours)
    assert ours.stdout == nvidia.stdout
    # NVIDIA's counters module carries its own copy of NVTX's loader, which
    # initializes the tool again: one Initialize is the producer's.
    nvidia_calls = [
        c
        for n, c in enumerate(nvidia_calls)
        if not c.startswith("DomainDestroy") and (c != "Initialize" or "Initialize" not in nvidia_calls[:n])
    ]
    events = [c for c in our_calls if "Mark" in c or "Range" in c or "Counter" in c]
    if mode == "record":
        assert len(events) >= 5
    else:
        assert events == [], "a domain the tool disabled sends nothing"
    assert our_calls == nvidia_calls


ENUMS = [
    "BatchOrdering",
    "CounterInterpolation",
    "CounterNoValueReason",
    "CounterValueType",
    "EntryKind",
    "EventKind",
    "PayloadEntryType",
    "PredefinedScope",
    "TimestampType",
]


def test_nvidias_enums_have_the_same_members_and_values():
    """nvtxr's copies of NVIDIA's enums of NVTX numbers (`nvtxr._enums`)
    against NVIDIA's package: member for member."""
    nvidia = artifact("NVIDIA_PYTHON_NVTX")
    code = """
        import json, sys
        import {module} as nvtx
        print(json.dumps({{n: {{m.name: m.value for m in getattr(nvtx, n)}} for n in sys.argv[1:]}}))
    """
    outputs = []
    for module, env in [("nvtx", {"PYTHONPATH": nvidia}), ("nvtxr", {})]:
        process, _ = run(code.format(module=module), tool=None, env=env, args=ENUMS)
        check(process)
        outputs.append(process.stdout)
    assert outputs[0] == outputs[1]
    assert '"CURRENT_SW_THREAD": 22' in outputs[1]
