//! A message, an event's attributes, and a string registered in a domain.

use crate::payload::{PayloadSchema, PayloadStruct};
use nvtx_protocol::payload::PayloadData;
use nvtxr_engine::attributes::{Color, Event, Payload, RawMessage, RawPayload};
use nvtxr_engine::domain::StringState;
use std::ffi::{c_void, CStr, CString};
use std::marker::PhantomData;

/// Runs `f` with `text` as a NUL-terminated C string: copied to the stack when
/// short, to the heap when long. Interior NUL bytes become U+FFFD, so nothing
/// after them is lost.
pub(crate) fn with_c_str<R>(text: &str, f: impl FnOnce(&CStr) -> R) -> R {
    const STACK: usize = 256;
    let bytes = text.as_bytes();
    if bytes.len() < STACK && !bytes.contains(&0) {
        let mut buf = [0u8; STACK];
        buf[..bytes.len()].copy_from_slice(bytes);
        // SAFETY: no interior NUL, and buf[len] is 0.
        return f(unsafe { CStr::from_bytes_with_nul_unchecked(&buf[..=bytes.len()]) });
    }
    let owned = CString::new(text.replace('\0', "\u{FFFD}")).expect("NULs were replaced");
    f(&owned)
}

/// A message: text (copied to a C string for the call only when a tool is
/// attached), a C string (passed as is), or a registered string (a handle).
#[derive(Clone, Copy)]
pub enum Message<'a> {
    /// UTF-8 text.
    Text(&'a str),
    /// A C string, passed as it is.
    CText(&'a CStr),
    /// A string registered in the event's domain.
    Registered(&'a RegisteredString<'a>),
}

impl<'a> From<&'a str> for Message<'a> {
    fn from(s: &'a str) -> Self {
        Message::Text(s)
    }
}

impl<'a> From<&'a String> for Message<'a> {
    fn from(s: &'a String) -> Self {
        Message::Text(s)
    }
}

impl<'a> From<&'a CStr> for Message<'a> {
    fn from(s: &'a CStr) -> Self {
        Message::CText(s)
    }
}

impl<'a> From<&'a RegisteredString<'a>> for Message<'a> {
    fn from(s: &'a RegisteredString<'a>) -> Self {
        Message::Registered(s)
    }
}

/// An event's attributes: message, color, category, payload.
///
/// ```
/// use nvtxr::{Color, EventAttributes, Payload};
/// let attrs = EventAttributes::new("step")
///     .color(Color::rgb(0, 128, 255))
///     .category(2)
///     .payload(Payload::F64(0.25));
/// nvtxr::mark(attrs);
/// ```
#[derive(Clone, Copy)]
pub struct EventAttributes<'a> {
    message: Option<Message<'a>>,
    color: Option<Color>,
    category: u32,
    payload: Option<Payload>,
    extended: Option<Extended<'a>>,
}

/// A struct payload: its schema, and the value borrowed for `'a`.
#[derive(Clone, Copy)]
struct Extended<'a> {
    schema: u64,
    data: *const c_void,
    size: usize,
    _value: PhantomData<&'a ()>,
}

// SAFETY: a shared borrow of a `Sync` value (`PayloadStruct: Sync`).
unsafe impl Send for Extended<'_> {}
// SAFETY: as above.
unsafe impl Sync for Extended<'_> {}

impl<'a> EventAttributes<'a> {
    /// Attributes with a message and nothing else.
    pub fn new(message: impl Into<Message<'a>>) -> Self {
        EventAttributes {
            message: Some(message.into()),
            color: None,
            category: 0,
            payload: None,
            extended: None,
        }
    }

    /// Attributes with no message.
    pub fn empty() -> Self {
        EventAttributes {
            message: None,
            color: None,
            category: 0,
            payload: None,
            extended: None,
        }
    }

    /// The event's color.
    pub fn color(mut self, color: Color) -> Self {
        self.color = Some(color);
        self
    }

    /// Category id (0 means none); name it with [`Domain::name_category`](crate::Domain::name_category).
    pub fn category(mut self, category: u32) -> Self {
        self.category = category;
        self
    }

    /// A number the tool shows with the event (replacing a struct payload).
    pub fn payload(mut self, payload: Payload) -> Self {
        self.payload = Some(payload);
        self.extended = None;
        self
    }

    /// A struct the tool shows field by field (NVTX's extended payloads;
    /// replacing a numeric payload): `value`, described by `schema`, which
    /// must come from the domain of the event.
    pub fn payload_struct<T: PayloadStruct>(
        mut self,
        schema: &PayloadSchema<'_, T>,
        value: &'a T,
    ) -> Self {
        if schema.id != 0 {
            self.extended = Some(Extended {
                schema: schema.id,
                data: (value as *const T).cast(),
                size: std::mem::size_of::<T>(),
                _value: PhantomData,
            });
            self.payload = None;
        }
        self
    }

    /// Runs `f` with the internal event (text made NUL-terminated for the call).
    pub(crate) fn with_event<R>(&self, f: impl FnOnce(&Event) -> R) -> R {
        let plain = self.color.is_none()
            && self.category == 0
            && self.payload.is_none()
            && self.extended.is_none();
        let extended = self.extended.map(|x| PayloadData {
            schema_id: x.schema,
            size: x.size,
            payload: x.data,
        });
        let build = |message: RawMessage| {
            if plain {
                if let RawMessage::Text(p) = message {
                    return Event::text(p);
                }
            }
            match &extended {
                Some(data) => Event::with_raw_payload(
                    message,
                    self.color,
                    self.category,
                    RawPayload::extended(data, 1).unwrap_or_default(),
                ),
                None => Event::with_attributes(message, self.color, self.category, self.payload),
            }
        };
        match self.message {
            None => f(&build(RawMessage::None)),
            Some(Message::Text(s)) => with_c_str(s, |c| f(&build(RawMessage::Text(c.as_ptr())))),
            Some(Message::CText(c)) => f(&build(RawMessage::Text(c.as_ptr()))),
            Some(Message::Registered(r)) => f(&build(RawMessage::Registered(r.state))),
        }
    }
}

impl<'a, M: Into<Message<'a>>> From<M> for EventAttributes<'a> {
    fn from(message: M) -> Self {
        EventAttributes::new(message)
    }
}

/// A string registered once in a domain, passed to the tool by handle.
/// It borrows its domain.
#[derive(Clone, Copy)]
pub struct RegisteredString<'d> {
    pub(crate) state: &'static StringState,
    /// It borrows its domain (`Domain::register`).
    pub(crate) _domain: PhantomData<&'d ()>,
}

impl RegisteredString<'_> {
    /// The registered text.
    pub fn text(&self) -> &CStr {
        self.state.text()
    }
}
