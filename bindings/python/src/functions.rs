//! The module-level functions: events by domain name, the text-only calls
//! `torch.cuda.nvtx` makes, and the tool's status.

use crate::checked;
use crate::classes::{Args, Domain, EventAttributes};
use crate::domain::{get_domain, END_RANGE};
use crate::fastcall::{fast, Answer, Def, Params, Vector};
use crate::threads::name_thread_once;
use crate::values::warn;
use nvtx_protocol::NO_PUSH_POP_TRACKING as NO_TRACKING;
use nvtxr_engine::loader;
use nvtxr_engine::statics::{Attributes, Family, StaticDomain, Text};
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyString, PyTuple};

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

/// The module-level event functions (see `fastcall`); PyO3 makes the others.
pub(crate) const FUNCTIONS: [Def; 5] = [
    fast!(
        c"mark",
        c"mark(message=None, color=None, domain=None, category=None, payload=None)\n--\n\nAn instantaneous event (default color blue).",
        mark,
        off = mark_off
    ),
    fast!(
        c"push_range",
        c"push_range(message=None, color=None, domain=None, category=None, payload=None)\n--\n\nOpens a range on this OS thread; returns the tool's depth (-2 with no tool).",
        push_range,
        off = push_range_off
    ),
    fast!(
        c"start_range",
        c"start_range(message=None, color=None, domain=None, category=None, payload=None)\n--\n\nStarts a range that any thread may end: returns a handle for `end_range` (`None` with no tool).",
        start_range,
        off = start_range_off
    ),
    fast!(
        c"pop_range",
        c"pop_range(domain=None)\n--\n\nCloses this OS thread's innermost range in `domain`; returns the tool's depth (-2 with no tool).",
        pop_range,
        off = pop_range_off
    ),
    fast!(
        c"end_range",
        c"end_range(range_id)\n--\n\nEnds a range from `start_range`, on any thread; `None` is ignored, and anything else that is not such a range is ignored with a warning.",
        end_range,
        off = end_range_off
    ),
];

/// The event functions' parameters, in order; `domain` is the third.
const EVENT_NAMES: [&str; 5] = ["message", "color", "domain", "category", "payload"];
const DOMAIN: usize = 2;

/// [`EVENT_NAMES`] as interned `str`s (made at the module's start, so that
/// reading them never fails): Python interns the keywords of the calls it
/// compiles, so a keyword is found by identity.
static INTERNED: std::sync::OnceLock<[Py<PyString>; 5]> = std::sync::OnceLock::new();

/// Makes [`INTERNED`]; called once, when the module starts.
pub(crate) fn intern_names(py: Python<'_>) {
    INTERNED.get_or_init(|| EVENT_NAMES.map(|n| PyString::intern(py, n).unbind()));
}

/// With no tool, whether a call of an event function needs no checking
/// beyond what its body would do with no tool: at most `positional`
/// arguments, keywords among the first `positional` names (found by
/// identity, none given twice), and `domain`, if among them and given, a
/// `str` or `None`. A call of any other shape goes to the body, which
/// checks it the same way.
///
/// # Safety
/// `v` is CPython's arguments to a module function; called from Python.
#[inline(always)]
unsafe fn plain_call(v: Vector, positional: usize) -> bool {
    let Some(names) = INTERNED.get() else {
        return false;
    };
    let py = unsafe { Python::assume_attached() };
    let nargs = v.nargs as usize;
    if nargs > positional {
        return false;
    }
    if positional > DOMAIN && nargs > DOMAIN {
        // SAFETY: within the vector.
        if !domain_name(unsafe { Borrowed::from_ptr(py, *v.args.add(DOMAIN)) }) {
            return false;
        }
    }
    if v.kwnames.is_null() {
        return true;
    }
    // SAFETY: CPython passes a tuple of `str`.
    let kwnames = unsafe { Borrowed::from_ptr(py, v.kwnames).cast_unchecked::<PyTuple>() };
    for (k, key) in kwnames.iter_borrowed().enumerate() {
        let Some(j) = names[..positional]
            .iter()
            .position(|n| n.as_ptr() == key.as_ptr())
        else {
            return false;
        };
        // SAFETY: within the vector.
        let value = unsafe { Borrowed::from_ptr(py, *v.args.add(nargs + k)) };
        if j < nargs || (j == DOMAIN && !domain_name(value)) {
            return false;
        }
    }
    true
}

/// Whether `value` can name a domain (`None` or a `str`) without a check.
fn domain_name(value: Borrowed<'_, '_, PyAny>) -> bool {
    value.is_none() || value.is_exact_instance_of::<PyString>()
}

/// With no tool, an event function's plain call answers `answer`.
///
/// # Safety
/// As [`plain_call`].
#[inline(always)]
unsafe fn event_off(v: Vector, positional: usize, answer: Answer) -> Option<*mut ffi::PyObject> {
    if crate::active() || !unsafe { plain_call(v, positional) } {
        return None;
    }
    // SAFETY: called from Python.
    Some(unsafe { answer.object() })
}

// SAFETY (the `*_off` functions): CPython's arguments to a module function.
unsafe fn mark_off(v: Vector) -> Option<*mut ffi::PyObject> {
    unsafe { event_off(v, 5, Answer::None) }
}

