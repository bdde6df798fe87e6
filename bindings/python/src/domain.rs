//! A domain's methods (events, registered strings, categories, counters)
//! and `nvtxr.get_domain`.

use crate::checked;
use crate::classes::{Args, Domain, EventAttributes, RegisteredString};
use crate::fastcall::{fast, noargs, Answer, Def, Params, Vector};
use crate::threads::name_thread_once;
use nvtx_protocol::NO_PUSH_POP_TRACKING as NO_TRACKING;
use nvtxr_engine::statics::{Attributes, Family, StaticDomain};
use nvtxr_engine::Error;
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::type_object::PyTypeInfo;
use pyo3::types::{PyDict, PyString};

impl Domain {
    /// One event method: with no tool returns `off` at once; else resolves
    /// the attributes (or takes the given ones) and calls `call`.
    fn event<R>(
        slf: &Bound<'_, Self>,
        attributes: Option<&Bound<'_, EventAttributes>>,
        args: Args,
        off: R,
        call: impl FnOnce(&StaticDomain, &Attributes) -> Result<R, Error>,
    ) -> PyResult<R> {
        if !crate::active() || !slf.get().wanted {
            return Ok(off);
        }
        name_thread_once(slf.py());
        let py = slf.py();
        let (given, resolved);
        let a: &EventAttributes = match attributes {
            Some(a) => {
                // Keywords beside attributes change them first, as NVIDIA's do.
                let changes = args.not_none();
                if changes.any() {
                    Domain::assign(slf, a, changes)?;
                }
                given = a.borrow();
                &given
            }
            None => {
                resolved = Domain::resolve(slf, args)?;
                &resolved
            }
        };
        Ok(checked(py, call(&slf.get().inner, &a.attributes()), off))
    }
}

/// `Domain`'s event methods (see `fastcall`); PyO3 makes the others.
pub(crate) const METHODS: [Def; 5] = [
    fast!(
        c"mark",
        c"mark($self, /, attributes=None, *, message=None, color=None, category=None, payload=None)\n--\n\nAn instantaneous event.",
        mark,
        off = mark_off
    ),
    fast!(
        c"push_range",
        c"push_range($self, /, attributes=None, *, message=None, color=None, category=None, payload=None)\n--\n\nOpens a range on this OS thread; returns the tool's depth (-2 with no tool).",
        push_range,
        off = push_range_off
    ),
    fast!(
        c"start_range",
        c"start_range($self, /, attributes=None, *, message=None, color=None, category=None, payload=None)\n--\n\nStarts a range that any thread may end; returns its id (0 with no tool).",
        start_range,
        off = start_range_off
    ),
    noargs!(
        c"pop_range",
        c"pop_range($self, /)\n--\n\nCloses this OS thread's innermost range in this domain; returns the tool's depth (-2 with no tool).",
        pop_range,
        off = pop_range_off
    ),
    fast!(
        c"end_range",
        c"end_range($self, /, range_id)\n--\n\nEnds the range `range_id` (from `start_range`), on any thread.",
        end_range
    ),
];

/// Whether `slf` (a `Domain`) sends nothing: no tool, or one that does
/// not want this domain's events.
///
/// # Safety
/// `slf` is a `Domain`; called from Python.
#[inline(always)]
unsafe fn off(slf: *mut ffi::PyObject) -> bool {
    // SAFETY: see the safety section.
    let py = unsafe { Python::assume_attached() };
    let d = unsafe { Borrowed::from_ptr(py, slf).cast_unchecked::<Domain>() };
    !crate::active() || !d.get().wanted
}

/// With nothing sent, an event call given its attributes (or nothing) by
/// position answers `answer` at once; a call of any
/// other shape (keywords, an argument of another type) goes through the
/// body, which checks it.
///
/// # Safety
/// `v` is CPython's arguments to a `Domain` method.
#[inline(always)]
unsafe fn event_off(v: Vector, answer: Answer) -> Option<*mut ffi::PyObject> {
    // SAFETY: see the safety section.
    if !unsafe { off(v.slf) } || !v.at_most(1) {
        return None;
    }
    let py = unsafe { Python::assume_attached() };
    if v.nargs == 1 {
        let a = unsafe { v.first(py) };
        if !a.is_none() && !EventAttributes::is_exact_type_of(&a) {
            return None;
        }
    }
    // SAFETY: called from Python.
    Some(unsafe { answer.object() })
}

// SAFETY (the `*_off` functions): CPython's arguments to a `Domain` method.
unsafe fn mark_off(v: Vector) -> Option<*mut ffi::PyObject> {
    unsafe { event_off(v, Answer::None) }
}

unsafe fn push_range_off(v: Vector) -> Option<*mut ffi::PyObject> {
    unsafe { event_off(v, Answer::Int(NO_TRACKING.into())) }
}

unsafe fn start_range_off(v: Vector) -> Option<*mut ffi::PyObject> {
    unsafe { event_off(v, Answer::Int(0)) }
}

unsafe fn pop_range_off(slf: *mut ffi::PyObject) -> Option<*mut ffi::PyObject> {
    unsafe { off(slf) }.then(|| unsafe { Answer::Int(NO_TRACKING.into()).object() })
}

