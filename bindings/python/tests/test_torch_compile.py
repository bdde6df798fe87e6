"""nvtxr's torch.cuda.nvtx-style calls inside torch.compile(fullgraph=True):
no graph break, and the tool receives exactly the calls eager code sends,
in order. Needs PyTorch from PyPI (bindings/python/test.sh installs it);
runs on the CPU."""

import importlib.util
import os

import pytest

from conftest import check, run

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

    mode = sys.argv[1]
    if mode == "explain":
        explained = torch._dynamo.explain(step)(torch.ones(4))
        print("graph breaks", explained.graph_break_count, explained.break_reasons)
    else:
        f = step if mode == "eager" else torch.compile(step, fullgraph=True)
        for _ in range(2):
            print(f(torch.ones(4)).tolist())
"""

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


@pytest.mark.parametrize("order", sorted(IMPORTS))
def test_compiled_ranges_break_no_graph_and_send_what_eager_code_sends(order):
    torch_or_skip()
    program = PROGRAM.format(imports=IMPORTS[order])
    explained, _ = run(program, args=["explain"])
    check(explained)
    assert "graph breaks 0 []" in explained.stdout, explained.stdout + explained.stderr
    eager, eager_calls = run(program, args=["eager"])
    compiled, compiled_calls = run(program, args=["compiled"])
    check(eager)
    check(compiled)
    assert compiled.stdout == eager.stdout == "[3.0, 3.0, 3.0, 3.0]\n" * 2
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

    events = [c for c in eager_calls if not c.startswith("NameOsThread")]
    assert events == one_step(1) + one_step(2), eager_calls
    assert compiled_calls == eager_calls


def test_compiled_ranges_run_with_no_tool():
    torch_or_skip()
    program = PROGRAM.format(imports=IMPORTS["nvtxr first"])
    compiled, calls = run(program, tool=None, args=["compiled"])
    check(compiled)
    assert compiled.stdout == "[3.0, 3.0, 3.0, 3.0]\n" * 2
    assert calls == []
