//! `annotate`, as a context manager and a decorator, and the primitives
//! `nvtxr._decorate` builds on.

use crate::attributes::refresh;
use crate::classes::{Args, Domain, EventAttributes};
use crate::domain::get_domain;
use crate::fastcall::{fast, noargs, Def, Params, Vector};
use crate::threads::name_thread_once;
use crate::{checked, tasks};
use nvtx_protocol::NO_PUSH_POP_TRACKING as NO_TRACKING;
use nvtxr_engine::statics::Family;
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString, PyTuple};

/// A decorator's arguments, kept until it learns the function's name.
pub(crate) struct Deferred {
    domain: Py<Domain>,
    color: Option<Py<PyAny>>,
    category: Option<Py<PyAny>>,
    payload: Option<Py<PyAny>>,
}

/// A code range: `with annotate(...)` or `@annotate(...)`.
///
/// With no tool attached, construction stores nothing and entering or
/// exiting returns at once.
#[pyclass(module = "nvtxr", subclass)]
#[allow(non_camel_case_types)] // NVIDIA's name, used as a class and a decorator
pub struct annotate {
    attributes: Option<Py<EventAttributes>>,
    /// For a decorator with no message: the function's qualified name.
    args: Option<Deferred>,
    /// The constructor's arguments (message, color, domain, category,
    /// payload), so that a pickled `annotate` is made again the same way.
    init: [Option<Py<PyAny>>; 5],
}

#[pymethods]
impl annotate {
    #[new]
    #[pyo3(signature = (message=None, color=None, domain=None, category=None, payload=None))]
    fn new(
        py: Python<'_>,
        message: Option<&Bound<'_, PyAny>>,
        color: Option<&Bound<'_, PyAny>>,
        domain: Option<&Bound<'_, PyString>>,
        category: Option<&Bound<'_, PyAny>>,
        payload: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let unbind = |o: Option<&Bound<'_, PyAny>>| o.map(|o| o.clone().unbind());
        let init = [
            unbind(message),
            unbind(color),
            unbind(domain.map(|d| d.as_any())),
            unbind(category),
            unbind(payload),
        ];
        let off = |init| annotate {
            attributes: None,
            args: None,
            init,
        };
        if !crate::active() {
            return Ok(off(init));
        }
        let d = get_domain(py, domain)?;
        let d = d.bind(py);
        if !d.get().wanted {
            return Ok(off(init));
        }
        let no_message = message.is_none_or(|m| m.is_none());
        let attributes = Py::new(
            py,
            Domain::resolve_kept(d, Args::new(message, color, category, payload))?,
        )?;
        Ok(annotate {
            attributes: Some(attributes),
            args: no_message.then(|| Deferred {
                domain: d.clone().unbind(),
                color: unbind(color),
                category: unbind(category),
                payload: unbind(payload),
            }),
            init,
        })
    }

    /// The range's attributes, as NVIDIA's `annotate.attributes`
    /// (`.attributes.message.string` is its message); with no tool they are
    /// resolved when asked for, not when the range is made.
    #[getter(attributes)]
    fn event_attributes(&self, py: Python<'_>) -> PyResult<Py<EventAttributes>> {
        if let Some(a) = &self.attributes {
            return Ok(a.clone_ref(py));
        }
        let arg = |i: usize| self.init[i].as_ref().map(|a| a.bind(py).clone());
        let [message, color, domain, category, payload] = [0, 1, 2, 3, 4].map(arg);
        let domain = domain.filter(|d| !d.is_none());
        let d = get_domain(
            py,
            domain.as_ref().map(|d| d.cast::<PyString>()).transpose()?,
        )?;
        let args = Args::new(
            message.as_ref(),
            color.as_ref(),
            category.as_ref(),
            payload.as_ref(),
        );
        Py::new(py, Domain::resolve_kept(d.bind(py), args)?)
    }

