"""nvtxr's torch.cuda.nvtx-style calls inside torch.compile(fullgraph=True):
no graph break, and the tool receives exactly the calls eager code sends,
in order. Needs PyTorch from PyPI (bindings/python/test.sh installs it);
runs on the CPU."""

import importlib.util
import os

import pytest

from conftest import check, run

# Runs the program's `step` as the test asks: explained by Dynamo, eager,
# or compiled with fullgraph=True (twice each).
MAIN = """
    mode = sys.argv[1]
    if mode == "explain":
        explained = torch._dynamo.explain(step)(torch.ones(4))
        print("graph breaks", explained.graph_break_count, explained.break_reasons)
    else:
        f = step if mode == "eager" else torch.compile(step, fullgraph=True)
        for _ in range(2):
            print(f(torch.ones(4)).tolist())
"""

PROGRAM = """
    import sys
    {imports}

    def step(x):
        nvtx.range_push("step")
        y = x * 2
        with nvtx.range("layer {{}}", 1):
            y = y + 1
        rid = nvtx.range_start("span")
        nvtx.mark("checkpoint")
        nvtx.range_end(rid)
        nvtx.range_pop()
        return y

""" + MAIN

# isort's order (nvtxr before torch), and torch first.
IMPORTS = {
    "nvtxr first": "import nvtxr.torch as nvtx\n    import torch",
    "torch first": "import torch\n    import nvtxr.torch as nvtx",
}


def torch_or_skip():
    if importlib.util.find_spec("torch") is None:
        message = "PyTorch is not installed (bindings/python/test.sh installs it)"
        if os.environ.get("NVTXR_REQUIRE_TOOLS"):
            pytest.fail(message)
        pytest.skip(message)


def compiled_and_eager(program):
    """Runs `program` (a `step` and MAIN) under the event-log tool: checks
    that Dynamo finds no graph break and that compiled code prints what
    eager code prints; returns the calls each sent."""
    explained, _ = run(program, args=["explain"])
    check(explained)
    assert "graph breaks 0 []" in explained.stdout, explained.stdout + explained.stderr
    eager, eager_calls = run(program, args=["eager"])
    compiled, compiled_calls = run(program, args=["compiled"])
    check(eager)
    check(compiled)
    assert compiled.stdout == eager.stdout == "[3.0, 3.0, 3.0, 3.0]\n" * 2
    return eager_calls, compiled_calls


def unnamed(calls):
    """The calls but the thread's naming, which comes with its first call,
    whichever that is."""
    return [c for c in calls if not c.startswith("NameOsThread")]


@pytest.mark.parametrize("order", sorted(IMPORTS))
def test_compiled_ranges_break_no_graph_and_send_what_eager_code_sends(order):
    torch_or_skip()
    program = PROGRAM.format(imports=IMPORTS[order])
    eager_calls, compiled_calls = compiled_and_eager(program)
    def one_step(span):
        return [
            'RangePushA "step" -> 0',
            'RangePushA "layer 1" -> 1',
            "RangePop -> 1",
            f'RangeStartA "span" -> {span}',
            'MarkA "checkpoint"',
            f"RangeEnd {span}",
            "RangePop -> 0",
        ]

    assert unnamed(eager_calls) == one_step(1) + one_step(2), eager_calls
    assert compiled_calls == eager_calls


def test_compiled_ranges_run_with_no_tool():
    torch_or_skip()
    program = PROGRAM.format(imports=IMPORTS["nvtxr first"])
    compiled, calls = run(program, tool=None, args=["compiled"])
    check(compiled)
    assert compiled.stdout == "[3.0, 3.0, 3.0, 3.0]\n" * 2
    assert calls == []


NVIDIA_API = """
    import sys
    import torch
    import nvtxr as nvtx

    def step(x):
        with nvtx.annotate("forward", color="red", domain="train", category="fw"):
            y = x * 2
        nvtx.mark("checkpoint", domain="train")
        nvtx.push_range("pushed", color=0xFF00FF00)
        rid = nvtx.start_range("span", domain="train")
        y = y + 1
        nvtx.end_range(rid)
        nvtx.pop_range()
        return y

""" + MAIN


def test_nvidias_api_compiles_with_no_graph_break_and_sends_what_eager_code_sends():
    torch_or_skip()
    eager_calls, compiled_calls = compiled_and_eager(NVIDIA_API)
    events = [c for c in eager_calls if "Push" in c or "Pop" in c or "Mark" in c or "Start" in c or "End" in c]
    assert events[:7] == [
        'DomainRangePushEx domain="train" {msg=reg:"forward" color=0x00ff0000 category=1} -> 0',
        'DomainRangePop domain="train" -> 0',
        'DomainMarkEx domain="train" {msg=reg:"checkpoint" color=0x000000ff}',
        'DomainRangePushEx default {msg=reg:"pushed" color=0xff00ff00} -> 0',
        'DomainRangeStartEx domain="train" {msg=reg:"span" color=0x000000ff} -> 1',
        'DomainRangeEnd domain="train" 1',
        "DomainRangePop default -> 0",
    ], eager_calls
    assert len(events) == 14
    assert unnamed(compiled_calls) == unnamed(eager_calls)


DECORATED = """
    import sys
    import torch
    import nvtxr as nvtx

    @nvtx.annotate("layer", color="red", domain="train", category="fw")
    def layer(x):
        return x * 2

    @nvtx.annotate()
    def head(x):
        return x + 1

    def step(x):
        return head(layer(x))

""" + MAIN


def test_annotated_functions_compile_with_no_graph_break_and_send_what_eager_code_sends():
    torch_or_skip()
    eager_calls, compiled_calls = compiled_and_eager(DECORATED)
    ranges = [c for c in eager_calls if "Push" in c or "Pop" in c]
    assert ranges[:4] == [
        'DomainRangePushEx domain="train" {msg=reg:"layer" color=0x00ff0000 category=1} -> 0',
        'DomainRangePop domain="train" -> 0',
        'DomainRangePushEx default {msg=reg:"head" color=0x000000ff} -> 0',
        "DomainRangePop default -> 0",
    ], eager_calls
    assert unnamed(compiled_calls) == unnamed(eager_calls)
