//! Domains, registered strings and resolved event attributes.

use crate::checked;
use crate::threads::name_thread_once;
use crate::values::{color, payload, warn};
use nvtx_protocol::payload::PayloadData;
use nvtx_protocol::NO_PUSH_POP_TRACKING as NO_TRACKING;
use nvtxr_engine::attributes::Payload;
use nvtxr_engine::statics::{Attributes, Family, StaticDomain, StaticString, Text};
use nvtxr_engine::Error;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyFloat, PyInt, PyString};
use std::ffi::CString;

/// An event's keyword arguments as Python passed them (`message`, `color`,
/// `category`, `payload`; `None` or absent alike): what every event call
/// takes, resolved into attributes in one place ([`Domain::resolve`]).
#[derive(Clone, Copy, Default)]
pub(crate) struct Args<'a, 'py> {
    pub message: Option<&'a Bound<'py, PyAny>>,
    pub color: Option<&'a Bound<'py, PyAny>>,
    pub category: Option<&'a Bound<'py, PyAny>>,
    pub payload: Option<&'a Bound<'py, PyAny>>,
}

impl<'a, 'py> Args<'a, 'py> {
    /// The attributes given other than `None` (what an event call given
    /// attributes too changes in them).
    fn not_none(self) -> Self {
        let given = |a: Option<&'a Bound<'py, PyAny>>| a.filter(|a| !a.is_none());
        Args::new(
            given(self.message),
            given(self.color),
            given(self.category),
            given(self.payload),
        )
    }

    pub fn new(
        message: Option<&'a Bound<'py, PyAny>>,
        color: Option<&'a Bound<'py, PyAny>>,
        category: Option<&'a Bound<'py, PyAny>>,
        payload: Option<&'a Bound<'py, PyAny>>,
    ) -> Self {
        Args {
            message,
            color,
            category,
            payload,
        }
    }
}

/// Distinct messages registered per domain; later ones are sent as text.
pub(crate) const STRING_CACHE: usize = 65536;

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
    pub(crate) inner: StaticDomain,
    /// Whether the tool wants its events (see `get_domain`).
    pub(crate) wanted: bool,
    #[pyo3(get)]
    name: Option<String>,
    /// `str` -> `RegisteredString`.
    strings: Py<PyDict>,
    /// `str` -> category id.
    categories: Py<PyDict>,
}

/// An event's attributes, resolved once (`Domain.get_event_attributes`);
/// `Domain.set_event_attributes` (or an event call given both attributes and
/// keywords) changes them in place, as NVIDIA's package does.
#[pyclass(module = "nvtxr")]
pub struct EventAttributes {
    domain: Py<Domain>,
    message: Option<Py<RegisteredString>>,
    /// Messages past the cache bound, sent as text.
    text: Option<CString>,
    color: Option<u32>,
    category: u32,
    payload: Option<Payload>,
    /// An extended payload (a NumPy value, a list, a tuple, a range, bytes).
    extended: Option<Extended>,
    /// `annotate`'s payload of a mutable type (a list, an array): encoded
    /// again each time the range opens, as NVIDIA's package does.
    mutable_payload: Option<Py<PyAny>>,
    /// The payload as given, for `.payload`.
    given_payload: Option<Py<PyAny>>,
}

/// An extended payload: its bytes, and the payload data pointing at them.
struct Extended {
    data: PayloadData,
    _bytes: Py<PyBytes>,
}

// SAFETY: `data` points into `_bytes`, an immutable `bytes` object this
// struct owns, so it is valid wherever the struct is.
unsafe impl Send for Extended {}
// SAFETY: as above; nothing is mutated.
unsafe impl Sync for Extended {}

