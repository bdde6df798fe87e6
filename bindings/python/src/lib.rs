//! `nvtxr._native`: the hot path of the `nvtxr` Python package, on nvtxr's
//! NVTX core (not its C ABI). Every call checks for a tool first (one
//! atomic load) and returns at once without one; with a tool, messages are
//! registered strings cached per domain in a dict keyed by the `str` object
//! (its hash is cached), bounded so that formatted messages keep memory
//! bounded.

use nvtx_protocol::NO_PUSH_POP_TRACKING as NO_TRACKING;
use nvtxr_engine::attributes::Payload;
use nvtxr_engine::statics::{self as nb, Attributes, Family, StaticDomain, StaticString, Text};
use nvtxr_engine::{loader, naming, thread, Error};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyFloat, PyInt, PyString};
use std::cell::Cell;
use std::ffi::CString;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// Distinct messages registered per domain; later ones are sent as text.
const STRING_CACHE: usize = 65536;

/// NVIDIA's `nvtx` color names and values (RGB, alpha 0, as it sends them),
/// then CSS names it needs matplotlib for.
const COLORS: &[(&str, u32)] = &[
    ("green", 0x008000),
    ("blue", 0x0000FF),
    ("yellow", 0xFFFF00),
    ("purple", 0x800080),
    ("rapids", 0x7400FF),
    ("cyan", 0x00FFFF),
    ("red", 0xFF0000),
    ("white", 0xFFFFFF),
    ("darkgreen", 0x006400),
    ("orange", 0xFFA500),
    ("black", 0x000000),
    ("gray", 0x808080),
    ("grey", 0x808080),
    ("silver", 0xC0C0C0),
    ("maroon", 0x800000),
    ("magenta", 0xFF00FF),
    ("fuchsia", 0xFF00FF),
    ("lime", 0x00FF00),
    ("olive", 0x808000),
    ("navy", 0x000080),
    ("teal", 0x008080),
    ("aqua", 0x00FFFF),
    ("pink", 0xFFC0CB),
    ("brown", 0xA52A2A),
    ("gold", 0xFFD700),
    ("violet", 0xEE82EE),
    ("indigo", 0x4B0082),
    ("nvidia", 0x76B900),
];

/// Whether each Python thread's OS thread is named after it on its first event.
static NAME_THREADS: AtomicBool = AtomicBool::new(true);

/// Bumped in a child `os.fork` made: its threads are named again (a tool
/// records each process apart, and the child's thread inherited the flag).
static FORK_GENERATION: AtomicU64 = AtomicU64::new(1);

thread_local! {
    /// The fork generation in which this thread was named (0: never).
    static THREAD_NAMED: Cell<u64> = const { Cell::new(0) };
}

/// Names this OS thread after `threading.current_thread().name`, once per
/// process, at its first NVTX call of any kind (with a tool: without one
/// there is nobody to tell).
fn name_thread_once(py: Python<'_>) {
    if !nb::enabled() {
        return;
    }
    let generation = FORK_GENERATION.load(Ordering::Relaxed);
    if THREAD_NAMED.with(|n| n.replace(generation)) == generation
        || !NAME_THREADS.load(Ordering::Relaxed)
    {
        return;
    }
    let name = py
        .import("threading")
        .and_then(|t| t.call_method0("current_thread"))
        .and_then(|t| t.getattr("name"))
        .and_then(|n| n.extract::<String>());
    if let Ok(name) = name {
        name_os_thread(&name);
    }
}

/// Names the calling OS thread (when a tool is attached).
fn name_os_thread(name: &str) {
    if nb::enabled() {
        let name = c_string(name);
        // SAFETY: a valid C string for the call.
        unsafe { naming::name_os_thread(thread::current_os_thread_id(), name.as_ptr()) }
    }
}

/// An engine result at the Python door, which never raises for an NVTX
/// call: the value, or, when the engine refused the call, a
/// `RuntimeWarning` saying why and `fallback`.
fn checked<T>(py: Python<'_>, result: Result<T, Error>, fallback: T) -> T {
    result.unwrap_or_else(|e| {
        let warning = py.get_type::<pyo3::exceptions::PyRuntimeWarning>();
        let _ = PyErr::warn(py, &warning, &c_string(&format!("nvtxr: {e}")), 1);
        fallback
    })
}

