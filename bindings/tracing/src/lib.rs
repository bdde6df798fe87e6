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
//! What it shows can be configured, as tracing-tracy's `Config` does:
//! [`NvtxLayer::with_field_formatter`] sets how each field becomes text,
//! [`NvtxLayer::with_range_name`] what names a span's ranges
//! ([`RangeName`]), and [`NvtxLayer::on_error`] what is told when the layer
//! cannot show something as it should (by default, nothing):
//!
//! ```
//! use nvtxr_tracing::{NvtxLayer, RangeName};
//! use tracing_subscriber::prelude::*;
//!
//! let layer = NvtxLayer::new()
//!     .with_range_name(RangeName::TargetAndName)
//!     .with_field_formatter(|text, name, value| {
//!         use std::fmt::Write;
//!         let _ = write!(text, " [{name}: {value}]");
//!     })
//!     .on_error(|why| eprintln!("nvtxr-tracing: {why}"));
//! tracing_subscriber::registry().with(layer).init();
//! tracing::info!(rows = 3, "loaded"); // the mark "loaded [rows: 3]"
//! ```
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
use std::fmt::{Display, Write as _};
use std::sync::OnceLock;
use tracing::span::{Attributes, Id};
use tracing::subscriber::Interest;
use tracing::{Event, Metadata, Subscriber};
use tracing_subscriber::layer::Context;
use tracing_subscriber::registry::LookupSpan;
use tracing_subscriber::Layer;

/// Callsites whose names are registered; later ones send their name as text.
const CALLSITES: usize = 4096;

/// What names a span's ranges (its life's and its entries').
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RangeName {
    /// The span's name; its life's range shows its fields too (`job n=3`).
    #[default]
    NameAndFields,
    /// The span's name alone, on both ranges: no formatting per span.
    Name,
    /// The span's target and name (`my_crate::db::query`); its life's range
    /// shows its fields too.
    TargetAndName,
}

/// Writes one field (`name`, `value`) onto the text of the fields before it.
type FieldFormatter = dyn Fn(&mut String, &str, &dyn Display) + Send + Sync;

/// Told why the layer could not show something as it should.
type ErrorHook = dyn Fn(&'static str) + Send + Sync;

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
    range_name: RangeName,
    formatter: Option<Box<FieldFormatter>>,
    on_error: Option<Box<ErrorHook>>,
    /// The callsite table was full once (said once).
    full: std::sync::atomic::AtomicBool,
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
            range_name: RangeName::default(),
            formatter: None,
            on_error: None,
            full: std::sync::atomic::AtomicBool::new(false),
        }
    }

    /// Events as marks named after their callsite (`event src/main.rs:8`),
    /// their message and fields not read: no formatting per event.
    pub fn without_fields(mut self) -> Self {
        self.fields = false;
        self
    }

    /// What names spans' ranges (default [`RangeName::NameAndFields`]).
    pub fn with_range_name(mut self, name: RangeName) -> Self {
        self.range_name = name;
        self
    }

    /// How each field (but the message) becomes text on a mark or a
    /// span's life's range: `format(text, name, value)` appends it to
    /// `text`, which holds the fields before it; the mark's text is then its
    /// message followed by `text`, a life's range's its name followed by
    /// `text`. The default appends `name=value`, a space between fields and
    /// after the message or name. The first numeric field is still the
    /// payload.
    pub fn with_field_formatter(
        mut self,
        format: impl Fn(&mut String, &str, &dyn Display) + Send + Sync + 'static,
    ) -> Self {
        self.formatter = Some(Box::new(format));
        self
    }

    /// Calls `hook` with the reason when the layer cannot show something as
    /// it should: more callsites than its table holds (their names then go
    /// as text, said once), a span exited before spans entered after it on
    /// its thread (their ranges are popped with it). By default nothing is
    /// said.
    pub fn on_error(mut self, hook: impl Fn(&'static str) + Send + Sync + 'static) -> Self {
        self.on_error = Some(Box::new(hook));
        self
    }

    fn error(&self, why: &'static str) {
        if let Some(hook) = &self.on_error {
            hook(why);
        }
    }

    /// A span's or event's fields, formatted as configured.
    fn fields(&self) -> Fields<'_> {
        Fields {
            message: String::new(),
            rest: String::new(),
            payload: None,
            formatter: self.formatter.as_deref(),
        }
    }

    /// The name registered for a callsite: a span's as [`RangeName`] says,
    /// an event's its own (`event src/main.rs:8`).
    fn callsite_name(
        &self,
        metadata: &'static Metadata<'static>,
    ) -> std::borrow::Cow<'static, str> {
        match self.range_name {
            RangeName::TargetAndName if metadata.is_span() => {
                format!("{}::{}", metadata.target(), metadata.name()).into()
            }
            _ => metadata.name().into(),
        }
    }

    /// An event's mark, with its message and fields (see the crate's
    /// documentation).
    fn mark_fields(&self, event: &Event<'_>) {
        let mut fields = self.fields();
        event.record(&mut fields);
        let mut text = fields.message;
        if !fields.rest.is_empty() {
            if !text.is_empty() && self.formatter.is_none() {
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
            let (k, _) = self.names[slot]
                .get_or_init(|| (key, self.domain.register(&self.callsite_name(metadata))));
            if *k == key {
                return;
            }
        }
        if !self.full.swap(true, std::sync::atomic::Ordering::Relaxed) {
            self.error("the callsite table is full: later callsites' names are sent as text");
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
        let with_fields = self.fields && self.range_name != RangeName::Name;
        let range = if with_fields && !attrs.fields().is_empty() {
            // A span with fields: its life's range shows them (its entries
            // keep the registered name).
            let mut fields = self.fields();
            attrs.record(&mut fields);
            let text = format!(
                "{}{}{}",
                self.callsite_name(attrs.metadata()),
                if self.formatter.is_some() { "" } else { " " },
                fields.rest
            );
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
                self.error("a span exited before the spans entered after it on its thread");
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
struct Fields<'f> {
    message: String,
    /// The other fields, in order: ` name=value` each, or as the layer's
    /// formatter writes them.
    rest: String,
    /// The first numeric field's value.
    payload: Option<Payload>,
    formatter: Option<&'f FieldFormatter>,
}

impl Fields<'_> {
    fn add(&mut self, name: &str, value: &dyn Display) {
        if name == "message" {
            let _ = write!(self.message, "{value}");
            return;
        }
        match self.formatter {
            Some(format) => format(&mut self.rest, name, value),
            None => {
                if !self.rest.is_empty() {
                    self.rest.push(' ');
                }
                let _ = write!(self.rest, "{name}={value}");
            }
        }
    }
}

impl tracing::field::Visit for Fields<'_> {
    fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
        self.add(field.name(), &format_args!("{value:?}"));
    }
    fn record_str(&mut self, field: &tracing::field::Field, value: &str) {
        self.add(field.name(), &value);
    }
    fn record_i64(&mut self, field: &tracing::field::Field, value: i64) {
        self.payload.get_or_insert(Payload::I64(value));
        self.add(field.name(), &value);
    }
    fn record_u64(&mut self, field: &tracing::field::Field, value: u64) {
        self.payload.get_or_insert(Payload::U64(value));
        self.add(field.name(), &value);
    }
    fn record_f64(&mut self, field: &tracing::field::Field, value: f64) {
        self.payload.get_or_insert(Payload::F64(value));
        self.add(field.name(), &value);
    }
}

/// The README's code, compiled and run as a doc test.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
mod readme {}
