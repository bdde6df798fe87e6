"""`python -m nvtxr.profile`: function calls as ranges, through
sys.setprofile (3.11) and sys.monitoring (3.12, 3.13)."""

import sys

import pytest

from conftest import check, installed_path, interpreter, run

PACKAGE = {
    "pkg/__init__.py": "",
    "pkg/work.py": """
import json

def inner(x):
    return json.dumps(x)

def numbers():
    yield 1
    yield 2

class Model:
    def forward(self):
        return [inner(1), inner(2), sum(numbers())]
""",
}

SCRIPT = """
import threading
import pkg.work

def helper():            # in __main__: not under --include pkg
    return pkg.work.Model().forward()

helper()
t = threading.Thread(target=pkg.work.inner, args=(3,))
t.start()
t.join()
"""

EXPECTED = [
    "ExtInit module=2 compat=0x0104 version=3 size=40 segments=1 segment=0 slots=63 types=28x4",
    "DomainIsEnabled default",
    # import pkg.work: the two modules' bodies, the class body inside the second.
    'DomainRegisterStringA default "<module>"',
    'DomainRangePushEx default {msg=reg:"<module>" color=0x000000ff} -> 0',
    "DomainRangePop default -> 0",
    'DomainRangePushEx default {msg=reg:"<module>" color=0x000000ff} -> 0',
    'DomainRegisterStringA default "Model"',
    'DomainRangePushEx default {msg=reg:"Model" color=0x000000ff} -> 1',
    "DomainRangePop default -> 1",
    "DomainRangePop default -> 0",
    # helper() is in __main__, not included; Model.forward and what it calls are.
    'DomainRegisterStringA default "Model.forward"',
    'DomainRangePushEx default {msg=reg:"Model.forward" color=0x000000ff} -> 0',
    'DomainRegisterStringA default "inner"',
    'DomainRangePushEx default {msg=reg:"inner" color=0x000000ff} -> 1',
    "DomainRangePop default -> 1",
    'DomainRangePushEx default {msg=reg:"inner" color=0x000000ff} -> 1',
    "DomainRangePop default -> 1",
    # The generator: a range per resumption (start, two resumes), each closed at its yield or return.
    'DomainRegisterStringA default "numbers"',
    'DomainRangePushEx default {msg=reg:"numbers" color=0x000000ff} -> 1',
    "DomainRangePop default -> 1",
    'DomainRangePushEx default {msg=reg:"numbers" color=0x000000ff} -> 1',
    "DomainRangePop default -> 1",
    'DomainRangePushEx default {msg=reg:"numbers" color=0x000000ff} -> 1',
    "DomainRangePop default -> 1",
    "DomainRangePop default -> 0",
    # The thread: its own stack.
    'DomainRangePushEx default {msg=reg:"inner" color=0x000000ff} -> 0',
    "DomainRangePop default -> 0",
]


@pytest.mark.parametrize("version", ["3.11", "3.12", "3.13"])
def test_profile_turns_calls_of_included_modules_into_ranges(version, tmp_path):
    same = sys.version_info[:2] == tuple(map(int, version.split(".")))
    python = sys.executable if same else interpreter(version)
    for name, text in PACKAGE.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    process, calls = run(
        "import nvtxr\nnvtxr.name_threads(False)\n" + SCRIPT,
        python=python,
        python_args=["-m", "nvtxr.profile", "--include", "pkg"],
        env={"PYTHONPATH": f"{tmp_path}:{installed_path()}"},
    )
    check(process)
    assert [c for c in calls if c != "Initialize"] == EXPECTED


def test_nvidias_profile_class_annotates_calls_between_enable_and_disable():
    process, calls = run(
        """
        import nvtxr as nvtx
        nvtx.name_threads(False)

        def inside():
            return 1

        def outside():
            return 2

        def lined():
            return 3

        profile = nvtx.Profile(linenos=False)
        profile.enable()
        inside()
        profile.disable()
        outside()
        profile = nvtx.Profile()
        profile.enable()
        lined()
        profile.disable()
        """
    )
    check(process)
    pushes = [c for c in calls if "RangePushEx" in c]
    # As NVIDIA's: domain "nvtx.py", the function's name, or file:line(name).
    assert any('domain="nvtx.py" {msg=reg:"inside"' in c for c in pushes), calls
    assert any('domain="nvtx.py" {msg=reg:"script.py:11(lined)"' in c for c in pushes), calls
    assert not any('"outside"' in c for c in pushes), calls
