//! Handles for nvtxr's own language bindings (Python), whose objects live in
//! another runtime and cannot borrow a Rust [`Domain`](crate::Domain): the
//! domains and strings here are `'static` (nvtxr never frees them) and the
//! event calls take the attributes as plain values. Not a public API.

use crate::attributes::{Color, Event, Payload, RawMessage};
use crate::domain::{DomainState, StringState};
use crate::events;
pub use crate::events::Family;
use crate::loader;
use std::ffi::CStr;

/// Whether a tool is attached: one atomic load once initialized.
#[inline(always)]
pub fn enabled() -> bool {
    loader::tool_attached()
}

/// A domain for the life of the process.
#[derive(Clone, Copy)]
pub struct StaticDomain(&'static DomainState);

/// A registered string for the life of the process.
#[derive(Clone, Copy)]
pub struct StaticString(&'static StringState);

/// An event's message.
#[derive(Clone, Copy)]
pub enum Text<'a> {
    None,
    Text(&'a CStr),
    Registered(StaticString),
}

/// An event's attributes. In [`Family::Default`], text with nothing else goes
/// through the text-only (`...A`) slots, as `torch.cuda.nvtx` sends it.
#[derive(Clone, Copy)]
pub struct Attributes<'a> {
    pub message: Text<'a>,
    /// ARGB, passed as given.
    pub color: Option<u32>,
    /// 0 means none.
    pub category: u32,
    pub payload: Option<Payload>,
}

impl Attributes<'_> {
    fn event(&self) -> Event {
        let message = match self.message {
            Text::None => RawMessage::None,
            Text::Text(c) => RawMessage::Text(c.as_ptr()),
            Text::Registered(s) => RawMessage::Registered(s.0),
        };
        if let (Text::Text(c), None, 0, None) =
            (self.message, self.color, self.category, self.payload)
        {
            return Event::text(c.as_ptr());
        }
        Event::with_attributes(
            message,
            self.color.map(Color::from_argb),
            self.category,
            self.payload,
        )
    }
}

impl StaticDomain {
    /// The default domain.
    pub fn global() -> Self {
        StaticDomain(DomainState::default_domain())
    }

    /// Creates (or shares) the domain `name`; it is never destroyed.
    pub fn create(name: &CStr) -> Self {
        StaticDomain(DomainState::create(name).unwrap_or_else(|_| DomainState::uninterned(name)))
    }

    /// Registers `text` once in this domain.
    pub fn register(&self, text: &CStr) -> StaticString {
        StaticString(
            self.0
                .register_string(text)
                .unwrap_or_else(|_| self.0.uninterned_string(text)),
        )
    }

    /// Names category `id` (when a tool is attached).
    pub fn name_category(&self, id: u32, name: &CStr) {
        if enabled() {
            // SAFETY: a valid C string for the call.
            let _ = unsafe { self.0.name_category(id, name.as_ptr()) };
        }
    }

    /// A mark in `family` (see [`Family`]).
    pub fn mark(&self, a: &Attributes, family: Family) {
        if enabled() {
            let _ = events::mark(self.0, &a.event(), family);
        }
    }

    /// Opens a range in `family`; the tool's depth, or a negative value.
    pub fn push(&self, a: &Attributes, family: Family) -> i32 {
        if !enabled() {
            return crate::ffi::NVTXR_NO_PUSH_POP_TRACKING;
        }
        events::push(self.0, &a.event(), family).unwrap_or(crate::ffi::NVTXR_ERROR_INVALID_ARGUMENT)
    }

    /// Closes this thread's innermost range in `family` (the family that
    /// opened it); the tool's depth, or a negative value.
    pub fn pop(&self, family: Family) -> i32 {
        if !enabled() {
            return crate::ffi::NVTXR_NO_PUSH_POP_TRACKING;
        }
        events::pop(self.0, family).unwrap_or(crate::ffi::NVTXR_ERROR_DESTROYED)
    }

    /// Starts a range in `family`; its id, 0 with no tool.
    pub fn start(&self, a: &Attributes, family: Family) -> u64 {
        if !enabled() {
            return 0;
        }
        events::start(self.0, &a.event(), family).unwrap_or(0)
    }

    /// Ends range `id` in `family` (the family that started it).
    pub fn end(&self, id: u64, family: Family) {
        if enabled() {
            let _ = events::end(self.0, id, family);
        }
    }
}
