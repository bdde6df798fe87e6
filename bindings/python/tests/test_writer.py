"""`nvtxr.writer` against NVIDIA's `nvtx.writer`: the same programs drive a
test NVTXW backend (`nvtxw_log_backend.c`, built here with NVIDIA's
headers) that logs every call with every field it is given; the logs, and
what each program prints (results and errors), must be identical."""

import os
import subprocess

import pytest

from conftest import artifact, check, run

HERE = os.path.dirname(os.path.abspath(__file__))


@pytest.fixture(scope="module")
def backend(tmp_path_factory):
    include = artifact("NVIDIA_NVTX_INCLUDE")
    path = str(tmp_path_factory.mktemp("backend") / "libnvtxw_log.so")
    subprocess.run(
        ["gcc", "-shared", "-fPIC", "-Wall", "-Werror", "-DNVTX_NO_IMPL", f"-I{include}",
         "-o", path, os.path.join(HERE, "nvtxw_log_backend.c")],
        check=True,
    )
    return path


PROGRAMS = {
    "everything": """
        import numpy as np
        import nvtx
        from nvtx import writer as w

        backend = w.load_backend(BACKEND)
        with w.Session("demo", backend=backend, config="a=1|b=2") as s:
            d = s.get_domain("train")
            assert s.get_domain(b"train") is d
            default = s.get_domain()
            rs = d.get_registered_string("registered")
            assert d.get_registered_string(b"registered") is rs
            print(d.get_category_id("io"), d.get_category_id(b"io"))
            scope = d.get_scope("node/gpu0")
            sub = d.get_scope("sm0", parent=scope)
            print(scope.scope_id, scope.path, sub.scope_id)
            with s.create_stream(
                "main", domain=d, scope=scope,
                time_domain_id=nvtx.TimestampType.CPU_CLOCK_GETTIME_MONOTONIC,
                interleaving=w.StreamInterleaving.SCOPE, ordering=w.StreamOrdering.STRICT,
                skid=w.StreamSkid.TIME_NS, skid_amount=100,
            ) as st:
                st.write_mark(100, message="hello", color="red", category="io")
                st.write_mark(101, message=rs, category=5)
                st.write_mark(102)
                st.write_mark(103, message=b"")
                st.write_mark(104, message="a\\0b", color="green")
                st.write_pushpop(110, 120, message="pp", color=0xFF00FF00)
                st.write_startend(130, 140, message=rs)
                st.write_push(150, message="push")
                st.write_pop(160)
                st.write_start(170, 7, message="start", category="net")
                st.write_end(180, 7)
                print(d.get_category_id("later"))
                mark = np.dtype([
                    ("t", nvtx.numpy_dtype(np.int64, entry_kind=nvtx.EntryKind.MARK)),
                    ("v", np.float32),
                    ("label", nvtx.numpy_dtype(np.uint64, entry_type=nvtx.PayloadEntryType.REGISTERED_STRING)),
                ])
                schema = d.get_schema(mark, kind=nvtx.EventKind.MARK)
                assert d.get_schema(mark, kind=nvtx.EventKind.MARK) is schema
                st.write_event(schema, (200, 1.5, rs.handle))
                span = np.dtype([
                    ("b", nvtx.numpy_dtype(np.int64, entry_kind=nvtx.EntryKind.RANGE_BEGIN)),
                    ("e", nvtx.numpy_dtype(np.int64, entry_kind=nvtx.EntryKind.RANGE_END)),
                    ("n", np.uint32),
                    ("xy", np.float64, (2,)),
                ])
                spans = d.get_schema(span, kind=nvtx.EventKind.RANGE_PUSHPOP)
                st.write_event_batch(spans, [(300, 310, 1, (0.5, 1.5)), (320, 330, 2, (2.5, 3.5))])
                st.write_event_batch(spans, np.array([(340, 350, 3, (4.0, 5.0))], dtype=span),
                                     ordering=nvtx.BatchOrdering.UNSORTED)
                start = np.dtype([
                    ("id", nvtx.numpy_dtype(np.uint64, entry_type=nvtx.PayloadEntryType.RANGE_ID)),
                    ("t", nvtx.numpy_dtype(np.int64, entry_kind=nvtx.EntryKind.RANGE_BEGIN)),
                ])
                st.write_event(d.get_schema(start, kind=nvtx.EventKind.RANGE_START), (9, 360))
                generic = d.get_schema(np.dtype([("a", np.int32), ("b", np.float64), ("c", "S4")]))
                print(generic.kind, generic.dtype)
                loss = d.get_counter("loss", float, description="the loss")
                count = d.get_counter("bytes", int, scope=sub, semantics=nvtx.CounterSemantics(unit="B", min=0))
                small = d.get_counter("small", np.int16, scope=nvtx.PredefinedScope.CURRENT_SW_PROCESS)
                group = d.get_counter("mem", np.dtype([
                    ("used", nvtx.numpy_dtype(np.int64, counter_semantics=nvtx.CounterSemantics(unit="MB"))),
                    ("free", np.float32),
                ]))
                stamped = d.get_counter("stamped", np.dtype([
                    ("t", nvtx.numpy_dtype(np.int64, entry_kind=nvtx.EntryKind.COUNTER_TIMESTAMP)),
                    ("v", np.int64),
                ]))
                assert d.get_counter("loss", float, description="the loss") is loss
                print(loss.counter_id, loss.name, loss.dtype, loss.description, count.semantics.unit)
                st.write_counter_sample(loss, 400, 0.25)
                st.write_counter_sample(count, 401, 12)
                st.write_counter_sample(small, 402, 7)
                st.write_counter_sample(group, 403, (1, 2.5))
                st.write_counter_sample_no_value(count, 404, nvtx.CounterNoValueReason.UNCHANGED)
                st.write_counter_batch(loss, [0.5, 0.75], timestamps=[500, 510])
                st.write_counter_batch(count, np.array([3, 4]), timestamps=np.array([520, 530]))
                st.write_counter_batch(group, [(3, 4.0), (5, 6.0)], timestamps=[540, 550],
                                       ordering=nvtx.BatchOrdering.PARTIALLY_SORTED)
                st.write_counter_batch(stamped, [(560, 1), (570, 2)])
            other = s.create_stream("other")
            other.open()
            unnamed = s.create_stream(None, domain=default)
            unnamed.open()
        print(repr(rs), repr(scope), repr(schema).split(",")[0])
        backend.close()
        backend.close()
        again = w.load_backend(BACKEND)
        with w.Session(b"second", backend=again):
            pass
        again.close()
    """,
    "errors": """
        import numpy as np
        import nvtx
        from nvtx import writer as w

        def attempt(what, f, *args, **kwargs):
            try:
                f(*args, **kwargs)
                print(what, "ok")
            except Exception as e:
                print(what, type(e).__name__, e, getattr(e, "result_code", ""), getattr(e, "operation", ""))

        attempt("missing library", w.load_backend, "/nonexistent/libnvtxw.so")
        attempt("no entry point", w.load_backend, LIBC)
        attempt("not a backend", w.Session, "s", backend=object())
        attempt("direct Backend", w.Backend, object())
        backend = w.load_backend(BACKEND)
        s = w.Session("s", backend=backend)
        attempt("domain before begin", s.get_domain, "d")
        attempt("stream before begin", s.create_stream, "st")
        attempt("end before begin", s.end)
        s.begin()
        attempt("begin twice", s.begin)
        d = s.get_domain("d")
        attempt("bad domain name", s.get_domain, 3)
        attempt("bad string", d.get_registered_string, 3)
        attempt("bad category", d.get_category_id, 3)
        attempt("bad parent", d.get_scope, "x", parent=3)
        attempt("runtime parent", d.get_scope, "x", parent=nvtx.PredefinedScope.CURRENT_SW_THREAD)
        attempt("bad kind", d.get_schema, np.int32, kind=3)
        attempt("scalar event", d.get_schema, np.int64, kind=nvtx.EventKind.MARK)
        attempt("no role", d.get_schema, np.dtype([("a", np.int64)]), kind=nvtx.EventKind.MARK)
        attempt("wrong role", d.get_schema, np.dtype([
            ("a", nvtx.numpy_dtype(np.int64, entry_kind=nvtx.EntryKind.RANGE_BEGIN))]), kind=nvtx.EventKind.MARK)
        attempt("no range id", d.get_schema, np.dtype([
            ("a", nvtx.numpy_dtype(np.int64, entry_kind=nvtx.EntryKind.RANGE_END))]), kind=nvtx.EventKind.RANGE_END)
        attempt("array counter", d.get_counter, "c", np.dtype((np.int32, 3)))
        attempt("two stamps", d.get_counter, "c", np.dtype([
            ("a", nvtx.numpy_dtype(np.int64, entry_kind=nvtx.EntryKind.COUNTER_TIMESTAMP)),
            ("b", nvtx.numpy_dtype(np.int64, entry_kind=nvtx.EntryKind.COUNTER_TIMESTAMP))]))
        attempt("mark role in counter", d.get_counter, "c", np.dtype([
            ("a", nvtx.numpy_dtype(np.int64, entry_kind=nvtx.EntryKind.MARK))]))
        attempt("static scope out of range", d.get_counter, "c", int, scope=5)
        attempt("bad interleaving", s.create_stream, "x", interleaving=0)
        attempt("bad time domain", s.create_stream, "x", time_domain_id="x")
        attempt("runtime stream scope", s.create_stream, "x", scope=nvtx.PredefinedScope.CURRENT_SW_THREAD)
        st = s.create_stream("st", domain=d)
        attempt("write before open", st.write_mark, 1)
        attempt("close before open", st.close)
        st.open()
        attempt("open twice", st.open)
        attempt("bad message", st.write_mark, 1, message=3)
        attempt("bad color", st.write_mark, 1, color="no such color")
        attempt("category too big", st.write_mark, 1, category=1 << 40)
        attempt("category type", st.write_mark, 1, category=1.5)
        attempt("start id 0", st.write_start, 1, 0)
        attempt("end id 0", st.write_end, 1, 0)
        other = s.get_domain("other")
        attempt("foreign string", st.write_mark, 1, message=other.get_registered_string("x"))
        plain = d.get_schema(np.dtype([("a", np.int64)]))
        attempt("not an event schema", st.write_event, plain, (1,))
        mark = d.get_schema(np.dtype([("t", nvtx.numpy_dtype(np.int64, entry_kind=nvtx.EntryKind.MARK))]),
                            kind=nvtx.EventKind.MARK)
        attempt("two rows", st.write_event, mark, [(1,), (2,)])
        attempt("empty batch", st.write_event_batch, mark, [])
        attempt("bad ordering", st.write_event_batch, mark, [(1,)], ordering=0)
        c = d.get_counter("c", int)
        attempt("foreign counter", st.write_counter_sample, other.get_counter("c", int), 1, 1)
        attempt("no timestamps", st.write_counter_batch, c, [1, 2])
        attempt("lengths differ", st.write_counter_batch, c, [1, 2], timestamps=[1])
        attempt("bad reason", st.write_counter_sample_no_value, c, 1, 2)
        stamped = d.get_counter("stamped", np.dtype([
            ("t", nvtx.numpy_dtype(np.int64, entry_kind=nvtx.EntryKind.COUNTER_TIMESTAMP)), ("v", np.int64)]))
        attempt("stamped single", st.write_counter_sample, stamped, 1, (1, 2))
        attempt("stamped with times", st.write_counter_batch, stamped, [(1, 2)], timestamps=[1])
        s.end()
        attempt("domain after end", d.get_registered_string, "late")
        attempt("write after end", st.write_mark, 1)
        backend.close()
        attempt("session after close", w.Session("t", backend=backend).begin)
    """,
}


