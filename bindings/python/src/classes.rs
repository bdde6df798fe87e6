//! The Python classes' data: `RegisteredString`, `Domain` and
//! `EventAttributes` (with an extended payload's bytes), and an event call's
//! keyword arguments. Their behaviour: `attributes.rs` (resolving
//! attributes), `domain.rs` (the domain's methods).

use nvtx_protocol::payload::PayloadData;
use nvtxr_engine::attributes::Payload;
use nvtxr_engine::statics::{StaticDomain, StaticString};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyString};
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
    pub(crate) fn not_none(self) -> Self {
        let given = |a: Option<&'a Bound<'py, PyAny>>| a.filter(|a| !a.is_none());
        Args::new(
            given(self.message),
            given(self.color),
            given(self.category),
            given(self.payload),
        )
    }

    /// Whether any argument is given.
    pub(crate) fn any(&self) -> bool {
        self.message.is_some()
            || self.color.is_some()
            || self.category.is_some()
            || self.payload.is_some()
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
    pub(crate) inner: StaticString,
    #[pyo3(get)]
    pub(crate) string: Py<PyString>,
}

/// A domain: named group of events, categories and registered strings
/// (`nvtxr.get_domain(name)`; `None` is the default domain).
#[pyclass(frozen, module = "nvtxr")]
pub struct Domain {
    pub(crate) inner: StaticDomain,
    /// Whether the tool wants its events (see `get_domain`).
    pub(crate) wanted: bool,
    #[pyo3(get)]
    pub(crate) name: Option<String>,
    /// `str` -> `RegisteredString`.
    pub(crate) strings: Py<PyDict>,
    /// `str` -> category id.
    pub(crate) categories: Py<PyDict>,
}

/// An event's attributes, resolved once (`Domain.get_event_attributes`);
/// `Domain.set_event_attributes` (or an event call given both attributes and
/// keywords) changes them in place, as NVIDIA's package does.
#[pyclass(module = "nvtxr")]
pub struct EventAttributes {
    pub(crate) domain: Py<Domain>,
    pub(crate) message: Option<Py<RegisteredString>>,
    /// Messages past the cache bound, sent as text.
    pub(crate) text: Option<CString>,
    pub(crate) color: Option<u32>,
    pub(crate) category: u32,
    pub(crate) payload: Option<Payload>,
    /// An extended payload (a NumPy value, a list, a tuple, a range, bytes).
    pub(crate) extended: Option<Extended>,
    /// `annotate`'s payload of a mutable type (a list, an array): encoded
    /// again each time the range opens, as NVIDIA's package does.
    pub(crate) mutable_payload: Option<Py<PyAny>>,
    /// The payload as given, for `.payload`.
    pub(crate) given_payload: Option<Py<PyAny>>,
}

/// An extended payload: its bytes, and the payload data pointing at them.
pub(crate) struct Extended {
    pub(crate) data: PayloadData,
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
    pub(crate) fn encode(
        domain: &Bound<'_, Domain>,
        value: &Bound<'_, PyAny>,
    ) -> PyResult<Option<Extended>> {
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
