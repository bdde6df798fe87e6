//! A [`tracing_subscriber::Layer`] that puts `tracing`'s spans and events on
//! the NVTX timeline (Nsight Systems, `nvtxr record`), right for async code:
//!
//! - each span's whole life (new → close) is a start/end range, so a task
//!   that moves between threads still gets one range;
//! - each entry (enter → exit: for an `.instrument()`ed future, each poll)
//!   is a push/pop range on the thread that runs it;
//! - each event is a mark: its message as the text, followed by its other
//!   fields as `name=value`, the first numeric field also as the payload
//!   (`tracing::info!(n = 5, "fetched")` is the mark "fetched n=5" with
//!   payload 5); a span's fields likewise on its life's range (`job n=3`,
//!   its entries keep the span's name). [`NvtxLayer::without_fields`] names
//!   events by their callsite and spans by their name only, for the lowest
//!   cost.
//!
//! Span and event names are registered strings, registered once per
//! callsite (callsite metadata is `'static`) in a lock-free table: with a
//! tool attached, no lock and no allocation per span entry or event. Live
//! spans' metadata, name and life's range id are kept by id in another
//! lock-free table, so creating, entering and closing a span need no
//! registry lookup and no allocation. With no
//! tool, every callback returns after one check. OS threads are named after
//! their Rust thread names the first time they record.
//!
//! ```
//! use tracing_subscriber::prelude::*;
//!
//! tracing_subscriber::registry().with(nvtxr_tracing::NvtxLayer::new()).init();
//! let span = tracing::info_span!("load data");
//! let _entered = span.enter();
//! tracing::info!("loaded");
//! ```

mod spans;

use nvtxr::{Domain, EventAttributes, LocalRange, Payload, Range, RegisteredString};
use std::cell::{Cell, RefCell};
use std::fmt::Write as _;
use std::sync::OnceLock;
use tracing::span::{Attributes, Id};
use tracing::subscriber::Interest;
use tracing::{Event, Metadata, Subscriber};
use tracing_subscriber::layer::Context;
use tracing_subscriber::registry::LookupSpan;
use tracing_subscriber::Layer;

/// Callsites whose names are registered; later ones send their name as text.
const CALLSITES: usize = 4096;