impl Extended {
    /// `value` encoded by `nvtxr._payloads` for `domain` (NVIDIA's
    /// encoding); `None` when it has nothing to send (it warned if so).
    fn encode(domain: &Bound<'_, Domain>, value: &Bound<'_, PyAny>) -> PyResult<Option<Extended>> {
        let py = domain.py();
        let encoded = py
            .import("nvtxr._payloads")?
            .call_method1("encode", (domain, value))?;
        if encoded.is_none() {
            return Ok(None);
        }
        let (schema_id, bytes): (u64, Bound<'_, PyBytes>) = encoded.extract()?;
        let data = PayloadData {
            schema_id,
            size: bytes.as_bytes().len(),
            payload: bytes.as_bytes().as_ptr().cast(),
        };
        Ok(Some(Extended {
            data,
            _bytes: bytes.unbind(),
        }))
    }
}

impl EventAttributes {
    pub(crate) fn attributes(&self) -> Attributes<'_> {
        Attributes {
            message: match (&self.message, &self.text) {
                (Some(s), _) => Text::Registered(s.get().inner),
                (None, Some(t)) => Text::Text(t),
                (None, None) => Text::None,
            },
            color: self.color,
            category: self.category,
            payload: self.payload,
            extended: self.extended.as_ref().map(|x| &x.data),
        }
    }

    pub(crate) fn domain(&self) -> StaticDomain {
        self.domain.get().inner
    }
}

/// What the attributes say, as NVIDIA's `EventAttributes` shows them
/// (`annotate(...).attributes.message.string`).
#[pymethods]
impl EventAttributes {
    /// The message: a registered string (`.string` is its text), the text
    /// itself past the registered-string cache, or `None`.
    #[getter]
    fn message(&self, py: Python<'_>) -> Option<Py<PyAny>> {
        match (&self.message, &self.text) {
            (Some(s), _) => Some(s.clone_ref(py).into_any()),
            (None, Some(t)) => Some(PyString::new(py, &t.to_string_lossy()).into_any().unbind()),
            (None, None) => None,
        }
    }

    /// The color, as an ARGB integer (`None`: none).
    #[getter]
    fn color(&self) -> Option<u32> {
        self.color
    }

    /// The category's id in its domain (0: none).
    #[getter]
    fn category(&self) -> u32 {
        self.category
    }

    /// The payload as it was given (`None`: none).
    #[getter]
    fn payload(&self, py: Python<'_>) -> Option<Py<PyAny>> {
        self.given_payload.as_ref().map(|p| p.clone_ref(py))
    }

    /// The domain the event goes to.
    #[getter(domain)]
    fn event_domain(&self, py: Python<'_>) -> Py<Domain> {
        self.domain.clone_ref(py)
    }
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
        let text = crate::text(message);
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
                .name_category(id, &crate::text(name), Family::Domain);
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
    pub(crate) fn resolve(slf: &Bound<'_, Domain>, args: Args) -> PyResult<EventAttributes> {
        // In NVIDIA's order: the category is named before the message is registered.
        let category = Domain::category_id(slf, args.category)?;
        let (message, text) = Domain::message(slf, args.message)?;
        let (payload, extended) = Domain::payload(slf, args.payload)?;
        Ok(EventAttributes {
            domain: slf.clone().unbind(),
            message,
            text,
            color: Some(color(args.color)?),
            category,
            payload,
            extended,
            mutable_payload: None,
            given_payload: args
                .payload
                .filter(|p| !p.is_none())
                .map(|p| p.clone().unbind()),
        })
    }