fn c_string(s: &str) -> CString {
    CString::new(s.replace('\0', "\u{FFFD}")).expect("NULs replaced")
}

/// A string registered in a domain (`Domain.get_registered_string`).
#[pyclass(frozen, module = "nvtxr")]
pub struct RegisteredString {
    inner: StaticString,
    #[pyo3(get)]
    string: Py<PyString>,
}

/// A domain: named group of events, categories and registered strings
/// (`nvtxr.get_domain(name)`; `None` is the default domain).
#[pyclass(frozen, module = "nvtxr")]
pub struct Domain {
    inner: StaticDomain,
    #[pyo3(get)]
    name: Option<String>,
    /// `str` -> `RegisteredString`.
    strings: Py<PyDict>,
    /// `str` -> category id.
    categories: Py<PyDict>,
}

/// An event's attributes, resolved once (`Domain.get_event_attributes`).
#[pyclass(frozen, module = "nvtxr")]
pub struct EventAttributes {
    domain: Py<Domain>,
    message: Option<Py<RegisteredString>>,
    /// Messages past the cache bound, sent as text.
    text: Option<CString>,
    color: Option<u32>,
    category: u32,
    payload: Option<Payload>,
}

impl EventAttributes {
    fn attributes(&self) -> Attributes<'_> {
        Attributes {
            message: match (&self.message, &self.text) {
                (Some(s), _) => Text::Registered(s.get().inner),
                (None, Some(t)) => Text::Text(t),
                (None, None) => Text::None,
            },
            color: self.color,
            category: self.category,
            payload: self.payload,
        }
    }

    fn domain(&self) -> StaticDomain {
        self.domain.get().inner
    }
}

/// NVIDIA's default color, blue (what `None` means).
const DEFAULT_COLOR: u32 = 0x0000FF;

/// Says, as a Python warning, what was wrong with an argument and what was
/// sent instead. Bad arguments never raise: they could only be seen with a
/// tool attached (without one nothing is read), and annotating must not
/// make a program fail only when it is profiled.
fn warn(py: Python<'_>, what: String) -> PyResult<()> {
    py.import("warnings")?
        .call_method1("warn", (format!("nvtxr: {what}"),))?;
    Ok(())
}

/// A color: a name, `#RRGGBB`, or an ARGB int; `None` is NVIDIA's default,
/// blue. Anything else: a warning, and the default.
fn color(c: Option<&Bound<'_, PyAny>>) -> PyResult<u32> {
    let Some(c) = c.filter(|c| !c.is_none()) else {
        return Ok(DEFAULT_COLOR);
    };
    match color_value(c) {
        Ok(v) => Ok(v),
        Err(why) => {
            warn(
                c.py(),
                format!("{why}; the event is sent with the default color"),
            )?;
            Ok(DEFAULT_COLOR)
        }
    }
}