/// One event method (`mark`, `push_range`, `start_range`): the attributes
/// (a `TypeError` if not `EventAttributes`), or (and) keywords that make or
/// change them; the tool's answer, or `off` with nothing sent.
///
/// # Safety
/// `v` is CPython's arguments to a `Domain` method.
unsafe fn event_call<R>(
    py: Python<'_>,
    function: &'static str,
    v: Vector,
    off: R,
    call: impl FnOnce(&StaticDomain, &Attributes) -> Result<R, Error>,
) -> PyResult<R> {
    let params = Params {
        function,
        names: &["attributes", "message", "color", "category", "payload"],
        positional: 1,
        required: 0,
    };
    // SAFETY: see the safety section.
    let [attributes, message, color, category, payload] = unsafe { params.parse(py, v) }?;
    let attributes = attributes
        .map(|a| Params::cast::<EventAttributes>("attributes", a))
        .transpose()?;
    let args = Args::new(
        message.as_deref(),
        color.as_deref(),
        category.as_deref(),
        payload.as_deref(),
    );
    let slf = unsafe { v.object::<Domain>(py) };
    Domain::event(&slf, attributes.as_deref(), args, off, call)
}

// SAFETY (the bodies): CPython's arguments to a `Domain` method.
unsafe fn mark(py: Python<'_>, v: Vector) -> PyResult<*mut ffi::PyObject> {
    unsafe { event_call(py, "mark", v, (), |d, a| d.mark(a, Family::Domain)) }?;
    Ok(py.None().into_ptr())
}

unsafe fn push_range(py: Python<'_>, v: Vector) -> PyResult<*mut ffi::PyObject> {
    let push = |d: &StaticDomain, a: &Attributes| d.push(a, Family::Domain);
    let depth = unsafe { event_call(py, "push_range", v, NO_TRACKING, push) }?;
    Ok(depth.into_pyobject(py)?.into_ptr())
}

unsafe fn start_range(py: Python<'_>, v: Vector) -> PyResult<*mut ffi::PyObject> {
    let start = |d: &StaticDomain, a: &Attributes| d.start(a, Family::Domain);
    let id = unsafe { event_call(py, "start_range", v, 0, start) }?;
    Ok(id.into_pyobject(py)?.into_ptr())
}

unsafe fn pop_range(py: Python<'_>, slf: *mut ffi::PyObject) -> PyResult<*mut ffi::PyObject> {
    let slf = unsafe { Borrowed::from_ptr(py, slf).cast_unchecked::<Domain>() };
    let d = slf.get();
    let depth = match d.wanted {
        false => NO_TRACKING,
        true => {
            name_thread_once(py);
            checked(py, d.inner.pop(Family::Domain), NO_TRACKING)
        }
    };
    Ok(depth.into_pyobject(py)?.into_ptr())
}

/// `end_range`'s parameters, the module's and the domain's.
pub(crate) const END_RANGE: Params = Params {
    function: "end_range",
    names: &["range_id"],
    positional: 1,
    required: 1,
};

unsafe fn end_range(py: Python<'_>, v: Vector) -> PyResult<*mut ffi::PyObject> {
    let [range_id] = unsafe { END_RANGE.parse(py, v) }?;
    let range_id: u64 = Params::extract("range_id", range_id.expect("a required argument"))?;
    unsafe { v.object::<Domain>(py) }.get().end(py, range_id);
    Ok(py.None().into_ptr())
}

impl Domain {
    /// Ends the range `id` (from `start_range`), if this domain's events
    /// are wanted.
    pub(crate) fn end(&self, py: Python<'_>, id: u64) {
        if self.wanted {
            name_thread_once(py);
            checked(py, self.inner.end(id, Family::Domain), ());
        }
    }
}

#[pymethods]
impl Domain {
    /// Registers a payload schema in this domain (`nvtxr._payloads` builds
    /// them from NumPy dtypes): `kind` (1 static, 2 dynamic), its size (0:
    /// none given), its entries as `(flags, type, name, length, offset)`,
    /// its flags (`NVTX_PAYLOAD_SCHEMA_FLAG_*`, 0: none) and each entry's
    /// counter semantic (as `nvtxr.counters` computes them; none if shorter).
    /// Returns its id; 0 with no tool.
    #[pyo3(signature = (kind, static_size, entries, flags=0, semantics=Vec::new()))]
    fn _register_schema(
        slf: &Bound<'_, Self>,
        kind: u64,
        static_size: usize,
        entries: Vec<(u64, u64, Option<String>, u64, u64)>,
        flags: u64,
        semantics: Vec<Option<crate::values::Semantics>>,
    ) -> u64 {
        crate::values::with_schema(
            kind,
            static_size,
            &entries,
            flags,
            &semantics,
            |attributes| checked(slf.py(), slf.get().inner.register_schema(attributes), 0),
        )
    }

    /// Registers `string` in this domain on first use; returns its handle.
    fn get_registered_string(
        slf: &Bound<'_, Self>,
        string: &Bound<'_, PyString>,
    ) -> PyResult<Option<Py<RegisteredString>>> {
        Domain::registered(slf, string)
    }