    /// [`Domain::resolve`] for `annotate`: a payload of a mutable type is
    /// kept rather than encoded, and encoded at each use ([`refresh`]).
    pub(crate) fn resolve_kept(slf: &Bound<'_, Domain>, args: Args) -> PyResult<EventAttributes> {
        let py = slf.py();
        let immutable = |p: &Bound<'_, PyAny>| {
            let t = p.get_type();
            [
                py.get_type::<PyInt>(),
                py.get_type::<PyFloat>(),
                py.get_type::<pyo3::types::PyTuple>(),
                py.get_type::<pyo3::types::PyRange>(),
                py.get_type::<pyo3::types::PyBytes>(),
            ]
            .iter()
            .any(|i| t.is(i))
        };
        match args.payload.filter(|p| !p.is_none() && !immutable(p)) {
            None => Domain::resolve(slf, args),
            Some(kept) => {
                let kept = kept.clone().unbind();
                let mut a = Domain::resolve(
                    slf,
                    Args {
                        payload: None,
                        ..args
                    },
                )?;
                a.mutable_payload = Some(kept);
                Ok(a)
            }
        }
    }

    /// A message: registered in this domain (up to the cache bound), else
    /// sent as text; not a `str`, sent as `str(message)` (never an error).
    fn message(
        slf: &Bound<'_, Domain>,
        message: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<(Option<Py<RegisteredString>>, Option<CString>)> {
        let Some(m) = message.filter(|m| !m.is_none()) else {
            return Ok((None, None));
        };
        if let Ok(r) = m.cast::<RegisteredString>() {
            return Ok((Some(r.clone().unbind()), None));
        }
        let text = match m.cast::<PyString>() {
            Ok(s) => s.clone(),
            Err(_) => m.str()?,
        };
        Ok(match Domain::registered(slf, &text)? {
            Some(r) => (Some(r), None),
            None => (None, Some(crate::text(&text))),
        })
    }

    /// A payload: numbers go in the event itself; anything else as NVIDIA's
    /// package sends it, an extended payload.
    fn payload(
        slf: &Bound<'_, Domain>,
        value: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<(Option<Payload>, Option<Extended>)> {
        Ok(match value.filter(|p| !p.is_none()) {
            None => (None, None),
            Some(p) if p.is_instance_of::<PyInt>() || p.is_instance_of::<PyFloat>() => {
                (payload(slf.py(), p)?, None)
            }
            Some(p) => (None, Extended::encode(slf, p)?),
        })
    }

    /// Changes the attributes `changes` gives (a `None` value clears one),
    /// in NVIDIA's order; the others are kept.
    fn assign(
        slf: &Bound<'_, Domain>,
        attributes: &Bound<'_, EventAttributes>,
        changes: Args,
    ) -> PyResult<()> {
        if let Some(m) = changes.message {
            let (message, text) = Domain::message(slf, Some(m))?;
            let mut a = attributes.borrow_mut();
            (a.message, a.text) = (message, text);
        }
        if let Some(c) = changes.color {
            attributes.borrow_mut().color = Some(color(Some(c))?);
        }
        if let Some(c) = changes.category {
            attributes.borrow_mut().category = Domain::category_id(slf, Some(c))?;
        }
        if let Some(p) = changes.payload {
            let (payload, extended) = Domain::payload(slf, Some(p))?;
            let mut a = attributes.borrow_mut();
            (a.payload, a.extended) = (payload, extended);
        }
        Ok(())
    }
}

/// Encodes `attributes`' kept mutable payload again, as it is now.
pub(crate) fn refresh(attributes: &Bound<'_, EventAttributes>) -> PyResult<()> {
    let py = attributes.py();
    let (domain, kept) = {
        let a = attributes.borrow();
        match &a.mutable_payload {
            None => return Ok(()),
            Some(kept) => (a.domain.clone_ref(py), kept.clone_ref(py)),
        }
    };
    let (payload, extended) = Domain::payload(domain.bind(py), Some(kept.bind(py)))?;
    let mut a = attributes.borrow_mut();
    (a.payload, a.extended) = (payload, extended);
    Ok(())
}

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
                Domain::assign(slf, a, args.not_none())?;
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
        let args = Args::new(message, color, category, payload);
        Domain::event(slf, attributes, args, (), |d, a| d.mark(a, Family::Domain))
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
        let args = Args::new(message, color, category, payload);
        Domain::event(slf, attributes, args, NO_TRACKING, |d, a| {
            d.push(a, Family::Domain)
        })
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
        let args = Args::new(message, color, category, payload);
        Domain::event(slf, attributes, args, 0, |d, a| d.start(a, Family::Domain))
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

    /// Closes this OS thread's innermost range in this domain.
    fn pop_range(&self, py: Python<'_>) -> i32 {
        if !self.wanted {
            return NO_TRACKING;
        }
        name_thread_once(py);
        checked(py, self.inner.pop(Family::Domain), NO_TRACKING)
    }

    /// Ends the range `range_id` (from `start_range`), on any thread.
    fn end_range(&self, py: Python<'_>, range_id: u64) {
        if self.wanted {
            name_thread_once(py);
            checked(py, self.inner.end(range_id, Family::Domain), ());
        }
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
