//! The safe Rust API: a door over nvtxr's engine (`nvtxr-engine`), as the C
//! ABI (`nvtxr-capi`) is another.

use crate::payload::{PayloadSchema, PayloadStruct};
use nvtx_protocol::payload::PayloadData;
use nvtxr_engine::attributes::{Color, Event, Payload, RawMessage, RawPayload};
use nvtxr_engine::counters::{self, CounterType};
use nvtxr_engine::domain::{DomainState, StringState};
use nvtxr_engine::events::{self, Family};
use nvtxr_engine::loader;
use nvtxr_engine::naming::{self, CudaObject};
use nvtxr_engine::thread::current_os_thread_id;
use std::borrow::Cow;
use std::ffi::{c_void, CStr, CString};
use std::marker::PhantomData;
use std::sync::LazyLock;

/// Runs `f` with `text` as a NUL-terminated C string: copied to the stack when
/// short, to the heap when long. Interior NUL bytes become U+FFFD, so nothing
/// after them is lost.
fn with_c_str<R>(text: &str, f: impl FnOnce(&CStr) -> R) -> R {
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

    /// Category id (0 means none); name it with [`Domain::name_category`].
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
    fn with_event<R>(&self, f: impl FnOnce(&Event) -> R) -> R {
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
        Counter {
            domain: self.state,
            id,
            _types: PhantomData,
        }
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

/// A string registered once in a domain, passed to the tool by handle.
/// It borrows its domain.
#[derive(Clone, Copy)]
pub struct RegisteredString<'d> {
    state: &'static StringState,
    _domain: PhantomData<&'d Domain>,
}

impl RegisteredString<'_> {
    /// The registered text.
    pub fn text(&self) -> &CStr {
        self.state.text()
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

/// Loads and attaches the tool now (otherwise the first call does it);
/// returns whether a tool is attached.
pub fn initialize() -> bool {
    loader::initialize_and_forward()
}

/// Whether a tool is attached (initializes first if needed).
pub fn is_tool_attached() -> bool {
    loader::tool_attached()
}

/// Why the tool named in `NVTX_INJECTION64_PATH` did not attach, if it did not.
pub fn load_error() -> Option<Cow<'static, str>> {
    loader::tool_attached();
    loader::load_error().map(|e| e.to_string_lossy())
}

/// A mark in the default domain.
pub fn mark<'a>(attributes: impl Into<EventAttributes<'a>>) {
    Domain::global().mark(attributes)
}

/// A push/pop range in the default domain.
pub fn push<'a>(attributes: impl Into<EventAttributes<'a>>) -> LocalRange<'static> {
    Domain::global().push(attributes)
}

/// A start/end range in the default domain.
pub fn start<'a>(attributes: impl Into<EventAttributes<'a>>) -> Range<'static> {
    Domain::global().start(attributes)
}

/// Names a category of the default domain.
pub fn name_category(id: u32, name: &str) {
    Domain::global().name_category(id, name)
}

/// Names the calling OS thread.
pub fn name_current_thread(name: &str) {
    name_os_thread(current_os_thread_id(), name)
}

/// Names an OS thread by its id (Linux `gettid`).
pub fn name_os_thread(tid: u32, name: &str) {
    if loader::tool_attached() {
        // SAFETY: the pointer is a valid C string for the call.
        with_c_str(name, |c| unsafe { naming::name_os_thread(tid, c.as_ptr()) })
    }
}

/// Names a CUDA device (by ordinal) or a CUDA object (by handle value).
pub fn name_cuda(object: CudaObject, id: usize, name: &str) {
    if loader::tool_attached() {
        // SAFETY: the pointer is a valid C string for the call.
        with_c_str(name, |c| unsafe {
            naming::name_cuda(object, id, c.as_ptr())
        })
    }
}

/// A push/pop range in the default domain whose message is registered once
/// per call site (in a `static`), then passed by handle: the cheapest way to
/// annotate a hot Rust function. Evaluates to a [`LocalRange`] guard.
///
/// ```
/// fn step() {
///     let _r = nvtxr::range!("step");
///     // ...
/// }
/// step();
/// ```
#[macro_export]
macro_rules! range {
    ($message:expr) => {{
        static MESSAGE: ::std::sync::OnceLock<$crate::RegisteredString<'static>> =
            ::std::sync::OnceLock::new();
        let domain = $crate::Domain::global();
        domain.push(MESSAGE.get_or_init(|| domain.register($message)))
    }};
}

/// A push/pop range, as [`range!`], that lasts until the end of the
/// enclosing block: the macro binds the guard itself, so it cannot be
/// dropped at once by mistake (as `let _ = nvtxr::range!(...)` is).
/// With no argument, it is named after the enclosing function.
///
/// ```
/// fn step(batch: u32) {
///     nvtxr::scope!();                  // "step" (its path), until step returns
///     for _ in 0..batch {
///         nvtxr::scope!("inner loop");  // until the end of this iteration
///     }
/// }
/// step(2);
/// ```
#[macro_export]
macro_rules! scope {
    () => {
        let _nvtxr_scope = $crate::function_range!();
    };
    ($message:expr) => {
        let _nvtxr_scope = $crate::range!($message);
    };
}

/// [`range!`] named after the enclosing function (its path, e.g. `crate::module::function`).
///
/// ```
/// fn forward() {
///     let _r = nvtxr::function_range!();
/// }
/// forward();
/// ```
#[macro_export]
macro_rules! function_range {
    () => {{
        fn here() {}
        fn name_of<T>(_: T) -> &'static str {
            ::std::any::type_name::<T>()
        }
        $crate::range!(name_of(here).trim_end_matches("::here"))
    }};
}