/// The layer. See the crate documentation.
pub struct NvtxLayer {
    domain: &'static Domain,
    names: Box<[OnceLock<(usize, RegisteredString<'static>)>]>,
    /// Per event callsite: the first text its events had, registered (an
    /// event whose text is the same again uses it).
    texts: Box<[OnceLock<(usize, String, RegisteredString<'static>)>]>,
    spans: spans::Spans,
    /// Events named by their message and fields (else by their callsite).
    fields: bool,
}

thread_local! {
    /// Spans entered on this thread, innermost last, with their push/pop guards.
    static ENTERED: RefCell<Vec<(Id, LocalRange<'static>)>> = const { RefCell::new(Vec::new()) };
    static NAMED: Cell<bool> = const { Cell::new(false) };
}

/// A span's start/end range, kept in its extensions until it closes (then
/// dropping it ends the range) when the span table had no entry for it.
struct Life {
    _range: Range<'static>,
}

impl NvtxLayer {
    /// A layer recording in the default domain.
    pub fn new() -> Self {
        NvtxLayer::in_domain(Domain::global())
    }

    /// A layer recording in the domain `name` (Nsight Systems shows it as a row of its own).
    pub fn with_domain(name: &str) -> Self {
        NvtxLayer::in_domain(Box::leak(Box::new(Domain::new(name))))
    }

    fn in_domain(domain: &'static Domain) -> Self {
        NvtxLayer {
            domain,
            names: (0..CALLSITES).map(|_| OnceLock::new()).collect(),
            texts: (0..CALLSITES).map(|_| OnceLock::new()).collect(),
            spans: spans::Spans::new(),
            fields: true,
        }
    }

    /// Events as marks named after their callsite (`event src/main.rs:8`),
    /// their message and fields not read: no formatting per event.
    pub fn without_fields(mut self) -> Self {
        self.fields = false;
        self
    }

    /// An event's mark, with its message and fields (see the crate's
    /// documentation).
    fn mark_fields(&self, event: &Event<'_>) {
        let mut fields = Fields::default();
        event.record(&mut fields);
        let mut text = fields.message;
        if !fields.rest.is_empty() {
            if !text.is_empty() {
                text.push(' ');
            }
            text.push_str(&fields.rest);
        }
        let metadata = event.metadata();
        let registered = self.probe(metadata).find_map(|(key, slot)| {
            let (k, t, s) =
                self.texts[slot].get_or_init(|| (key, text.clone(), self.domain.register(&text)));
            (*k == key).then_some((t, s))
        });
        let attributes = match registered {
            Some((t, s)) if *t == text => EventAttributes::new(s),
            _ => EventAttributes::new(text.as_str()),
        };
        self.domain.mark(match fields.payload {
            Some(p) => attributes.payload(p),
            None => attributes,
        });
    }

    /// The slots a callsite may occupy, from its hash on.
    fn probe(
        &self,
        metadata: &'static Metadata<'static>,
    ) -> impl Iterator<Item = (usize, usize)> + '_ {
        let key = metadata as *const Metadata<'static> as usize;
        let start = (key >> 4).wrapping_mul(0x9E37_79B9_7F4A_7C15) % CALLSITES;
        (0..CALLSITES).map(move |i| (key, (start + i) % CALLSITES))
    }

    /// Registers a callsite's name once (lock-free: slots are set once).
    fn register(&self, metadata: &'static Metadata<'static>) {
        for (key, slot) in self.probe(metadata) {
            let (k, _) =
                self.names[slot].get_or_init(|| (key, self.domain.register(metadata.name())));
            if *k == key {
                return;
            }
        }
    }

    /// The slot of the callsite's registered name, if it has one.
    fn name_slot(&self, metadata: &'static Metadata<'static>) -> Option<usize> {
        for (key, slot) in self.probe(metadata) {
            match self.names[slot].get() {
                Some((k, _)) if *k == key => return Some(slot),
                Some(_) => continue,
                None => return None,
            }
        }
        None
    }

    /// What the span table keeps of a span of this callsite.
    fn span(&self, metadata: &'static Metadata<'static>) -> spans::Span {
        let name = self.name_slot(metadata).or_else(|| {
            // Another thread may be registering it right now: wait for that.
            self.register(metadata);
            self.name_slot(metadata)
        });
        spans::Span { metadata, name }
    }

    /// A span's or event's attributes: its registered name, or (the table
    /// of names full) its name as text.
    fn attributes(&self, span: spans::Span) -> EventAttributes<'_> {
        match span.name.and_then(|slot| self.names[slot].get()) {
            Some((_, s)) => EventAttributes::new(s),
            None => EventAttributes::new(span.metadata.name()),
        }
    }
}

impl Default for NvtxLayer {
    fn default() -> Self {
        NvtxLayer::new()
    }
}

/// Names this OS thread after its Rust thread name, the first time it records.
fn name_thread_once() {
    if !NAMED.get() {
        NAMED.set(true);
        if let Some(name) = std::thread::current().name() {
            nvtxr::name_current_thread(name);
        }
    }
}

impl<S> Layer<S> for NvtxLayer
where
    S: Subscriber + for<'a> LookupSpan<'a>,
{
    fn register_callsite(&self, metadata: &'static Metadata<'static>) -> Interest {
        // An event's name is its text only without fields.
        if metadata.is_span() || !self.fields {
            self.register(metadata);
        }
        Interest::always()
    }

    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        if !nvtxr::is_tool_attached() {
            return;
        }
        name_thread_once();
        let span = self.span(attrs.metadata());
        let range = if self.fields && !attrs.fields().is_empty() {
            // A span with fields: its life's range shows them (its entries
            // keep the registered name).
            let mut fields = Fields::default();
            attrs.record(&mut fields);
            let text = format!("{} {}", attrs.metadata().name(), fields.rest);
            let attributes = EventAttributes::new(text.as_str());
            self.domain.start(match fields.payload {
                Some(p) => attributes.payload(p),
                None => attributes,
            })
        } else {
            self.domain.start(self.attributes(span))
        };
        // The range's id in the span table; where its entry is taken, the
        // range in the registry's extensions of the span.
        if !self.spans.insert(id, span, range.id()) {
            if let Some(span) = ctx.span(id) {
                span.extensions_mut().insert(Life { _range: range });
            }
            return;
        }
        let _ = range.into_id();
    }

    fn on_enter(&self, id: &Id, ctx: Context<'_, S>) {
        if !nvtxr::is_tool_attached() {
            return;
        }
        let Some(span) = self
            .spans
            .get(id)
            .or_else(|| ctx.metadata(id).map(|m| self.span(m)))
        else {
            return;
        };
        name_thread_once();
        let guard = self.domain.push(self.attributes(span));
        ENTERED.with(|e| e.borrow_mut().push((id.clone(), guard)));
    }

    fn on_exit(&self, id: &Id, _ctx: Context<'_, S>) {
        // Spans exit innermost first; the guard pops this thread's range.
        let _ = ENTERED.try_with(|e| {
            let mut entered = e.borrow_mut();
            if entered.last().is_some_and(|(last, _)| last == id) {
                entered.pop(); // the usual case, checked first
            } else if let Some(i) = entered.iter().rposition(|(entered, _)| entered == id) {
                entered.truncate(i);
            }
        });
    }

    fn on_close(&self, id: Id, ctx: Context<'_, S>) {
        // The span's life ends, on whatever thread closes it.
        match self.spans.remove(&id) {
            Some(range) => self.domain.end_range(range),
            None => {
                if let Some(span) = ctx.span(&id) {
                    drop(span.extensions_mut().remove::<Life>());
                }
            }
        }
    }

    fn on_event(&self, event: &Event<'_>, _ctx: Context<'_, S>) {
        if !nvtxr::is_tool_attached() {
            return;
        }
        name_thread_once();
        if self.fields {
            self.mark_fields(event);
        } else {
            self.domain
                .mark(self.attributes(self.span(event.metadata())));
        }
    }
}

/// An event's message and other fields, as its mark shows them.
#[derive(Default)]
struct Fields {
    message: String,
    /// `name=value` of the other fields, in order.
    rest: String,
    /// The first numeric field's value.
    payload: Option<Payload>,
}

impl Fields {
    fn add(&mut self, name: &str, value: std::fmt::Arguments) {
        if name == "message" {
            let _ = self.message.write_fmt(value);
            return;
        }
        if !self.rest.is_empty() {
            self.rest.push(' ');
        }
        let _ = write!(self.rest, "{name}={value}");
    }
}

impl tracing::field::Visit for Fields {
    fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
        self.add(field.name(), format_args!("{value:?}"));
    }
    fn record_str(&mut self, field: &tracing::field::Field, value: &str) {
        self.add(field.name(), format_args!("{value}"));
    }
    fn record_i64(&mut self, field: &tracing::field::Field, value: i64) {
        self.payload.get_or_insert(Payload::I64(value));
        self.add(field.name(), format_args!("{value}"));
    }
    fn record_u64(&mut self, field: &tracing::field::Field, value: u64) {
        self.payload.get_or_insert(Payload::U64(value));
        self.add(field.name(), format_args!("{value}"));
    }
    fn record_f64(&mut self, field: &tracing::field::Field, value: f64) {
        self.payload.get_or_insert(Payload::F64(value));
        self.add(field.name(), format_args!("{value}"));
    }
}

/// The README's code, compiled and run as a doc test.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
mod readme {}