    /// Pickles as its constructor call (NVIDIA's `annotate` pickles).
    fn __reduce__<'py>(
        slf: &Bound<'py, Self>,
    ) -> PyResult<(
        Bound<'py, pyo3::types::PyType>,
        Bound<'py, pyo3::types::PyTuple>,
    )> {
        let py = slf.py();
        let args = slf
            .borrow()
            .init
            .iter()
            .map(|a| a.as_ref().map_or_else(|| py.None(), |a| a.clone_ref(py)))
            .collect::<Vec<_>>();
        Ok((slf.get_type(), pyo3::types::PyTuple::new(py, args)?))
    }

    /// As a decorator: the function (or coroutine function, generator
    /// function) wrapped in this range; unchanged with no tool.
    fn __call__(&mut self, py: Python<'_>, func: Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        if self.attributes.is_none() {
            return Ok(func.unbind());
        }
        if let Some(Deferred {
            domain: d,
            color,
            category,
            payload,
        }) = self.args.take()
        {
            let name = callable_name(&func)?;
            let args = Args::new(
                Some(&name),
                color.as_ref().map(|c| c.bind(py)),
                category.as_ref().map(|c| c.bind(py)),
                payload.as_ref().map(|c| c.bind(py)),
            );
            let resolved = Domain::resolve_kept(d.bind(py), args)?;
            self.attributes = Some(Py::new(py, resolved)?);
        }
        let attributes = self
            .attributes
            .as_ref()
            .expect("checked above")
            .clone_ref(py);
        Ok(py
            .import("nvtxr._decorate")?
            .call_method1("decorate", (func, attributes))?
            .unbind())
    }
}

/// What `@annotate` with no message names a range: the callable's name (as
/// NVIDIA's package names it), else its qualified name, else (a
/// `functools.partial`, an object with `__call__`) the wrapped function's or
/// the type's; never an error.
pub(crate) fn callable_name<'py>(func: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    for attribute in ["__name__", "__qualname__"] {
        if let Ok(name) = func.getattr(attribute) {
            return Ok(name);
        }
    }
    if let Ok(inner) = func.getattr("func") {
        if !inner.is(func) {
            return callable_name(&inner);
        }
    }
    Ok(func.get_type().qualname()?.into_any())
}

/// Pushes a range of resolved attributes (`_push`, and the profiler's calls).
pub(crate) fn push_attributes(py: Python<'_>, a: &Bound<'_, EventAttributes>) -> PyResult<i32> {
    name_thread_once(py);
    refresh(a)?;
    let a = a.borrow();
    Ok(checked(
        py,
        a.domain().push(&a.attributes(), Family::Domain),
        NO_TRACKING,
    ))
}

/// Pops the range of `a`'s domain (`_pop`, and the profiler's returns,
/// which follow a push that named the thread).
pub(crate) fn pop_attributes(a: &Bound<'_, EventAttributes>) -> i32 {
    checked(a.py(), a.borrow().domain().pop(Family::Domain), NO_TRACKING)
}

/// `nvtxr._decorate`'s primitives: the event calls on resolved attributes.
#[pyfunction]
pub(crate) fn _push(py: Python<'_>, a: &Bound<'_, EventAttributes>) -> PyResult<i32> {
    push_attributes(py, a)
}

#[pyfunction]
pub(crate) fn _pop(a: &Bound<'_, EventAttributes>) -> i32 {
    name_thread_once(a.py());
    pop_attributes(a)
}

#[pyfunction]
pub(crate) fn _start(py: Python<'_>, a: &Bound<'_, EventAttributes>) -> PyResult<u64> {
    name_thread_once(py);
    refresh(a)?;
    let a = a.borrow();
    Ok(checked(
        py,
        a.domain().start(&a.attributes(), Family::Domain),
        0,
    ))
}

#[pyfunction]
pub(crate) fn _end(a: &Bound<'_, EventAttributes>, id: u64) {
    name_thread_once(a.py());
    checked(a.py(), a.borrow().domain().end(id, Family::Domain), ());
}

/// `annotate.__enter__` and `__exit__` (see `fastcall`); PyO3 makes the
/// other methods.
pub(crate) const METHODS: [Def; 2] = [
    noargs!(
        c"__enter__",
        c"__enter__($self, /)\n--\n\nOpens the range: push/pop, or inside a running asyncio event loop a start/end range of the task.",
        enter,
        off = enter_off
    ),
    fast!(
        c"__exit__",
        c"__exit__($self, /, _kind=None, _value=None, _traceback=None)\n--\n\nCloses the range. The exception, if any, is not looked at.",
        exit,
        off = exit_off
    ),
];

/// Whether `slf` (an `annotate`) sends nothing: made with no tool, or
/// for a domain the tool does not want.
///
/// # Safety
/// `slf` is an `annotate`; called from Python.
unsafe fn off(slf: *mut ffi::PyObject) -> bool {
    // SAFETY: see the safety section.
    let py = unsafe { Python::assume_attached() };
    let slf = unsafe { Borrowed::from_ptr(py, slf).cast_unchecked::<annotate>() };
    slf.try_borrow().is_ok_and(|a| a.attributes.is_none())
}