def program(code, backend, nvidia):
    libc = "/lib/x86_64-linux-gnu/libc.so.6"
    imports = "" if nvidia else "import sys, nvtxr, nvtxr.writer\nsys.modules['nvtx'] = nvtxr\nsys.modules['nvtx.writer'] = nvtxr.writer\n"
    return imports + f"BACKEND = {backend!r}\nLIBC = {libc!r}\n" + code


def nvtxw_log(code, backend, nvidia, tmp_path, env=None):
    log = tmp_path / ("nvidia.log" if nvidia else "nvtxr.log")
    environment = {"NVTXW_LOG_OUT": str(log), **(env or {})}
    if nvidia:
        environment["PYTHONPATH"] = artifact("NVIDIA_PYTHON_NVTX")
    import textwrap

    process, _ = run(program(textwrap.dedent(code), backend, nvidia), tool=None, env=environment)
    check(process)
    return process.stdout, log.read_text() if log.exists() else ""


def in_order(log):
    """The log's lines, the streams a session end closes sorted (NVIDIA's
    package closes them in the order of a set)."""
    lines, closing = [], []
    for line in log.splitlines() + [""]:
        if line.startswith("StreamClose"):
            closing.append(line)
            continue
        lines += sorted(closing) + [line]
        closing = []
    return lines


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_same_backend_calls_as_nvidias_writer(name, backend, tmp_path):
    code = PROGRAMS[name]
    nvidia = nvtxw_log(code, backend, True, tmp_path)
    ours = nvtxw_log(code, backend, False, tmp_path)
    # The words differ for a library that does not load (ctypes's and
    # dlopen's) and for an unknown color (NVIDIA's suggests matplotlib): the
    # exception types must not.
    def same(output):
        worded = ("missing library OSError", "bad color TypeError")
        return [l[: len(w)] if l.startswith(worded) and (w := next(p for p in worded if l.startswith(p))) else l
                for l in output.splitlines()]

    assert same(ours[0]) == same(nvidia[0])
    assert in_order(ours[1]) == in_order(nvidia[1])
    assert len(nvidia[1].splitlines()) > 20


