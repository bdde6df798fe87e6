//! asyncio tasks: inside a running event loop, `with annotate(...)` is a
//! start/end range remembered per task (in a context variable: each task
//! runs in its own copy of the context), so the ranges of concurrent tasks
//! held across `await` keep their own durations. Push/pop ranges belong to
//! the OS thread, where interleaved tasks would close each other's.

use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyTuple};

static MODULES: PyOnceLock<Py<PyDict>> = PyOnceLock::new();
static GET_RUNNING_LOOP: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
static RANGES: PyOnceLock<Py<PyAny>> = PyOnceLock::new();

/// Whether the caller runs inside an asyncio event loop on this thread
/// (asyncio imported and a loop running): one dict lookup when not.
pub(crate) fn in_event_loop(py: Python<'_>) -> PyResult<bool> {
    let modules = MODULES.get_or_try_init(py, || {
        Ok::<_, PyErr>(
            py.import("sys")?
                .getattr("modules")?
                .cast_into::<PyDict>()?
                .unbind(),
        )
    })?;
    let Some(asyncio) = modules.bind(py).get_item("asyncio")? else {
        return Ok(false);
    };
    let get = GET_RUNNING_LOOP.get_or_try_init(py, || {
        Ok::<_, PyErr>(asyncio.getattr("_get_running_loop")?.unbind())
    })?;
    Ok(!get.call0(py)?.is_none(py))
}

/// The context variable holding this task's open ranges (a tuple of ids).
fn ranges(py: Python<'_>) -> PyResult<&Bound<'_, PyAny>> {
    RANGES
        .get_or_try_init(py, || {
            let var = py
                .import("contextvars")?
                .getattr("ContextVar")?
                .call1(("nvtxr_task_ranges",))?;
            Ok::<_, PyErr>(var.unbind())
        })
        .map(|v| v.bind(py))
}

/// This task's open ranges.
fn open(py: Python<'_>) -> PyResult<Vec<u64>> {
    ranges(py)?
        .call_method1("get", (PyTuple::empty(py),))?
        .extract()
}

/// Remembers range `id` as this task's innermost.
pub(crate) fn push(py: Python<'_>, id: u64) -> PyResult<()> {
    let mut ids = open(py)?;
    ids.push(id);
    ranges(py)?.call_method1("set", (PyTuple::new(py, ids)?,))?;
    Ok(())
}

/// This task's innermost range, forgotten; `None` when it has none (the
/// range was entered outside the loop).
pub(crate) fn pop(py: Python<'_>) -> PyResult<Option<u64>> {
    let mut ids = open(py)?;
    let last = ids.pop();
    if last.is_some() {
        ranges(py)?.call_method1("set", (PyTuple::new(py, ids)?,))?;
    }
    Ok(last)
}