/// `__enter__` sending nothing: returns the `annotate` at once.
unsafe fn enter_off(slf: *mut ffi::PyObject) -> Option<*mut ffi::PyObject> {
    // SAFETY: CPython's argument to an `annotate` method.
    unsafe { off(slf) }.then(|| {
        // SAFETY: a live object, returned with a new reference.
        unsafe { ffi::Py_IncRef(slf) };
        slf
    })
}

/// `__exit__` sending nothing, with at most its three arguments by
/// position: returns `False` at once.
unsafe fn exit_off(v: Vector) -> Option<*mut ffi::PyObject> {
    // SAFETY: CPython's arguments to an `annotate` method.
    (v.at_most(3) && unsafe { off(v.slf) }).then(|| {
        // SAFETY: attached to Python (see `off`).
        let py = unsafe { Python::assume_attached() };
        false.into_pyobject(py).unwrap().to_owned().into_ptr()
    })
}

/// `__enter__`: opens the range, push/pop or, inside a running asyncio
/// event loop, a start/end range of the task (see `tasks`).
unsafe fn enter(py: Python<'_>, slf: *mut ffi::PyObject) -> PyResult<*mut ffi::PyObject> {
    // SAFETY: the method descriptor checked that `slf` is an `annotate`.
    let slf = unsafe { Borrowed::from_ptr(py, slf).cast_unchecked::<annotate>() };
    if let Some(a) = &slf.borrow().attributes {
        name_thread_once(py);
        refresh(a.bind(py))?;
        let a = a.borrow(py);
        if tasks::in_event_loop(py)? {
            let id = checked(py, a.domain().start(&a.attributes(), Family::Domain), 0);
            tasks::push(py, id)?;
        } else {
            checked(py, a.domain().push(&a.attributes(), Family::Domain), 0);
        }
    }
    Ok(slf.to_owned().into_ptr())
}

/// `__exit__`: closes the range. Its arguments (optional: `__exit__()` may
/// be called by hand) are not looked at.
unsafe fn exit(py: Python<'_>, v: Vector) -> PyResult<*mut ffi::PyObject> {
    const PARAMS: Params = Params {
        function: "__exit__",
        names: &["_kind", "_value", "_traceback"],
        positional: 3,
        required: 0,
    };
    // SAFETY: CPython's arguments to an `annotate` method.
    let [_, _, _] = unsafe { PARAMS.parse(py, v) }?;
    let slf = unsafe { v.object::<annotate>(py) };
    if let Some(a) = &slf.borrow().attributes {
        let domain = a.borrow(py).domain();
        match tasks::in_event_loop(py)?
            .then(|| tasks::pop(py))
            .transpose()?
            .flatten()
        {
            Some(id) => checked(py, domain.end(id, Family::Domain), ()),
            None => drop(checked(py, domain.pop(Family::Domain), 0)),
        }
    }
    Ok(false.into_pyobject(py)?.to_owned().into_ptr())
}

/// `nvtxr._native._call` (see `fastcall`).
pub(crate) const FUNCTIONS: [Def; 1] = [fast!(
    c"_call",
    c"_call(a, func, args, kwargs=None, _spec=None)\n--\n\n`func(*args, **kwargs)` inside a push/pop range of the attributes `a`.",
    call
)];

/// `_call(a, func, args, kwargs=None, _spec=None)`: `func(*args, **kwargs)`
/// inside a push/pop range, one call from the decorator's wrapper instead
/// of three. The range is popped whether `func` returns or raises. `_spec`
/// (the attributes as plain values) is for the `torch.compile` stand-in of
/// this call (`nvtxr._compile`), not read here.
unsafe fn call(py: Python<'_>, v: Vector) -> PyResult<*mut ffi::PyObject> {
    const PARAMS: Params = Params {
        function: "_call",
        names: &["a", "func", "args", "kwargs", "_spec"],
        positional: 5,
        required: 3,
    };
    // SAFETY: CPython's arguments to a module function.
    let [a, func, args, kwargs, _] = unsafe { PARAMS.parse(py, v) }?;
    let required = "a required argument";
    let a = Params::cast::<EventAttributes>("a", a.expect(required))?;
    let func = func.expect(required);
    let args = Params::cast::<PyTuple>("args", args.expect(required))?;
    let kwargs = kwargs
        .map(|k| Params::cast::<PyDict>("kwargs", k))
        .transpose()?;
    name_thread_once(py);
    refresh(&a)?;
    let attributes = a.borrow();
    let domain = attributes.domain();
    checked(py, domain.push(&attributes.attributes(), Family::Domain), 0);
    let result = func.call(&*args, kwargs.as_deref());
    checked(py, domain.pop(Family::Domain), 0);
    Ok(result?.into_ptr())
}