fn color_value(c: &Bound<'_, PyAny>) -> Result<u32, String> {
    if let Ok(v) = c.cast::<PyInt>() {
        return v
            .extract::<u32>()
            .map_err(|_| format!("color {c} is not a 32-bit ARGB value"));
    }
    let name: String = c
        .extract()
        .map_err(|_| format!("color must be a name or an ARGB int, not {c:?}"))?;
    let lower = name.to_ascii_lowercase();
    if let Some(hex) = lower.strip_prefix('#') {
        if hex.len() == 6 {
            if let Ok(v) = u32::from_str_radix(hex, 16) {
                return Ok(0xFF00_0000 | v);
            }
        }
    }
    COLORS
        .iter()
        .find(|(n, _)| *n == lower)
        .map(|(_, v)| *v)
        .ok_or_else(|| {
            format!(
                "invalid color {name:?}: use an ARGB int, \"#RRGGBB\" or one of {}",
                COLORS
                    .iter()
                    .map(|(n, _)| *n)
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        })
}

/// A payload: int (sent as i64, as NVIDIA's package does) or float (f64).
fn payload(py: Python<'_>, p: Option<&Bound<'_, PyAny>>) -> PyResult<Option<Payload>> {
    let Some(p) = p.filter(|p| !p.is_none()) else {
        return Ok(None);
    };
    if let Ok(i) = p.cast::<PyInt>() {
        if let Ok(v) = i.extract::<i64>() {
            return Ok(Some(Payload::I64(v)));
        }
        if let Ok(v) = i.extract::<u64>() {
            return Ok(Some(Payload::U64(v)));
        }
    }
    if let Ok(f) = p.cast::<PyFloat>() {
        return Ok(Some(Payload::F64(f.value())));
    }
    let why = if p.cast::<PyInt>().is_ok() {
        format!("payload {p} is out of 64-bit range")
    } else {
        format!(
            "unsupported payload of type {} (int or float)",
            p.get_type().name()?
        )
    };
    warn(py, format!("{why}; the event is sent without it"))?;
    Ok(None)
}

impl Domain {
    fn registered(
        slf: &Bound<'_, Domain>,
        message: &Bound<'_, PyString>,
    ) -> PyResult<Option<Py<RegisteredString>>> {
        let py = slf.py();
        let strings = slf.get().strings.bind(py);
        if let Some(s) = strings.get_item(message)? {
            return Ok(Some(s.cast_into::<RegisteredString>()?.unbind()));
        }
        if strings.len() >= STRING_CACHE {
            return Ok(None);
        }
        let text = c_string(&message.to_cow()?);
        let domain = &slf.get().inner;
        let registered = domain.register(&text);
        let inner = checked(py, registered.map(Some), None)
            .unwrap_or_else(|| domain.uninterned_string(&text));
        let s = Py::new(
            py,
            RegisteredString {
                inner,
                string: message.clone().unbind(),
            },
        )?;
        strings.set_item(message, &s)?;
        Ok(Some(s))
    }

    fn category_id(slf: &Bound<'_, Domain>, category: Option<&Bound<'_, PyAny>>) -> PyResult<u32> {
        let Some(c) = category.filter(|c| !c.is_none()) else {
            return Ok(0);
        };
        if let Ok(name) = c.cast::<PyString>() {
            let py = slf.py();
            let categories = slf.get().categories.bind(py);
            if let Some(id) = categories.get_item(name)? {
                return id.extract();
            }
            let id = categories.len() as u32 + 1;
            categories.set_item(name, id)?;
            let named = slf
                .get()
                .inner
                .name_category(id, &c_string(&name.to_cow()?));
            checked(py, named, ());
            return Ok(id);
        }
        match c.extract::<u32>() {
            Ok(id) => Ok(id),
            Err(_) => {
                warn(
                    slf.py(),
                    format!("category must be a str or a 32-bit int, not {c:?}; the event is sent without it"),
                )?;
                Ok(0)
            }
        }
    }

    /// Resolves the attributes of one event.
    fn resolve(
        slf: &Bound<'_, Domain>,
        message: Option<&Bound<'_, PyAny>>,
        color_: Option<&Bound<'_, PyAny>>,
        category: Option<&Bound<'_, PyAny>>,
        payload_: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<EventAttributes> {
        let py = slf.py();
        // In NVIDIA's order: the category is named before the message is registered.
        let category = Domain::category_id(slf, category)?;
        let (message, text) = match message.filter(|m| !m.is_none()) {
            None => (None, None),
            Some(m) => {
                if let Ok(r) = m.cast::<RegisteredString>() {
                    (Some(r.clone().unbind()), None)
                } else {
                    // Not a str: sent as `str(message)` (never an error).
                    let text = match m.cast::<PyString>() {
                        Ok(s) => s.clone(),
                        Err(_) => m.str()?,
                    };
                    let s = &text;
                    match Domain::registered(slf, s)? {
                        Some(r) => (Some(r), None),
                        None => (None, Some(c_string(&s.to_cow()?))),
                    }
                }
            }
        };
        Ok(EventAttributes {
            domain: slf.clone().unbind(),
            message,
            text,
            color: Some(color(color_)?),
            category,
            payload: payload(py, payload_)?,
        })
    }
}

impl Domain {
    /// One event method: with no tool returns `off` at once; else resolves
    /// the attributes (or takes the given ones) and calls `call`.
    #[allow(clippy::too_many_arguments)]
    fn event<R>(
        slf: &Bound<'_, Self>,
        attributes: Option<&Bound<'_, EventAttributes>>,
        message: Option<&Bound<'_, PyAny>>,
        color: Option<&Bound<'_, PyAny>>,
        category: Option<&Bound<'_, PyAny>>,
        payload: Option<&Bound<'_, PyAny>>,
        off: R,
        call: impl FnOnce(&StaticDomain, &Attributes) -> Result<R, Error>,
    ) -> PyResult<R> {
        if !nb::enabled() {
            return Ok(off);
        }
        name_thread_once(slf.py());
        let resolved;
        let a = match attributes {
            Some(a) => a.get(),
            None => {
                resolved = Domain::resolve(slf, message, color, category, payload)?;
                &resolved
            }
        };
        Ok(checked(
            slf.py(),
            call(&slf.get().inner, &a.attributes()),
            off,
        ))
    }
}

#[pymethods]
impl Domain {
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
        Domain::resolve(slf, message, color, category, payload)
    }

    /// An instantaneous event.
    #[pyo3(signature = (attributes=None, *, message=None, color=None, category=None, payload=None))]
    fn mark(
        slf: &Bound<'_, Self>,
        attributes: Option<&Bound<'_, EventAttributes>>,
        message: Option<&Bound<'_, PyAny>>,
        color: Option<&Bound<'_, PyAny>>,
        category: Option<&Bound<'_, PyAny>>,
        payload: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        Domain::event(
            slf,
            attributes,
            message,
            color,
            category,
            payload,
            (),
            |d, a| d.mark(a, Family::Domain),
        )
    }

    /// Opens a range on this OS thread; returns the tool's depth (-2 with no tool).
    #[pyo3(signature = (attributes=None, *, message=None, color=None, category=None, payload=None))]
    fn push_range(
        slf: &Bound<'_, Self>,
        attributes: Option<&Bound<'_, EventAttributes>>,
        message: Option<&Bound<'_, PyAny>>,
        color: Option<&Bound<'_, PyAny>>,
        category: Option<&Bound<'_, PyAny>>,
        payload: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<i32> {
        Domain::event(
            slf,
            attributes,
            message,
            color,
            category,
            payload,
            NO_TRACKING,
            |d, a| d.push(a, Family::Domain),
        )
    }

    /// Starts a range that any thread may end; returns its id (0 with no tool).
    #[pyo3(signature = (attributes=None, *, message=None, color=None, category=None, payload=None))]
    fn start_range(
        slf: &Bound<'_, Self>,
        attributes: Option<&Bound<'_, EventAttributes>>,
        message: Option<&Bound<'_, PyAny>>,
        color: Option<&Bound<'_, PyAny>>,
        category: Option<&Bound<'_, PyAny>>,
        payload: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<u64> {
        Domain::event(
            slf,
            attributes,
            message,
            color,
            category,
            payload,
            0,
            |d, a| d.start(a, Family::Domain),
        )
    }

    /// Closes this OS thread's innermost range in this domain.
    fn pop_range(&self, py: Python<'_>) -> i32 {
        name_thread_once(py);
        checked(py, self.inner.pop(Family::Domain), NO_TRACKING)
    }

    /// Ends the range `range_id` (from `start_range`), on any thread.
    fn end_range(&self, py: Python<'_>, range_id: u64) {
        name_thread_once(py);
        checked(py, self.inner.end(range_id, Family::Domain), ());
    }
}

/// The domain named `name` (`None`: the default domain), made once and cached.
#[pyfunction]
#[pyo3(signature = (name=None))]
fn get_domain(py: Python<'_>, name: Option<&Bound<'_, PyString>>) -> PyResult<Py<Domain>> {
    static DOMAINS: std::sync::OnceLock<Py<PyDict>> = std::sync::OnceLock::new();
    let domains = DOMAINS.get_or_init(|| PyDict::new(py).unbind()).bind(py);
    let key = name.map_or_else(|| py.None().into_bound(py), |n| n.clone().into_any());
    if let Some(d) = domains.get_item(&key)? {
        return Ok(d.cast_into::<Domain>()?.unbind());
    }
    let (inner, name) = match name {
        None => (StaticDomain::global(), None),
        Some(n) => {
            let n = n.to_cow()?.into_owned();
            let name = c_string(&n);
            let created = checked(py, StaticDomain::create(&name).map(Some), None);
            (
                created.unwrap_or_else(|| StaticDomain::uninterned(&name)),
                Some(n),
            )
        }
    };
    let d = Py::new(
        py,
        Domain {
            inner,
            name,
            strings: PyDict::new(py).unbind(),
            categories: PyDict::new(py).unbind(),
        },
    )?;
    domains.set_item(key, &d)?;
    // NVIDIA's package calls nvtxInitialize once, after its first domain.
    static INITIALIZE: std::sync::Once = std::sync::Once::new();
    INITIALIZE.call_once(|| {
        loader::initialize_and_forward();
    });
    Ok(d)
}

/// A decorator's arguments, kept until it learns the function's name.
struct Deferred {
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
        if !nb::enabled() {
            return Ok(annotate {
                attributes: None,
                args: None,
            });
        }
        let d = get_domain(py, domain)?;
        let d = d.bind(py);
        let no_message = message.is_none_or(|m| m.is_none());
        let attributes = Py::new(py, Domain::resolve(d, message, color, category, payload)?)?;
        let unbind = |o: Option<&Bound<'_, PyAny>>| o.map(|o| o.clone().unbind());
        Ok(annotate {
            attributes: Some(attributes),
            args: no_message.then(|| Deferred {
                domain: d.clone().unbind(),
                color: unbind(color),
                category: unbind(category),
                payload: unbind(payload),
            }),
        })
    }

    fn __enter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        if let Some(a) = &slf.attributes {
            name_thread_once(slf.py());
            let a = a.get();
            checked(
                slf.py(),
                a.domain().push(&a.attributes(), Family::Domain),
                0,
            );
        }
        slf
    }

    #[pyo3(signature = (*exc))]
    fn __exit__(&self, exc: &Bound<'_, pyo3::types::PyTuple>) -> bool {
        if let Some(a) = &self.attributes {
            checked(exc.py(), a.get().domain().pop(Family::Domain), 0);
        }
        false
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
            let resolved = Domain::resolve(
                d.bind(py),
                Some(&name),
                color.as_ref().map(|c| c.bind(py)),
                category.as_ref().map(|c| c.bind(py)),
                payload.as_ref().map(|c| c.bind(py)),
            )?;
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

/// What `@annotate` with no message names a range: the callable's qualified
/// name, else its name, else (a `functools.partial`, an object with
/// `__call__`) the wrapped function's or the type's; never an error.
fn callable_name<'py>(func: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    for attribute in ["__qualname__", "__name__"] {
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

/// `nvtxr._decorate`'s primitives: the event calls on resolved attributes.
#[pyfunction]
fn _push(py: Python<'_>, a: &Bound<'_, EventAttributes>) -> i32 {
    name_thread_once(py);
    let a = a.get();
    checked(
        py,
        a.domain().push(&a.attributes(), Family::Domain),
        NO_TRACKING,
    )
}

#[pyfunction]
fn _pop(a: &Bound<'_, EventAttributes>) -> i32 {
    name_thread_once(a.py());
    checked(a.py(), a.get().domain().pop(Family::Domain), NO_TRACKING)
}

#[pyfunction]
fn _start(py: Python<'_>, a: &Bound<'_, EventAttributes>) -> u64 {
    name_thread_once(py);
    let a = a.get();
    checked(py, a.domain().start(&a.attributes(), Family::Domain), 0)
}

#[pyfunction]
fn _end(a: &Bound<'_, EventAttributes>, id: u64) {
    name_thread_once(a.py());
    checked(a.py(), a.get().domain().end(id, Family::Domain), ());
}

/// `func(*args, **kwargs)` inside a push/pop range: one call from the
/// decorator's wrapper instead of three. The range is popped whether `func`
/// returns or raises.
#[pyfunction]
#[pyo3(signature = (a, func, args, kwargs=None))]
fn _call<'py>(
    a: &Bound<'py, EventAttributes>,
    func: &Bound<'py, PyAny>,
    args: &Bound<'py, pyo3::types::PyTuple>,
    kwargs: Option<&Bound<'py, PyDict>>,
) -> PyResult<Bound<'py, PyAny>> {
    name_thread_once(a.py());
    let attributes = a.get();
    let domain = attributes.domain();
    let py = a.py();
    checked(py, domain.push(&attributes.attributes(), Family::Domain), 0);
    let result = func.call(args, kwargs);
    checked(py, domain.pop(Family::Domain), 0);
    result
}

/// Module-level event functions: `domain` by name (`None`: the default).
macro_rules! module_fn {
    ($(#[$doc:meta])* $name:ident, $call:ident, $ret:ty, $off:expr, $default_color:expr) => {
        $(#[$doc])*
        #[pyfunction]
        #[pyo3(signature = (message=None, color=$default_color, domain=None, category=None, payload=None))]
        fn $name(
            py: Python<'_>,
            message: Option<&Bound<'_, PyAny>>,
            color: Option<&Bound<'_, PyAny>>,
            domain: Option<&Bound<'_, PyString>>,
            category: Option<&Bound<'_, PyAny>>,
            payload: Option<&Bound<'_, PyAny>>,
        ) -> PyResult<$ret> {
            if !nb::enabled() {
                return Ok($off);
            }
            name_thread_once(py);
            let d = get_domain(py, domain)?;
            let d = d.bind(py);
            let a = Domain::resolve(d, message, color, category, payload)?;
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
fn start_range(
    py: Python<'_>,
    message: Option<&Bound<'_, PyAny>>,
    color: Option<&Bound<'_, PyAny>>,
    domain: Option<&Bound<'_, PyString>>,
    category: Option<&Bound<'_, PyAny>>,
    payload: Option<&Bound<'_, PyAny>>,
) -> PyResult<Option<(u64, Py<Domain>)>> {
    if !nb::enabled() {
        return Ok(None);
    }
    name_thread_once(py);
    let d = get_domain(py, domain)?;
    let a = Domain::resolve(d.bind(py), message, color, category, payload)?;
    let id = checked(py, d.get().inner.start(&a.attributes(), Family::Domain), 0);
    Ok(Some((id, d)))
}

/// Ends a range from `start_range`, on any thread; `None` is ignored.
#[pyfunction]
fn end_range(py: Python<'_>, range_id: Option<(u64, Py<Domain>)>) {
    if let Some((id, d)) = range_id {
        name_thread_once(py);
        checked(py, d.get().inner.end(id, Family::Domain), ());
    }
}

/// Closes this OS thread's innermost range in `domain`.
#[pyfunction]
#[pyo3(signature = (domain=None))]
fn pop_range(py: Python<'_>, domain: Option<&Bound<'_, PyString>>) -> PyResult<i32> {
    if !nb::enabled() {
        return Ok(NO_TRACKING);
    }
    name_thread_once(py);
    let popped = get_domain(py, domain)?.get().inner.pop(Family::Domain);
    Ok(checked(py, popped, NO_TRACKING))
}

/// Whether a tool is attached (`NVTX_INJECTION64_PATH`): when not, every
/// call returns at once.
#[pyfunction]
fn enabled() -> bool {
    nb::enabled()
}

/// Turns the naming of OS threads after Python threads on or off (on by default).
#[pyfunction]
fn name_threads(on: bool) {
    NAME_THREADS.store(on, Ordering::Relaxed);
}

/// Names the calling OS thread (what the timeline shows for it).
#[pyfunction]
fn name_current_thread(name: &str) {
    THREAD_NAMED.with(|n| n.set(FORK_GENERATION.load(Ordering::Relaxed)));
    name_os_thread(name);
}

/// Why the configured tool did not attach, if it did not.
#[pyfunction]
fn load_error() -> Option<String> {
    loader::tool_attached();
    loader::load_error().map(|e| e.to_string_lossy().into_owned())
}

/// Text-only events in the default domain (`torch.cuda.nvtx`'s calls): the
/// `...A` slots, as PyTorch sends them.
macro_rules! text_fn {
    ($name:ident, $call:ident, $ret:ty, $off:expr) => {
        #[pyfunction]
        fn $name(py: Python<'_>, message: &str) -> $ret {
            if !nb::enabled() {
                return $off;
            }
            name_thread_once(py);
            let text = c_string(message);
            let called = StaticDomain::global().$call(
                &Attributes {
                    message: Text::Text(&text),
                    color: None,
                    category: 0,
                    payload: None,
                },
                Family::Default,
            );
            checked(py, called, $off)
        }
    };
}

#[pyfunction]
fn _text_mark(py: Python<'_>, message: &str) {
    if nb::enabled() {
        name_thread_once(py);
        let marked = StaticDomain::global().mark(
            &Attributes {
                message: Text::Text(&c_string(message)),
                color: None,
                category: 0,
                payload: None,
            },
            Family::Default,
        );
        checked(py, marked, ());
    }
}
text_fn!(_text_push, push, i32, NO_TRACKING);
text_fn!(_text_start, start, u64, 0);

#[pyfunction]
fn _text_pop(py: Python<'_>) -> i32 {
    name_thread_once(py);
    checked(py, StaticDomain::global().pop(Family::Default), NO_TRACKING)
}

#[pyfunction]
fn _text_end(py: Python<'_>, id: u64) {
    name_thread_once(py);
    checked(py, StaticDomain::global().end(id, Family::Default), ());
}

/// Run by Python in a child `os.fork` made (see `FORK_GENERATION`).
#[pyfunction]
fn _forked() {
    FORK_GENERATION.fetch_add(1, Ordering::Relaxed);
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let forked = wrap_pyfunction!(_forked, m)?;
    let hook = PyDict::new(m.py());
    hook.set_item("after_in_child", &forked)?;
    m.py()
        .import("os")?
        .call_method("register_at_fork", (), Some(&hook))?;
    m.add_function(forked)?;
    m.add_class::<Domain>()?;
    m.add_class::<RegisteredString>()?;
    m.add_class::<EventAttributes>()?;
    m.add_class::<annotate>()?;
    m.add_function(wrap_pyfunction!(get_domain, m)?)?;
    m.add_function(wrap_pyfunction!(mark, m)?)?;
    m.add_function(wrap_pyfunction!(push_range, m)?)?;
    m.add_function(wrap_pyfunction!(pop_range, m)?)?;
    m.add_function(wrap_pyfunction!(start_range, m)?)?;
    m.add_function(wrap_pyfunction!(end_range, m)?)?;
    m.add_function(wrap_pyfunction!(enabled, m)?)?;
    m.add_function(wrap_pyfunction!(name_threads, m)?)?;
    m.add_function(wrap_pyfunction!(name_current_thread, m)?)?;
    m.add_function(wrap_pyfunction!(load_error, m)?)?;
    m.add_function(wrap_pyfunction!(_push, m)?)?;
    m.add_function(wrap_pyfunction!(_pop, m)?)?;
    m.add_function(wrap_pyfunction!(_start, m)?)?;
    m.add_function(wrap_pyfunction!(_end, m)?)?;
    m.add_function(wrap_pyfunction!(_call, m)?)?;
    m.add_function(wrap_pyfunction!(_text_mark, m)?)?;
    m.add_function(wrap_pyfunction!(_text_push, m)?)?;
    m.add_function(wrap_pyfunction!(_text_start, m)?)?;
    m.add_function(wrap_pyfunction!(_text_pop, m)?)?;
    m.add_function(wrap_pyfunction!(_text_end, m)?)?;
    Ok(())
}
