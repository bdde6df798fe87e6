//! Domains and their registered strings.
//!
//! nvtxr's handles stay valid with or without a tool and are never freed:
//! domains are interned by name (creating "A" twice gives one handle with a
//! count of two), registered strings are interned per domain by text. Memory is
//! bounded by the number of distinct names and texts, and a handle used after
//! its domain was destroyed is detected instead of being a dangling pointer.
//!
//! Rules that keep a tool from hanging or corrupting the process:
//! - nvtxr's one lock ([`REGISTRY`]) is never held while calling the tool or
//!   while initializing, so a tool may call nvtxr, or fork, from any callback;
//! - a domain or string is attached to the tool (`DomainCreate`,
//!   `DomainRegisterString`) on its creation when a tool is attached, or
//!   else on its first use once one is (created from inside the tool's own
//!   initialization, say), exactly once per life of the domain;
//! - events in a domain pass a gate: destroy closes it, waits for the events
//!   already inside, then destroys the domain in the tool. After destroy
//!   returns no event carries the old handle, and none silently moves to
//!   the default domain: they are refused with [`Error::Destroyed`];
//! - `fork()` waits for the lock (one lock, whatever the number of domains),
//!   so a child never inherits it held;
//! - a signal handler that interrupts a create, register or destroy on its
//!   own thread and calls one of them gets [`Error::Reentered`] instead of
//!   deadlocking. Events never take the lock.

use crate::attachment::Attachment;
use crate::claim;
use crate::error::Error;
use crate::handles::{ALIGN, DOMAIN_TAG, STRING_TAG};
use crate::loader::{self, slots};
use nvtx_protocol::{slot, EventAttributes};
use std::cell::{Cell, UnsafeCell};
use std::collections::BTreeMap;
use std::ffi::{c_char, c_void, CStr, CString};
use std::ptr;
use std::sync::atomic::{compiler_fence, AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};

/// One domain. `name == None` is the default (global) domain.
#[repr(C)]
pub struct DomainState {
    /// [`DOMAIN_TAG`], first.
    tag: u32,
    name: Option<CString>,
    attachment: Attachment,
    /// [`LIVE`] while the domain is created and not being destroyed, plus
    /// the number of events using its tool handle right now.
    gate: AtomicU64,
    /// Guarded by [`REGISTRY`]; reach it through [`Registry::life`].
    life: UnsafeCell<Life>,
}

// SAFETY: `life` is only touched with the registry lock held; the rest is atomic.
unsafe impl Sync for DomainState {}

const LIVE: u64 = 1 << 63;

struct Life {
    /// Creates minus destroys.
    count: u32,
    /// A destroy is detaching the domain from the tool.
    detaching: bool,
    strings: BTreeMap<CString, &'static StringState>,
}

/// One registered string of one domain.
#[repr(C)]
pub struct StringState {
    /// [`STRING_TAG`], first.
    tag: u32,
    domain: &'static DomainState,
    text: CString,
    attachment: Attachment,
    /// What the fast path passes the tool, written while attaching (by the
    /// thread holding `attachment`'s claim) and read only once the claim is
    /// `DONE`.
    attached: UnsafeCell<Attached>,
}

/// A registered string as the tool knows it.
pub(crate) struct Attached {
    /// The domain's tool handle when the string was attached: the domain's
    /// handle for as long as the string stays attached (a destroy detaches
    /// both, before the domain can be entered again).
    pub domain: *mut c_void,
    /// NVTX's attributes of an event whose only attribute is this string.
    pub attributes: EventAttributes,
}

// SAFETY: `attached` is written only by the thread holding the string's
// attachment claim, before it publishes `DONE` (release), and read only after
// reading `DONE` (acquire); the rest is atomic or immutable.
unsafe impl Sync for StringState {}

mod fork;

struct Registry {
    domains: BTreeMap<CString, &'static DomainState>,
}

static DEFAULT: DomainState = DomainState::new(None, 1);
static REGISTRY: Mutex<Registry> = Mutex::new(Registry {
    domains: BTreeMap::new(),
});

thread_local! {
    /// This thread holds the registry lock (a signal handler that interrupts
    /// it must not wait for it).
    static HOLDING: Cell<bool> = const { Cell::new(false) };
}

