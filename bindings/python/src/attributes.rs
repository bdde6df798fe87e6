//! Event attributes: resolved once from an event call's keywords (a
//! message registered or sent as text, a color, a category by id or name, a
//! payload, scalar or extended), kept in `EventAttributes`, read back by
//! its getters.

use crate::checked;
use crate::classes::{Args, Domain, EventAttributes, Extended, RegisteredString, STRING_CACHE};
use crate::values::{color, payload, warn};
use nvtxr_engine::attributes::Payload;
use nvtxr_engine::statics::{Attributes, Family, StaticDomain, Text};
use pyo3::prelude::*;
use pyo3::types::{PyFloat, PyInt, PyString};
use std::ffi::CString;

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
    pub(crate) fn registered(
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

    pub(crate) fn category_id(
        slf: &Bound<'_, Domain>,
        category: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<u32> {
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
    pub(crate) fn message(
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
    pub(crate) fn payload(
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
    pub(crate) fn assign(
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