    /// The id of category `name` in this domain (1, 2, ... in order of first use).
    fn get_category_id(slf: &Bound<'_, Self>, name: &Bound<'_, PyString>) -> PyResult<u32> {
        Domain::category_id(slf, Some(name.as_any()))
    }

    /// Attributes resolved once, for reuse in `mark`, `push_range`, `start_range`.
    #[pyo3(signature = (message=None, color=None, category=None, payload=None))]
    fn get_event_attributes(
        slf: &Bound<'_, Self>,
        message: Option<&Bound<'_, PyAny>>,
        color: Option<&Bound<'_, PyAny>>,
        category: Option<&Bound<'_, PyAny>>,
        payload: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<EventAttributes> {
        Domain::resolve(slf, Args::new(message, color, category, payload))
    }

    /// Changes `attributes` in place: each of `message`, `color`,
    /// `category` and `payload` given is set (`None` clears it); the others
    /// are kept.
    #[pyo3(signature = (attributes, **keywords))]
    fn set_event_attributes(
        slf: &Bound<'_, Self>,
        attributes: &Bound<'_, EventAttributes>,
        keywords: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<()> {
        let Some(keywords) = keywords else {
            return Ok(());
        };
        const NAMES: [&str; 4] = ["message", "color", "category", "payload"];
        if let Some(unknown) = keywords
            .keys()
            .iter()
            .find(|k| !NAMES.iter().any(|n| k.eq(*n).unwrap_or(false)))
        {
            return Err(pyo3::exceptions::PyTypeError::new_err(format!(
                "set_event_attributes() got an unexpected keyword argument {}",
                unknown.repr()?
            )));
        }
        let [message, color, category, payload] = NAMES.map(|n| keywords.get_item(n));
        let (message, color, category, payload) = (message?, color?, category?, payload?);
        let changes = Args::new(
            message.as_ref(),
            color.as_ref(),
            category.as_ref(),
            payload.as_ref(),
        );
        Domain::assign(slf, attributes, changes)
    }

    /// A counter in this domain (NVIDIA's `Domain.get_counter`): an
    /// `Int64Counter` for `int`, a `Float64Counter` for `float`; made once
    /// per name and type, then the same object (see `nvtxr.counters`).
    #[pyo3(signature = (name, dtype, *, description=None, scope=None, semantics=None, time_domain=None))]
    #[allow(clippy::too_many_arguments)]
    fn get_counter<'py>(
        slf: &Bound<'py, Self>,
        name: &Bound<'py, PyAny>,
        dtype: &Bound<'py, PyAny>,
        description: Option<&Bound<'py, PyAny>>,
        scope: Option<&Bound<'py, PyAny>>,
        semantics: Option<&Bound<'py, PyAny>>,
        time_domain: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        slf.py().import("nvtxr.counters")?.call_method1(
            "get_counter",
            (slf, name, dtype, description, scope, semantics, time_domain),
        )
    }

    /// A timestamp of the tool's clock, for `Counter.batch_submit`
    /// (NVTX's `nvtxTimestampGet`); 0 with no tool.
    fn get_timestamp(&self) -> i64 {
        if !self.wanted {
            return 0;
        }
        nvtxr_engine::payloads::timestamp()
    }
}

/// The domain named `name` (`None`: the default domain), made once and cached.
#[pyfunction]
#[pyo3(signature = (name=None))]
pub(crate) fn get_domain(
    py: Python<'_>,
    name: Option<&Bound<'_, PyString>>,
) -> PyResult<Py<Domain>> {
    static DOMAINS: std::sync::OnceLock<Py<PyDict>> = std::sync::OnceLock::new();
    let domains = DOMAINS.get_or_init(|| PyDict::new(py).unbind()).bind(py);
    let key = name.map_or_else(|| py.None().into_bound(py), |n| n.clone().into_any());
    if let Some(d) = domains.get_item(&key)? {
        return Ok(d.cast_into::<Domain>()?.unbind());
    }
    let (inner, name) = match name {
        None => (StaticDomain::global(), None),
        Some(n) => {
            let name = crate::text(n);
            let n = name.to_string_lossy().into_owned();
            // Under NVTX_DISABLE nothing reaches the tool, not even the
            // domain's creation (NVIDIA's package makes a dummy domain).
            let created = match crate::disabled() {
                true => None,
                false => checked(py, StaticDomain::create(&name).map(Some), None),
            };
            (
                created.unwrap_or_else(|| StaticDomain::uninterned(&name)),
                Some(n),
            )
        }
    };
    // As NVIDIA's package: a new domain asks the tool whether it wants its
    // events (`nvtxDomainIsEnabled`, which initializes NVTX first); one it
    // does not want records nothing.
    let wanted = !crate::disabled() && checked(py, inner.is_enabled(), false);
    let d = Py::new(
        py,
        Domain {
            inner,
            name,
            wanted,
            strings: PyDict::new(py).unbind(),
            categories: PyDict::new(py).unbind(),
        },
    )?;
    domains.set_item(key, &d)?;
    Ok(d)
}
