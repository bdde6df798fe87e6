//! The module-level functions: events by domain name, the text-only calls
//! `torch.cuda.nvtx` makes, and the tool's status.

use crate::checked;
use crate::classes::{Args, Domain};
use crate::domain::get_domain;
use crate::threads::name_thread_once;
use crate::values::warn;
use nvtx_protocol::NO_PUSH_POP_TRACKING as NO_TRACKING;
use nvtxr_engine::loader;
use nvtxr_engine::statics::{Attributes, Family, StaticDomain, Text};
use pyo3::prelude::*;
use pyo3::types::PyString;

/// The domain named `domain` (`None`: the default) for an event, the
/// calling thread named first; `None` when the event goes nowhere (no tool,
/// `NVTX_DISABLE`, or a domain the tool does not want).
fn event_domain(
    py: Python<'_>,
    domain: Option<&Bound<'_, PyString>>,
) -> PyResult<Option<Py<Domain>>> {
    if !crate::active() {
        return Ok(None);
    }
    name_thread_once(py);
    let d = get_domain(py, domain)?;
    Ok(d.get().wanted.then_some(d))
}

/// Module-level event functions: `domain` by name (`None`: the default).
macro_rules! module_fn {
    ($(#[$doc:meta])* $name:ident, $call:ident, $ret:ty, $off:expr, $default_color:expr) => {
        $(#[$doc])*
        #[pyfunction]
        #[pyo3(signature = (message=None, color=$default_color, domain=None, category=None, payload=None))]
        pub(crate) fn $name(
            py: Python<'_>,
            message: Option<&Bound<'_, PyAny>>,
            color: Option<&Bound<'_, PyAny>>,
            domain: Option<&Bound<'_, PyString>>,
            category: Option<&Bound<'_, PyAny>>,
            payload: Option<&Bound<'_, PyAny>>,
        ) -> PyResult<$ret> {
            let Some(d) = event_domain(py, domain)? else {
                return Ok($off);
            };
            let d = d.bind(py);
            let a = Domain::resolve(d, Args::new(message, color, category, payload))?;
            Ok(checked(py, d.get().inner.$call(&a.attributes(), Family::Domain), $off))
        }
    };
}

module_fn!(
    /// An instantaneous event (default color blue).
    mark, mark, (), (), None
);
module_fn!(
    /// Opens a range on this OS thread; returns the tool's depth (-2 with no tool).
    push_range, push, i32, NO_TRACKING, None
);

/// Starts a range that any thread may end: returns a handle for `end_range`
/// (`None` with no tool).
#[pyfunction]
#[pyo3(signature = (message=None, color=None, domain=None, category=None, payload=None))]
pub(crate) fn start_range(
    py: Python<'_>,
    message: Option<&Bound<'_, PyAny>>,
    color: Option<&Bound<'_, PyAny>>,
    domain: Option<&Bound<'_, PyString>>,
    category: Option<&Bound<'_, PyAny>>,
    payload: Option<&Bound<'_, PyAny>>,
) -> PyResult<Option<(u64, Py<Domain>)>> {
    let Some(d) = event_domain(py, domain)? else {
        return Ok(None);
    };
    let a = Domain::resolve(d.bind(py), Args::new(message, color, category, payload))?;
    let id = checked(py, d.get().inner.start(&a.attributes(), Family::Domain), 0);
    Ok(Some((id, d)))
}

/// Ends a range from `start_range`, on any thread; `None` is ignored, and
/// anything else that is not such a range is ignored with a warning.
#[pyfunction]
pub(crate) fn end_range(range_id: &Bound<'_, PyAny>) -> PyResult<()> {
    let py = range_id.py();
    // With no tool nothing is read (so nothing is wrong), as everywhere.
    if range_id.is_none() || !crate::active() {
        return Ok(());
    }
    let Ok((id, d)) = range_id.extract::<(u64, Py<Domain>)>() else {
        return warn(
            py,
            format!(
                "end_range({}): not a range from start_range; ignored",
                range_id.repr()?
            ),
        );
    };
    if d.get().wanted {
        name_thread_once(py);
        checked(py, d.get().inner.end(id, Family::Domain), ());
    }
    Ok(())
}

/// Closes this OS thread's innermost range in `domain`.
#[pyfunction]
#[pyo3(signature = (domain=None))]
pub(crate) fn pop_range(py: Python<'_>, domain: Option<&Bound<'_, PyString>>) -> PyResult<i32> {
    let Some(d) = event_domain(py, domain)? else {
        return Ok(NO_TRACKING);
    };
    let popped = d.get().inner.pop(Family::Domain);
    Ok(checked(py, popped, NO_TRACKING))
}

/// Whether NVTX is enabled, as NVIDIA's package means it: not turned off by
/// a non-empty `NVTX_DISABLE` (whether a tool is attached or not).
#[pyfunction]
pub(crate) fn enabled() -> bool {
    !crate::disabled()
}

/// Whether a tool is attached (`NVTX_INJECTION64_PATH`) and NVTX is
/// enabled: when not, every call returns at once.
#[pyfunction]
pub(crate) fn tool_attached() -> bool {
    crate::active()
}

/// Why the configured tool did not attach, if it did not.
#[pyfunction]
pub(crate) fn load_error() -> Option<String> {
    loader::tool_attached();
    loader::load_error().map(|e| e.to_string_lossy().into_owned())
}

/// Text-only events in the default domain (`torch.cuda.nvtx`'s calls): the
/// `...A` slots, as PyTorch sends them.
macro_rules! text_fn {
    ($name:ident, $call:ident, $ret:ty, $off:expr) => {
        #[pyfunction]
        pub(crate) fn $name(py: Python<'_>, message: &Bound<'_, PyString>) -> $ret {
            if !crate::active() {
                return $off;
            }
            name_thread_once(py);
            let text = crate::text(message);
            let called = StaticDomain::global().$call(
                &Attributes {
                    message: Text::Text(&text),
                    color: None,
                    category: 0,
                    payload: None,
                    extended: None,
                },
                Family::Default,
            );
            checked(py, called, $off)
        }
    };
}

#[pyfunction]
pub(crate) fn _text_mark(py: Python<'_>, message: &Bound<'_, PyString>) {
    if crate::active() {
        name_thread_once(py);
        let marked = StaticDomain::global().mark(
            &Attributes {
                message: Text::Text(&crate::text(message)),
                color: None,
                category: 0,
                payload: None,
                extended: None,
            },
            Family::Default,
        );
        checked(py, marked, ());
    }
}
text_fn!(_text_push, push, i32, NO_TRACKING);
text_fn!(_text_start, start, u64, 0);

#[pyfunction]
pub(crate) fn _text_pop(py: Python<'_>) -> i32 {
    name_thread_once(py);
    checked(py, StaticDomain::global().pop(Family::Default), NO_TRACKING)
}

#[pyfunction]
pub(crate) fn _text_end(py: Python<'_>, id: u64) {
    name_thread_once(py);
    checked(py, StaticDomain::global().end(id, Family::Default), ());
}