@pytest.mark.parametrize(
    "env,expected",
    [
        ({"NVTXW_LOG_VERSION": "1"}, "load WriterError nvtxwGetInterface failed: interface version not supported (code 6)"),
        ({"NVTXW_LOG_FAIL": "SessionBegin"}, "begin WriterError SessionBegin failed: failed (code 1)"),
        ({"NVTXW_LOG_FAIL": "SchemaRegister"}, "mark WriterError nvtxwEventSchemasRegister failed: failed (code 1)"),
        ({"NVTXW_LOG_FAIL": "EventWrite"}, "mark WriterError nvtxwMarkWriteUtf8 failed: failed (code 1)"),
        ({"NVTXW_LOG_FAIL": "SessionEnd"}, "end WriterError SessionEnd failed: failed (code 1)"),
    ],
)
def test_backend_failures_raise_as_nvidias_writer(env, expected, backend, tmp_path):
    code = """
        from nvtx import writer as w

        def step(what, f):
            try:
                return f()
            except Exception as e:
                print(what, type(e).__name__, e)
                raise SystemExit(0)

        b = step("load", lambda: w.load_backend(BACKEND))
        s = w.Session("s", backend=b)
        step("begin", s.begin)
        st = s.create_stream("st", domain="d")
        st.open()
        step("mark", lambda: st.write_mark(1, message="m"))
        step("end", s.end)
    """
    nvidia = nvtxw_log(code, backend, True, tmp_path, env)
    ours = nvtxw_log(code, backend, False, tmp_path, env)
    assert nvidia[0].strip() == expected
    assert ours == nvidia
