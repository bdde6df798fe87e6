//! A domain, and the ranges pushed or started in one.

use crate::attributes::{with_c_str, EventAttributes, RegisteredString};
use crate::counter::{Counter, CounterValue};
use crate::payload::{PayloadSchema, PayloadStruct};
use nvtx_protocol::payload::{entry_flag, schema_field, schema_type, SchemaAttr, SchemaEntry};
use nvtxr_engine::counters::{self};
use nvtxr_engine::domain::DomainState;
use nvtxr_engine::events::{self, Family};
use nvtxr_engine::loader;
use nvtxr_engine::payloads;
use std::ffi::{c_void, CStr};
use std::marker::PhantomData;
use std::sync::LazyLock;

/// An NVTX domain: a named group of events, categories and registered strings.
///
/// Dropping a `Domain` releases it; creating the same name twice gives one
/// domain that lives until both are dropped.
///
/// ```
/// let domain = nvtxr::Domain::new("my library");
/// let forward = domain.register("forward");
/// {
///     let _r = domain.push(&forward);
///     domain.mark("inside");
/// }
/// ```
pub struct Domain {
    state: &'static DomainState,
}

impl Domain {
    /// The engine's domain.
    pub(crate) fn state(&self) -> &'static DomainState {
        self.state
    }
}

static GLOBAL: LazyLock<Domain> = LazyLock::new(|| Domain {
    state: DomainState::default_domain(),
});

impl Domain {
    /// Creates (or shares) the domain `name`. Valid with or without a tool.
    pub fn new(name: &str) -> Domain {
        with_c_str(name, |c| Domain {
            // Re-entered from a signal handler: a domain of its own rather than a deadlock.
            state: DomainState::create(c).unwrap_or_else(|_| DomainState::uninterned(c)),
        })
    }

    /// The default domain, which the crate-level functions use.
    pub fn global() -> &'static Domain {
        &GLOBAL
    }

    /// The domain's name; `None` for the default domain.
    pub fn name(&self) -> Option<&CStr> {
        self.state.name()
    }

    /// Registers `text` in this domain once; later calls return the same string.
    pub fn register(&self, text: &str) -> RegisteredString<'_> {
        let state = with_c_str(text, |c| {
            self.state
                .register_string(c)
                .unwrap_or_else(|_| self.state.uninterned_string(c))
        });
        RegisteredString {
            state,
            _domain: PhantomData,
        }
    }

    /// Names category `id` in this domain.
    pub fn name_category(&self, id: u32, name: &str) {
        if loader::tool_attached() {
            // SAFETY: the pointer is a valid C string for the call.
            with_c_str(name, |c| unsafe {
                self.state.name_category(id, c.as_ptr(), Family::Default)
            })
            .ok();
        }
    }

    /// Whether the tool wants this domain's events (NVTX's
    /// `nvtxDomainIsEnabled`): false with no tool, the tool's answer when it
    /// gives one, true for a tool that does not. Skip building costly
    /// annotations when it is false.
    ///
    /// ```
    /// let domain = nvtxr::Domain::new("io");
    /// if domain.is_enabled() {
    ///     domain.mark(format!("read {} bytes", 4096).as_str());
    /// }
    /// ```
    pub fn is_enabled(&self) -> bool {
        events::domain_is_enabled(self.state).unwrap_or(false)
    }

    /// A counter named `name` in this domain (NVTX's counters extension):
    /// a series of `T` values (`i64` or `f64`) the tool plots over time.
    /// With no tool (or one without counters) sampling does nothing.
    ///
    /// ```
    /// let domain = nvtxr::Domain::new("train");
    /// let loss = domain.counter::<f64>("loss");
    /// loss.sample(0.25);
    /// ```
    pub fn counter<T: CounterValue>(&self, name: &str) -> Counter<'_, T> {
        let id = with_c_str(name, |c| counters::register(self.state, c, T::TYPE)).unwrap_or(0);
        Counter::new(self.state, id)
    }

    /// An instantaneous event.
    pub fn mark<'a>(&self, attributes: impl Into<EventAttributes<'a>>) {
        if loader::tool_attached() {
            attributes
                .into()
                .with_event(|e| events::mark(self.state, e, Family::Default))
                .ok();
        }
    }

    /// Ends the start/end range `id` of this domain, from
    /// [`Range::into_id`], on any thread.
    pub fn end_range(&self, id: u64) {
        events::end(self.state, id, Family::Default).ok();
    }

    /// Opens a range on this thread, closed when the guard drops.
    ///
    /// A push nvtxr refuses (a registered string of another domain, say) is
    /// not popped either, so the caller's enclosing range stays open.
    pub fn push<'a>(&self, attributes: impl Into<EventAttributes<'a>>) -> LocalRange<'_> {
        let pushed = loader::tool_attached()
            && attributes
                .into()
                .with_event(|e| events::push(self.state, e, Family::Default))
                .is_ok();
        LocalRange {
            domain: self.state,
            pushed,
            _lifetime: PhantomData,
        }
    }

    /// Starts a range that may end on any thread, when the guard drops or
    /// [`Range::end`] is called.
    pub fn start<'a>(&self, attributes: impl Into<EventAttributes<'a>>) -> Range<'_> {
        let id = if loader::tool_attached() {
            attributes
                .into()
                .with_event(|e| events::start(self.state, e, Family::Default))
                .unwrap_or(0)
        } else {
            0
        };
        Range {
            domain: self.state,
            id,
            _lifetime: PhantomData,
        }
    }
}