unsafe fn push_range_off(v: Vector) -> Option<*mut ffi::PyObject> {
    unsafe { event_off(v, 5, Answer::Int(NO_TRACKING.into())) }
}

unsafe fn start_range_off(v: Vector) -> Option<*mut ffi::PyObject> {
    unsafe { event_off(v, 5, Answer::None) }
}

/// `pop_range(domain=None)`: its one parameter is the third of
/// [`EVENT_NAMES`], so its plain calls are checked apart.
unsafe fn pop_range_off(v: Vector) -> Option<*mut ffi::PyObject> {
    if crate::active() || !v.at_most(1) {
        return None;
    }
    let py = unsafe { Python::assume_attached() };
    if v.nargs == 1 && !domain_name(unsafe { v.first(py) }) {
        return None;
    }
    Some(unsafe { Answer::Int(NO_TRACKING.into()).object() })
}

/// `end_range(range_id)` with no tool ignores its argument.
unsafe fn end_range_off(v: Vector) -> Option<*mut ffi::PyObject> {
    let py = unsafe { Python::assume_attached() };
    (!crate::active() && v.kwnames.is_null() && v.nargs == 1).then(|| py.None().into_ptr())
}

/// An event function's call: `send` given its domain (by name, `None`: the
/// default) and its attributes resolved from the keywords; `off` when the
/// event goes nowhere.
///
/// # Safety
/// `v` is CPython's arguments to a module function.
unsafe fn event_call<R>(
    py: Python<'_>,
    function: &'static str,
    v: Vector,
    off: R,
    send: impl FnOnce(&Bound<'_, Domain>, &EventAttributes) -> R,
) -> PyResult<R> {
    let params = Params {
        function,
        names: &EVENT_NAMES,
        positional: 5,
        required: 0,
    };
    // SAFETY: see the safety section.
    let [message, color, domain, category, payload] = unsafe { params.parse(py, v) }?;
    let domain = domain
        .map(|d| Params::cast::<PyString>("domain", d))
        .transpose()?;
    let Some(d) = event_domain(py, domain.as_deref())? else {
        return Ok(off);
    };
    let args = Args::new(
        message.as_deref(),
        color.as_deref(),
        category.as_deref(),
        payload.as_deref(),
    );
    let d = d.bind(py);
    Ok(send(d, &Domain::resolve(d, args)?))
}

// SAFETY (the bodies): CPython's arguments to a module function.
unsafe fn mark(py: Python<'_>, v: Vector) -> PyResult<*mut ffi::PyObject> {
    unsafe {
        event_call(py, "mark", v, (), |d, a| {
            checked(py, d.get().inner.mark(&a.attributes(), Family::Domain), ())
        })
    }?;
    Ok(py.None().into_ptr())
}

unsafe fn push_range(py: Python<'_>, v: Vector) -> PyResult<*mut ffi::PyObject> {
    let depth = unsafe {
        event_call(py, "push_range", v, NO_TRACKING, |d, a| {
            let pushed = d.get().inner.push(&a.attributes(), Family::Domain);
            checked(py, pushed, NO_TRACKING)
        })
    }?;
    Ok(depth.into_pyobject(py)?.into_ptr())
}

unsafe fn start_range(py: Python<'_>, v: Vector) -> PyResult<*mut ffi::PyObject> {
    let started = unsafe {
        event_call(py, "start_range", v, None, |d, a| {
            let id = checked(py, d.get().inner.start(&a.attributes(), Family::Domain), 0);
            // The id with its domain, for `end_range`.
            Some((id, d.clone().unbind()))
        })
    }?;
    Ok(started.into_pyobject(py)?.into_ptr())
}

unsafe fn pop_range(py: Python<'_>, v: Vector) -> PyResult<*mut ffi::PyObject> {
    const PARAMS: Params = Params {
        function: "pop_range",
        names: &["domain"],
        positional: 1,
        required: 0,
    };
    let [domain] = unsafe { PARAMS.parse(py, v) }?;
    let domain = domain
        .map(|d| Params::cast::<PyString>("domain", d))
        .transpose()?;
    let depth = match event_domain(py, domain.as_deref())? {
        None => NO_TRACKING,
        Some(d) => checked(py, d.get().inner.pop(Family::Domain), NO_TRACKING),
    };
    Ok(depth.into_pyobject(py)?.into_ptr())
}

unsafe fn end_range(py: Python<'_>, v: Vector) -> PyResult<*mut ffi::PyObject> {
    let [range_id] = unsafe { END_RANGE.parse(py, v) }?;
    let range_id = range_id.expect("a required argument");
    // With no tool nothing is read (so nothing is wrong), as everywhere.
    if range_id.is_none() || !crate::active() {
        return Ok(py.None().into_ptr());
    }
    match range_id.extract::<(u64, Py<Domain>)>() {
        Ok((id, d)) => d.get().end(py, id),
        Err(_) => warn(
            py,
            format!(
                "end_range({}): not a range from start_range; ignored",
                range_id.repr()?
            ),
        )?,
    }
    Ok(py.None().into_ptr())
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