/// The registry lock, held.
struct Held(Option<MutexGuard<'static, Registry>>);

impl Drop for Held {
    fn drop(&mut self) {
        // Unlock first: a handler arriving in between finds the flag still
        // set and backs off, rather than finding it clear and the lock held.
        drop(self.0.take());
        compiler_fence(Ordering::SeqCst);
        HOLDING.with(|h| h.set(false));
    }
}

impl std::ops::Deref for Held {
    type Target = Registry;
    fn deref(&self) -> &Registry {
        self.0.as_ref().expect("held until dropped")
    }
}

impl std::ops::DerefMut for Held {
    fn deref_mut(&mut self) -> &mut Registry {
        self.0.as_mut().expect("held until dropped")
    }
}

/// The registry lock; `Err(Reentered)` when this thread already holds it
/// (a signal handler interrupted it). A panic while holding it leaves the
/// maps consistent.
fn registry() -> Result<Held, Error> {
    if HOLDING.with(|h| h.replace(true)) {
        return Err(Error::Reentered);
    }
    compiler_fence(Ordering::SeqCst);
    fork::protect();
    Ok(Held(Some(
        REGISTRY.lock().unwrap_or_else(|e| e.into_inner()),
    )))
}

impl Registry {
    /// A domain's bookkeeping; the `&mut self` proves the lock is held.
    fn life<'a>(&'a mut self, domain: &'a DomainState) -> &'a mut Life {
        // SAFETY: `life` is only reached through here, with the lock held.
        unsafe { &mut *domain.life.get() }
    }
}

/// Proof that an event is inside a domain's gate; leaving drops it.
pub struct Entered {
    /// The gate to leave on drop; `None` for the default domain, which has none.
    gate: Option<&'static AtomicU64>,
    /// The domain's tool handle (NULL for the default domain).
    pub handle: *mut c_void,
}

impl Entered {
    /// The default domain: never destroyed, so no gate; tool handle NULL.
    pub(crate) fn default_domain() -> Self {
        Entered {
            gate: None,
            handle: ptr::null_mut(),
        }
    }
}

impl Drop for Entered {
    #[inline]
    fn drop(&mut self) {
        if let Some(gate) = self.gate {
            gate.fetch_sub(1, Ordering::Release);
        }
    }
}

impl DomainState {
    const fn new(name: Option<CString>, count: u32) -> Self {
        Self {
            tag: DOMAIN_TAG,
            name,
            attachment: Attachment::new(),
            gate: AtomicU64::new(if count > 0 { LIVE } else { 0 }),
            life: UnsafeCell::new(Life {
                count,
                detaching: false,
                strings: BTreeMap::new(),
            }),
        }
    }

    /// The default domain: never destroyed, tool handle NULL.
    pub fn default_domain() -> &'static DomainState {
        &DEFAULT
    }

    /// Creates (or takes one more count on) the domain named `name`.
    pub fn create(name: &CStr) -> Result<&'static DomainState, Error> {
        let attached = loader::tool_attached();
        let domain = {
            let mut registry = registry()?;
            let domain = *registry
                .domains
                .entry(name.to_owned())
                .or_insert_with(|| Box::leak(Box::new(DomainState::new(Some(name.to_owned()), 0))));
            let life = registry.life(domain);
            life.count += 1;
            if life.count == 1 && !life.detaching {
                domain.gate.fetch_or(LIVE, Ordering::Release);
            }
            domain
        };
        if attached {
            // The tool sees the domain created now, not at its first event.
            let _ = domain.enter();
        }
        Ok(domain)
    }

    /// A live domain of its own, outside the registry (what the Rust API
    /// makes when a signal handler interrupted a registry call on its thread).
    pub fn uninterned(name: &CStr) -> &'static DomainState {
        Box::leak(Box::new(DomainState::new(Some(name.to_owned()), 1)))
    }

    /// Gives back one count; the last one destroys the domain in the tool,
    /// once the events already using it have left.
    pub fn destroy(&'static self) -> Result<(), Error> {
        if self.name.is_none() {
            return Ok(()); // The default domain cannot be destroyed.
        }
        loader::tool_attached();
        {
            let mut registry = registry()?;
            let life = registry.life(self);
            if life.count == 0 {
                return Err(Error::Destroyed);
            }
            life.count -= 1;
            if life.count > 0 || life.detaching {
                return Ok(());
            }
            life.detaching = true;
            self.gate.fetch_and(!LIVE, Ordering::AcqRel);
        }
        let mut spins = 0u32;
        while self.gate.load(Ordering::Acquire) & !LIVE != 0 {
            spins += 1;
            if spins < 64 {
                std::hint::spin_loop();
            } else {
                std::thread::yield_now();
            }
        }
        if let Some(handle) = self.attachment.reset() {
            if let Some(f) = slots::get(slot::DOMAIN_DESTROY) {
                // SAFETY: the handle the tool gave for this domain, not used again.
                unsafe { f(handle) };
            }
        }
        // Taken again right after this thread released it: not re-entered.
        let mut registry = registry()?;
        let life = registry.life(self);
        for s in life.strings.values() {
            s.attachment.reset();
        }
        life.detaching = false;
        if life.count > 0 {
            // Created again meanwhile.
            self.gate.fetch_or(LIVE, Ordering::Release);
        }
        Ok(())
    }

    /// The name given at creation; `None` for the default domain.
    pub fn name(&self) -> Option<&CStr> {
        self.name.as_deref()
    }

    pub fn is_default(&self) -> bool {
        self.name.is_none()
    }

    /// Whether the domain is created and not destroyed.
    pub fn is_live(&self) -> bool {
        self.gate.load(Ordering::Acquire) & LIVE != 0
    }

    /// Enters the domain's gate for one call into the tool: the domain's
    /// tool handle, attached first if needed, or `Err(Destroyed)`. Only
    /// called with a tool attached.
    #[inline]
    pub(crate) fn enter(&'static self) -> Result<Entered, Error> {
        if self.is_default() {
            return Ok(Entered::default_domain());
        }
        let mut entered = self.enter_live().ok_or(Error::Destroyed)?;
        let name = self.name.as_deref().unwrap_or_default();
        match self.attachment.get(|| {
            // SAFETY: name is NUL-terminated.
            slots::get(slot::DOMAIN_CREATE_A)
                .map_or(ptr::null_mut(), |f| unsafe { f(name.as_ptr()) })
        }) {
            Some(handle) => {
                entered.handle = handle;
                Ok(entered)
            }
            // The tool called back from inside its own DomainCreate for this
            // domain: it has no handle to give yet.
            None => Err(Error::Destroyed),
        }
    }

    /// Enters the gate of a created domain, not looking up its tool handle
    /// (NULL here): `None` when the domain is destroyed. For the fast paths,
    /// which find the handle elsewhere.
    #[inline(always)]
    pub(crate) fn enter_live(&'static self) -> Option<Entered> {
        let entered = Entered {
            gate: Some(&self.gate),
            handle: ptr::null_mut(),
        };
        // Dropping `entered` leaves the gate again.
        (self.gate.fetch_add(1, Ordering::Acquire) & LIVE != 0).then_some(entered)
    }

    /// `enter` for a created domain the tool already knows (the fast path):
    /// `None` when the domain is destroyed or not attached yet (take
    /// `enter`). Also `None` for the default domain, which is never attached
    /// (its gate is always open, and `enter` returns before attaching): its
    /// fast paths need no gate and take `Entered::default_domain`.
    #[inline(always)]
    pub fn enter_attached(&'static self) -> Option<Entered> {
        let mut entered = self.enter_live()?;
        if self.attachment.claim.load(Ordering::Acquire) != claim::DONE {
            return None;
        }
        entered.handle = self.attachment.handle.load(Ordering::Relaxed);
        Some(entered)
    }

    /// Registers `text` once; later calls with the same text return the
    /// same string (also after the domain is destroyed: it is interned).
    pub fn register_string(&'static self, text: &CStr) -> Result<&'static StringState, Error> {
        let attached = loader::tool_attached();
        let string = {
            let mut registry = registry()?;
            let life = registry.life(self);
            if let Some(s) = life.strings.get(text) {
                return Ok(s);
            }
            let s = self.uninterned_string(text);
            life.strings.insert(text.to_owned(), s);
            s
        };
        if attached {
            // The tool sees the string registered now, not at its first use.
            if let Ok(entered) = self.enter() {
                let _ = string.tool_handle(&entered);
            }
        }
        Ok(string)
    }

    /// A string of this domain outside its table (interned by `register_string`;
    /// made alone by the Rust API when a signal handler interrupted a registry
    /// call on its thread). Attached to the tool at its first use.
    pub fn uninterned_string(&'static self, text: &CStr) -> &'static StringState {
        Box::leak(Box::new(StringState {
            tag: STRING_TAG,
            domain: self,
            text: text.to_owned(),
            attachment: Attachment::new(),
            attached: UnsafeCell::new(Attached {
                domain: ptr::null_mut(),
                attributes: EventAttributes::registered(ptr::null()),
            }),
        }))
    }

    /// Names category `id` in this domain, through `family`'s call for the
    /// default domain (`nvtxNameCategoryA`, or `nvtxDomainNameCategoryA`
    /// with a NULL handle).
    ///
    /// # Safety
    /// `name` must be a valid NUL-terminated string.
    pub unsafe fn name_category(
        &'static self,
        id: u32,
        name: *const c_char,
        family: Family,
    ) -> Result<(), Error> {
        // SAFETY: the caller upholds this function's `# Safety` contract.
        unsafe {
            let entered = self.enter()?;
            if self.is_default() && family == Family::Default {
                if let Some(f) = slots::get(slot::NAME_CATEGORY_A) {
                    f(id, name);
                }
            } else if let Some(f) = slots::get(slot::DOMAIN_NAME_CATEGORY_A) {
                f(entered.handle, id, name);
            }
            Ok(())
        }
    }
}

// `handles::is_domain` reads an object's tag only at an aligned address.
const _: () = assert!(
    std::mem::align_of::<DomainState>() >= ALIGN && std::mem::align_of::<StringState>() >= ALIGN
);

/// Which NVTX calls carry the default domain's events. Closing a range must
/// use the family that opened it: a tool that hooks only one family (NVIDIA's
/// sample tools hook only the domain calls) would see unbalanced ranges.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    /// As NVIDIA's C API: `nvtxRangePushA` for text alone, `nvtxRangePushEx`
    /// for attributes, `nvtxRangePop`; domain calls for a registered string.
    Default,
    /// As NVIDIA's Python package: the `nvtxDomain...` calls with a NULL
    /// handle for every event, `nvtxDomainRangePop(NULL)`.
    Domain,
}

