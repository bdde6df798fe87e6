//! Handles for doors whose objects live in another runtime and cannot borrow
//! (the Python package): the domains and strings here are `'static` (nvtxr
//! never frees them) and the event calls take the attributes as plain
//! values. Every call returns the engine's typed result; with no tool it
//! returns at once with the no-tool value.

use crate::attributes::{Color, Event, Payload, RawMessage, RawPayload};
use crate::counters;
use crate::domain::{DomainState, StringState};
use crate::error::Error;
use crate::events;
pub use crate::events::Family;
use crate::loader;
use nvtx_protocol::payload::{PayloadData, SchemaAttr};
use nvtx_protocol::NO_PUSH_POP_TRACKING;
use std::ffi::CStr;

/// Whether a tool is attached: one atomic load once initialized.
#[inline(always)]
pub fn enabled() -> bool {
    loader::tool_attached()
}

/// A counter's sample.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum CounterSample {
    Int64(i64),
    Float64(f64),
    /// No value, for a reason (`NVTX_COUNTER_SAMPLE_*`).
    NoValue(u8),
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
    /// An extended payload (NVTX's payload extension), read during the
    /// call; it replaces `payload`.
    pub extended: Option<&'a PayloadData>,
}

impl Attributes<'_> {
    fn event(&self) -> Event {
        let message = match self.message {
            Text::None => RawMessage::None,
            Text::Text(c) => RawMessage::Text(c.as_ptr()),
            Text::Registered(s) => RawMessage::Registered(s.0),
        };
        if let (Text::Text(c), None, 0, None, None) = (
            self.message,
            self.color,
            self.category,
            self.payload,
            self.extended,
        ) {
            return Event::text(c.as_ptr());
        }
        let color = self.color.map(Color::from_argb);
        match self.extended {
            Some(data) => Event::with_raw_payload(
                message,
                color,
                self.category,
                RawPayload::extended(data, 1).unwrap_or_default(),
            ),
            None => Event::with_attributes(message, color, self.category, self.payload),
        }
    }
}

impl StaticDomain {
    /// The default domain.
    pub fn global() -> Self {
        StaticDomain(DomainState::default_domain())
    }

    /// Creates (or shares) the domain `name`; it is never destroyed.
    pub fn create(name: &CStr) -> Result<Self, Error> {
        DomainState::create(name).map(StaticDomain)
    }

    /// A domain `name` of its own, outside the registry (what to use when
    /// [`StaticDomain::create`] is refused): attached at its first event.
    pub fn uninterned(name: &CStr) -> Self {
        StaticDomain(DomainState::uninterned(name))
    }

    /// Registers `text` once in this domain.
    pub fn register(&self, text: &CStr) -> Result<StaticString, Error> {
        self.0.register_string(text).map(StaticString)
    }

    /// A string `text` of this domain outside its table (what to use when
    /// [`StaticDomain::register`] is refused).
    pub fn uninterned_string(&self, text: &CStr) -> StaticString {
        StaticString(self.0.uninterned_string(text))
    }

    /// Names category `id` (when a tool is attached), through `family`'s
    /// call for the default domain.
    pub fn name_category(&self, id: u32, name: &CStr, family: Family) -> Result<(), Error> {
        if !enabled() {
            return Ok(());
        }
        // SAFETY: a valid C string for the call.
        unsafe { self.0.name_category(id, name.as_ptr(), family) }
    }

    /// Registers a payload schema in this domain; its id (0 with no tool,
    /// see [`crate::payloads::register_schema`]).
    pub fn register_schema(&self, attributes: &SchemaAttr) -> Result<u64, Error> {
        crate::payloads::register_schema(self.0, attributes)
    }

    /// Whether the tool wants this domain's events (see
    /// [`events::domain_is_enabled`]).
    pub fn is_enabled(&self) -> Result<bool, Error> {
        events::domain_is_enabled(self.0)
    }

    /// Registers counter `name` of `kind`; its id (0 with no tool).
    pub fn counter_register(&self, name: &CStr, kind: counters::CounterType) -> Result<u64, Error> {
        counters::register(self.0, name, kind)
    }

    /// Registers counter `name` of `kind` with `options` (see
    /// [`counters::register_with`]); its id (0 with no tool).
    pub fn counter_register_with(
        &self,
        name: &CStr,
        kind: counters::CounterType,
        options: &counters::CounterOptions,
    ) -> Result<u64, Error> {
        counters::register_with(self.0, name, kind, options)
    }

    /// Registers the scope at `path` in this domain; its id (0 with no tool).
    pub fn scope_register(&self, path: &CStr) -> Result<u64, Error> {
        crate::payloads::register_scope(self.0, path)
    }

    /// Samples a schema counter `id` of this domain: one value's bytes.
    pub fn counter_sample_bytes(&self, id: u64, value: &[u8]) -> Result<(), Error> {
        counters::sample_bytes(self.0, id, value)
    }

    /// Samples of a schema counter taken earlier (see [`counters::batch_bytes`]).
    pub fn counter_batch_bytes(
        &self,
        id: u64,
        samples: &[u8],
        timestamps: &[i64],
    ) -> Result<(), Error> {
        counters::batch_bytes(self.0, id, samples, timestamps)
    }

    /// Samples counter `id` of this domain.
    pub fn counter_sample(&self, id: u64, value: CounterSample) -> Result<(), Error> {
        match value {
            CounterSample::Int64(v) => counters::sample_i64(self.0, id, v),
            CounterSample::Float64(v) => counters::sample_f64(self.0, id, v),
            CounterSample::NoValue(reason) => counters::sample_no_value(self.0, id, reason),
        }
    }

    /// A mark in `family` (see [`Family`]).
    pub fn mark(&self, a: &Attributes, family: Family) -> Result<(), Error> {
        if !enabled() {
            return Ok(());
        }
        events::mark(self.0, &a.event(), family)
    }

    /// Opens a range in `family`; the tool's depth, or
    /// `NO_PUSH_POP_TRACKING`.
    pub fn push(&self, a: &Attributes, family: Family) -> Result<i32, Error> {
        if !enabled() {
            return Ok(NO_PUSH_POP_TRACKING);
        }
        events::push(self.0, &a.event(), family)
    }

    /// Closes this thread's innermost range in `family` (the family that
    /// opened it); the tool's depth, or `NO_PUSH_POP_TRACKING`.
    pub fn pop(&self, family: Family) -> Result<i32, Error> {
        if !enabled() {
            return Ok(NO_PUSH_POP_TRACKING);
        }
        events::pop(self.0, family)
    }

    /// Starts a range in `family`; its id, 0 with no tool.
    pub fn start(&self, a: &Attributes, family: Family) -> Result<u64, Error> {
        if !enabled() {
            return Ok(0);
        }
        events::start(self.0, &a.event(), family)
    }

    /// Ends range `id` in `family` (the family that started it).
    pub fn end(&self, id: u64, family: Family) -> Result<(), Error> {
        if !enabled() {
            return Ok(());
        }
        events::end(self.0, id, family)
    }
}
