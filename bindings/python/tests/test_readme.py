"""The READMEs' Python code (the repository's quick start, the package's)
runs as shown, and its events arrive."""

import os
import re

from conftest import check, run

HERE = os.path.dirname(__file__)
READMES = [os.path.join(HERE, "..", "..", "..", "README.md"), os.path.join(HERE, "..", "README.md")]


def python_blocks(recipes=False):
    """The READMEs' Python blocks: those that annotate, or (`recipes`) those
    that query a Parquet directory (run by tests/test_recipes.py)."""
    blocks = []
    for readme in READMES:
        with open(readme) as f:
            blocks += re.findall(r"```python\n(.*?)```", f.read(), re.S)
    return [b for b in blocks if ("nvtxr import recipes" in b) == recipes]


def test_the_readme_python_quick_start_runs_and_records():
    blocks = python_blocks()
    assert blocks, "the README shows Python code"
    for code in blocks:
        process, calls = run(code)
        check(process)
        assert any(c.startswith("DomainRangePushEx") for c in calls), calls
        assert 'NameOsThreadA tid=self "MainThread"' in calls
    # The first block: its coroutines are two whole start/end ranges in "io".
    _, calls = run(blocks[0])
    starts = [c for c in calls if c.startswith('DomainRangeStartEx domain="io"')]
    assert len(starts) == 2, calls
    assert sum(c.startswith('DomainRangeEnd domain="io"') for c in calls) == 2
    assert sum('msg=reg:"load"' in c and "PushEx" in c for c in calls) == 3
