//! Handles for nvtxr's own language bindings (Python), whose objects live in
//! another runtime and cannot borrow a Rust [`Domain`](crate::Domain): the
//! domains and strings here are `'static` (nvtxr never frees them) and the
//! event calls take the attributes as plain values. Not a public API.

use crate::attributes::{Color, Event, Payload, RawMessage};
use crate::domain::{DomainState, StringState};
use crate::events;
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

/// An event's attributes. Text with nothing else goes through the text-only
/// (`...A`) slots, as `torch.cuda.nvtx` sends it; anything else through the
/// `...Ex` slots, as NVIDIA's Python package sends it.
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

    pub fn mark(&self, a: &Attributes) {
        if enabled() {
            let _ = events::mark(self.0, &a.event());
        }
    }

    /// The tool's depth, or a negative value.
    pub fn push(&self, a: &Attributes) -> i32 {
        if !enabled() {
            return crate::ffi::NVTXR_NO_PUSH_POP_TRACKING;
        }
        events::push(self.0, &a.event()).unwrap_or(crate::ffi::NVTXR_ERROR_INVALID_ARGUMENT)
    }

    /// The tool's depth, or a negative value. Through the domain slot
    /// (`nvtxDomainRangePop`), the default domain included.
    pub fn pop(&self) -> i32 {
        if !enabled() {
            return crate::ffi::NVTXR_NO_PUSH_POP_TRACKING;
        }
        events::domain_pop(self.0).unwrap_or(crate::ffi::NVTXR_ERROR_DESTROYED)
    }

    /// The tool's depth, or a negative value; `nvtxRangePop` in the default domain.
    pub fn pop_text(&self) -> i32 {
        if !enabled() {
            return crate::ffi::NVTXR_NO_PUSH_POP_TRACKING;
        }
        events::pop(self.0).unwrap_or(crate::ffi::NVTXR_ERROR_DESTROYED)
    }

    /// The range id; 0 with no tool.
    pub fn start(&self, a: &Attributes) -> u64 {
        if !enabled() {
            return 0;
        }
        events::start(self.0, &a.event()).unwrap_or(0)
    }

    /// Through the domain slot (`nvtxDomainRangeEnd`), the default domain included.
    pub fn end(&self, id: u64) {
        if enabled() {
            let _ = events::domain_end(self.0, id);
        }
    }

    /// `nvtxRangeEnd` in the default domain.
    pub fn end_text(&self, id: u64) {
        if enabled() {
            let _ = events::end(self.0, id);
        }
    }
}