impl Drop for Domain {
    fn drop(&mut self) {
        // Each Domain value holds one count, so this cannot fail.
        let _ = self.state.destroy();
    }
}

/// A push/pop range: popped when dropped, on the thread that pushed it.
///
/// It is `!Send`, because NVTX push/pop ranges belong to an OS thread:
/// ```compile_fail
/// let range = nvtxr::push("x");
/// std::thread::spawn(move || drop(range));
/// ```
#[must_use = "the range closes when this guard is dropped; bind it to a named variable"]
pub struct LocalRange<'d> {
    domain: &'static DomainState,
    /// Whether the push reached the tool: only then is there a range to pop.
    pushed: bool,
    _lifetime: PhantomData<(&'d Domain, *const ())>,
}

impl Drop for LocalRange<'_> {
    fn drop(&mut self) {
        if self.pushed {
            events::pop(self.domain, Family::Default).ok();
        }
    }
}

/// A start/end range: may be moved to and ended on another thread.
#[must_use = "the range ends when this guard is dropped; bind it to a named variable"]
pub struct Range<'d> {
    domain: &'static DomainState,
    id: u64,
    _lifetime: PhantomData<&'d Domain>,
}

impl Range<'_> {
    /// The tool's range id (0 with no tool).
    pub fn id(&self) -> u64 {
        self.id
    }

    /// Ends the range now.
    pub fn end(self) {}

    /// Gives the guard up without ending the range: its id, for
    /// [`Domain::end_range`] to end later (kept in a table, say, where a
    /// guard cannot go).
    pub fn into_id(self) -> u64 {
        let id = self.id;
        std::mem::forget(self);
        id
    }
}

impl Drop for Range<'_> {
    fn drop(&mut self) {
        events::end(self.domain, self.id, Family::Default).ok();
    }
}

impl Domain {
    /// Registers `T`'s schema in this domain (once per domain is enough;
    /// each call registers it again).
    pub fn payload_schema<T: PayloadStruct>(&self) -> PayloadSchema<'_, T> {
        let entries: Vec<SchemaEntry> = T::FIELDS
            .iter()
            .map(|f| SchemaEntry {
                flags: if f.length > 0 {
                    entry_flag::ARRAY_FIXED_SIZE
                } else {
                    0
                },
                type_: f.type_,
                name: f.name.as_ptr(),
                description: std::ptr::null(),
                array_or_union_detail: f.length,
                offset: f.offset as u64,
                semantics: std::ptr::null(),
                reserved: std::ptr::null(),
            })
            .collect();
        let attributes = SchemaAttr {
            field_mask: schema_field::NAME
                | schema_field::TYPE
                | schema_field::ENTRIES
                | schema_field::NUM_ENTRIES
                | schema_field::STATIC_SIZE,
            name: T::NAME.as_ptr(),
            type_: schema_type::STATIC,
            flags: 0,
            entries: entries.as_ptr(),
            num_entries: entries.len(),
            payload_static_size: std::mem::size_of::<T>(),
            pack_align: 0,
            schema_id: 0,
            extension: std::ptr::null::<c_void>(),
        };
        let id = if entries.is_empty() {
            0
        } else {
            payloads::register_schema(self.state(), &attributes).unwrap_or(0)
        };
        PayloadSchema::new(id)
    }
}