/// Names an OpenCL object: `handle` is the `cl_*` handle's address (never
/// dereferenced), as `name_cuda` takes CUDA handles.
pub fn name_opencl(object: crate::OpenClObject, handle: usize, name: &str) {
    if loader::tool_attached() {
        // SAFETY: the pointer is a valid C string for the call.
        with_c_str(name, |c| unsafe {
            naming::name_opencl(object, handle as *mut std::ffi::c_void, c.as_ptr())
        })
    }
}

/// A user-defined synchronization object (a lock, a barrier, a queue the
/// program implements itself) as the tool knows it, so the tool can show who
/// waited for it. Destroyed in the tool when dropped. `Send` and `Sync`: its
/// events may come from any thread.
///
/// ```
/// let lock = nvtxr::SyncUser::new(nvtxr::Domain::global(), "work queue");
/// lock.acquire_start();
/// lock.acquire_success();
/// lock.releasing();
/// ```
pub struct SyncUser<'d> {
    /// The tool's object; NULL with no tool.
    handle: *mut std::ffi::c_void,
    _domain: PhantomData<&'d Domain>,
}

// SAFETY: the handle is the tool's, which NVTX lets any thread use.
unsafe impl Send for SyncUser<'_> {}
// SAFETY: as above; nvtxr only passes the handle along.
unsafe impl Sync for SyncUser<'_> {}

impl<'d> SyncUser<'d> {
    /// Creates the tool's object for a synchronization object named `name` in `domain`.
    pub fn new(domain: &'d Domain, name: &str) -> Self {
        // SAFETY: the pointer is a valid C string for the call.
        let handle = with_c_str(name, |c| unsafe {
            nvtxr_engine::sync::create(domain.state, c.as_ptr())
        })
        .unwrap_or(std::ptr::null_mut());
        SyncUser {
            handle,
            _domain: PhantomData,
        }
    }

    fn report(&self, event: nvtxr_engine::sync::SyncEvent) {
        // SAFETY: the handle is NULL or the live object from `new`.
        unsafe { nvtxr_engine::sync::report(self.handle, event) }
    }

    /// About to try to acquire it.
    pub fn acquire_start(&self) {
        self.report(nvtxr_engine::sync::SyncEvent::AcquireStart)
    }

    /// The attempt failed.
    pub fn acquire_failed(&self) {
        self.report(nvtxr_engine::sync::SyncEvent::AcquireFailed)
    }

    /// Acquired.
    pub fn acquire_success(&self) {
        self.report(nvtxr_engine::sync::SyncEvent::AcquireSuccess)
    }

    /// About to release it.
    pub fn releasing(&self) {
        self.report(nvtxr_engine::sync::SyncEvent::Releasing)
    }
}

impl Drop for SyncUser<'_> {
    fn drop(&mut self) {
        // SAFETY: the handle is NULL or the live object from `new`, not used again.
        unsafe { nvtxr_engine::sync::destroy(self.handle) }
    }
}

/// A counter's value type: `i64` or `f64`.
pub trait CounterValue: Copy + sealed::Sealed {
    #[doc(hidden)]
    const TYPE: CounterType;
    #[doc(hidden)]
    fn sample(domain: &'static DomainState, id: u64, value: Self);
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for i64 {}
    impl Sealed for f64 {}
}

impl CounterValue for i64 {
    const TYPE: CounterType = CounterType::Int64;
    fn sample(domain: &'static DomainState, id: u64, value: i64) {
        counters::sample_i64(domain, id, value).ok();
    }
}

impl CounterValue for f64 {
    const TYPE: CounterType = CounterType::Float64;
    fn sample(domain: &'static DomainState, id: u64, value: f64) {
        counters::sample_f64(domain, id, value).ok();
    }
}

/// A counter of a [`Domain`] (see [`Domain::counter`]).
pub struct Counter<'d, T: CounterValue> {
    domain: &'static DomainState,
    id: u64,
    _types: PhantomData<(&'d Domain, T)>,
}

impl<T: CounterValue> Counter<'_, T> {
    /// Records `value` now.
    pub fn sample(&self, value: T) {
        T::sample(self.domain, self.id, value)
    }

    /// Records samples taken earlier: `values[i]` at `timestamps[i]`, each
    /// a reading of [`timestamp`] (the tool's clock), in one call.
    ///
    /// ```
    /// let domain = nvtxr::Domain::new("trainer");
    /// let loss = domain.counter::<f64>("loss");
    /// let (mut values, mut times) = (Vec::new(), Vec::new());
    /// for step in 0..3 {
    ///     values.push(1.0 / (step + 1) as f64);
    ///     times.push(nvtxr::timestamp());
    /// }
    /// loss.batch(&values, &times).unwrap();
    /// ```
    ///
    /// # Errors
    /// [`Error::InvalidArgument`](crate::Error::InvalidArgument) when the
    /// slices' lengths differ (nothing is recorded).
    pub fn batch(&self, values: &[T], timestamps: &[i64]) -> Result<(), crate::Error> {
        counters::batch(self.domain, self.id, values, timestamps)
    }
}

/// A reading of the tool's clock, for samples and events recorded later
/// ([`Counter::batch`]; NVTX's `nvtxTimestampGet`); 0 with no tool.
pub fn timestamp() -> i64 {
    nvtxr_engine::payloads::timestamp()
}