impl StringState {
    /// The domain the string was registered in.
    pub fn domain(&self) -> &'static DomainState {
        self.domain
    }

    /// The registered text.
    pub fn text(&self) -> &CStr {
        &self.text
    }

    /// The string as the tool knows it, if the tool already has it (the
    /// fast path). Called inside the domain's gate.
    #[inline(always)]
    pub(crate) fn attached(&self) -> Option<&Attached> {
        // SAFETY: written before `DONE` was published, not again until a
        // destroy resets the claim, which waits for the gate to empty.
        (self.attachment.claim.load(Ordering::Acquire) == claim::DONE)
            .then(|| unsafe { &*self.attached.get() })
    }

    /// The tool's handle for the string, registered first if needed.
    /// `domain`: the string's own domain, entered.
    #[inline]
    pub(crate) fn tool_handle(&self, domain: &Entered) -> Result<*mut c_void, Error> {
        self.attachment
            .get(|| {
                // SAFETY: the domain's tool handle; text is NUL-terminated.
                let handle = slots::get(slot::DOMAIN_REGISTER_STRING_A)
                    .map_or(ptr::null_mut(), |f| unsafe {
                        f(domain.handle, self.text.as_ptr())
                    });
                // SAFETY: this thread holds the claim (see `attached`).
                unsafe {
                    *self.attached.get() = Attached {
                        domain: domain.handle,
                        attributes: EventAttributes::registered(handle),
                    }
                };
                handle
            })
            .ok_or(Error::InvalidArgument(
                "the tool used a string from inside its own registration of it",
            ))
    }
}
