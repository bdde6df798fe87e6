//! Marks and ranges: each call checks for a tool (one atomic load), then picks
//! the slot NVIDIA's own API would use for the same call:
//! - default domain, text message only: `nvtxMarkA` / `nvtxRangePushA` / `nvtxRangeStartA`;
//! - default domain with attributes: `nvtxMarkEx` / `nvtxRangePushEx` / `nvtxRangeStartEx`;
//! - a created domain, or a registered string: `nvtxDomainMarkEx` and friends
//!   (the default domain's handle is NULL there).
//!
//! Callers check `tool_attached()` first (that also initializes); these
//! functions do not check again. With no tool every slot is NULL, so they
//! would be no-ops anyway.

use crate::attributes::Event;
use crate::domain::{Attached, DomainState, Entered, StringState};
use crate::error::Error;
use crate::loader::slots;
use nvtx_protocol::{slot, Attributes, Handle, SlotId, Str, NO_PUSH_POP_TRACKING};
use std::ffi::c_char;
use std::ptr;

type TextFn<R> = unsafe extern "C" fn(Str) -> R;
type ExFn<R> = unsafe extern "C" fn(Attributes) -> R;
pub type DomainExFn<R> = unsafe extern "C" fn(Handle, Attributes) -> R;

/// Where an event goes.
enum Target {
    Text(*const c_char),
    /// The default domain's `...Ex` slot, or, with a domain, its `Domain...Ex` slot.
    Ex(Entered),
    Domain(Entered),
}

/// The three slots (text, Ex, domain Ex) of one kind of event.
pub struct Slots3<R> {
    text: SlotId<TextFn<R>>,
    ex: SlotId<ExFn<R>>,
    domain_ex: SlotId<DomainExFn<R>>,
}

pub const MARK: Slots3<()> = Slots3 {
    text: slot::MARK_A,
    ex: slot::MARK_EX,
    domain_ex: slot::DOMAIN_MARK_EX,
};
pub const PUSH: Slots3<i32> = Slots3 {
    text: slot::RANGE_PUSH_A,
    ex: slot::RANGE_PUSH_EX,
    domain_ex: slot::DOMAIN_RANGE_PUSH_EX,
};
pub const START: Slots3<u64> = Slots3 {
    text: slot::RANGE_START_A,
    ex: slot::RANGE_START_EX,
    domain_ex: slot::DOMAIN_RANGE_START_EX,
};

pub use crate::domain::Family;

fn target(domain: &'static DomainState, event: &Event, family: Family) -> Result<Target, Error> {
    if let Some(s) = event.registered() {
        if !std::ptr::eq(s.domain(), domain) {
            return Err(Error::InvalidArgument(
                "registered string belongs to another domain",
            ));
        }
    } else if domain.is_default() && family == Family::Default {
        return Ok(match event.plain_text() {
            Some(text) => Target::Text(text),
            None => Target::Ex(domain.enter()?),
        });
    }
    domain.enter().map(Target::Domain)
}

/// Forwards `event` to the tool's slot for its kind; `none` if the slot is empty.
#[inline(always)]
fn emit<R: Copy>(
    kind: &Slots3<R>,
    domain: &'static DomainState,
    event: &Event,
    family: Family,
    none: R,
) -> Result<R, Error> {
    // A registered string alone, which the tool knows: its prebuilt
    // attributes, no struct built (every door's commonest domain event).
    if let Some(s) = event.registered_alone() {
        let named = (!domain.is_default()).then_some(domain);
        if let Some(r) = slots::get(kind.domain_ex).and_then(|f| emit_registered(f, named, s)) {
            return Ok(r);
        }
    }
    emit_built(kind, domain, event, family, none)
}

/// [`emit`] with NVTX's attribute struct built for the event.
#[inline]
fn emit_built<R: Copy>(
    kind: &Slots3<R>,
    domain: &'static DomainState,
    event: &Event,
    family: Family,
    none: R,
) -> Result<R, Error> {
    let target = target(domain, event, family)?;
    // SAFETY: each slot's type is fixed by the protocol; pointers in the
    // event are valid for the call (the caller's contract).
    unsafe {
        Ok(match target {
            Target::Text(text) => default_text(kind, text, none),
            Target::Ex(entered) => {
                let raw = event.nvtx_attributes(&entered)?;
                slots::get(kind.ex).map_or(none, |f| f(&raw))
            }
            Target::Domain(entered) => {
                let raw = event.nvtx_attributes(&entered)?;
                slots::get(kind.domain_ex).map_or(none, |f| f(entered.handle, &raw))
            }
        })
    }
}

/// The C ABI's fast path for `*_ex` calls: `emit` for a valid event whose
/// domain (`None`: the default domain) and registered string (if any) the
/// tool already knows. `None` for anything else, which `emit` then handles
/// (attaching, or reporting the error).
#[inline(always)]
pub fn emit_attached<R>(
    kind: &Slots3<R>,
    domain: Option<&'static DomainState>,
    event: &Event,
) -> Option<R> {
    match (domain, event.registered()) {
        (None, None) => {
            let raw = event
                .nvtx_attributes_with(|_| Ok::<_, ()>(ptr::null_mut()))
                .ok()?;
            // SAFETY: each slot's type is fixed by the protocol; pointers in
            // the event are valid for the call (the caller's contract).
            Some(unsafe { slots::get(kind.ex)?(&raw) })
        }
        (Some(d), None) => {
            let entered = d.enter_attached()?;
            let raw = event
                .nvtx_attributes_with(|_| Ok::<_, ()>(ptr::null_mut()))
                .ok()?;
            // SAFETY: as above, with the tool's handle for the domain.
            Some(unsafe { slots::get(kind.domain_ex)?(entered.handle, &raw) })
        }
        (domain, Some(s)) => {
            let (entered, attached) = enter_registered(domain, s)?;
            // The tool's handle for the string, as the prebuilt attributes name it.
            let handle = attached.attributes.message.cast_mut();
            let raw = event.nvtx_attributes_with(|_| Ok::<_, ()>(handle)).ok()?;
            // SAFETY: as above.
            Some(unsafe { slots::get(kind.domain_ex)?(entered.handle, &raw) })
        }
    }
}

/// The C ABI's fast path for `*_string` calls: an event whose only attribute
/// is the registered string `s`, through the tool's `Domain...Ex` function
/// `f`, when the tool already knows the string. `domain` as in
/// [`emit_attached`]. `None` for anything else, which `emit` then handles.
#[inline(always)]
pub fn emit_registered<R>(
    f: DomainExFn<R>,
    domain: Option<&'static DomainState>,
    s: &'static StringState,
) -> Option<R> {
    let (entered, attached) = enter_registered(domain, s)?;
    // SAFETY: the tool's function for this kind of event, with its handle
    // for the domain and attributes naming its handle for the string.
    Some(unsafe { f(entered.handle, &attached.attributes) })
}

/// The gate of `s`'s domain entered, with the domain's tool handle, and `s`
/// as the tool knows it; `None` when `s` does not belong to `domain` (as in
/// [`emit_attached`]), the domain is destroyed, or the tool does not know
/// `s` yet. A string the tool knows carries its domain's handle, so the
/// domain's own attachment is not looked up.
#[inline(always)]
fn enter_registered(
    domain: Option<&'static DomainState>,
    s: &'static StringState,
) -> Option<(Entered, &'static Attached)> {
    if !std::ptr::eq(s.domain(), domain.unwrap_or(DomainState::default_domain())) {
        return None;
    }
    let mut entered = match domain {
        None => Entered::default_domain(),
        Some(d) => d.enter_live()?,
    };
    let attached = s.attached()?;
    entered.handle = attached.domain;
    Some((entered, attached))
}

/// A text-only event in the default domain: the `...A` slot, as `nvtxMarkA`
/// and friends. The C ABI's fast path calls this directly.
///
/// # Safety
/// `text` is a valid NUL-terminated string.
#[inline(always)]
pub(crate) unsafe fn default_text<R: Copy>(kind: &Slots3<R>, text: *const c_char, none: R) -> R {
    // SAFETY: `text` is NUL-terminated (this function's contract).
    unsafe { slots::get(kind.text).map_or(none, |f| f(text)) }
}

/// `nvtxRangePop` in the default domain.
#[inline(always)]
pub(crate) fn default_pop() -> i32 {
    // SAFETY: slot type fixed by the protocol.
    // SAFETY: the tool's function, which takes no arguments.
    slots::get(slot::RANGE_POP).map_or(NO_PUSH_POP_TRACKING, |f| unsafe { f() })
}

/// `nvtxRangeEnd` in the default domain. Every id reaches the tool, 0 too:
/// Nsight Compute numbers its ranges from 0.
#[inline(always)]
pub(crate) fn default_end(id: u64) {
    // SAFETY: slot type fixed by the protocol.
    if let Some(f) = slots::get(slot::RANGE_END) {
        // SAFETY: the tool's function, given an id it returned.
        unsafe { f(id) };
    }
}

/// An instantaneous event.
#[inline]
pub fn mark(domain: &'static DomainState, event: &Event, family: Family) -> Result<(), Error> {
    emit(&MARK, domain, event, family, ())
}

/// Opens a range on this thread; returns the tool's depth, or -2.
#[inline]
pub fn push(domain: &'static DomainState, event: &Event, family: Family) -> Result<i32, Error> {
    emit(&PUSH, domain, event, family, NO_PUSH_POP_TRACKING)
}

/// Closes this thread's innermost range; returns the tool's depth, or -2.
#[inline]
pub fn pop(domain: &'static DomainState, family: Family) -> Result<i32, Error> {
    // SAFETY: slot types fixed by the protocol.
    if domain.is_default() && family == Family::Default {
        Ok(default_pop())
    } else {
        domain_pop(domain)
    }
}

/// `pop` through the domain slot even for the default domain (NULL handle),
/// as NVIDIA's Python package sends it.
#[inline]
pub(crate) fn domain_pop(domain: &'static DomainState) -> Result<i32, Error> {
    Ok(domain_pop_entered(&domain.enter()?))
}

/// `domain_pop` inside the domain's gate.
#[inline(always)]
pub(crate) fn domain_pop_entered(entered: &Entered) -> i32 {
    // SAFETY: slot type fixed by the protocol.
    unsafe {
        slots::get(slot::DOMAIN_RANGE_POP).map_or(NO_PUSH_POP_TRACKING, |f| f(entered.handle))
    }
}

/// `end` through the domain slot even for the default domain, as NVIDIA's
/// Python package sends it.
#[inline]
pub(crate) fn domain_end(domain: &'static DomainState, id: u64) -> Result<(), Error> {
    let entered = domain.enter()?;
    // SAFETY: slot type fixed by the protocol.
    if let Some(f) = slots::get(slot::DOMAIN_RANGE_END) {
        // SAFETY: the tool's function, given its domain handle and an id it returned.
        unsafe { f(entered.handle, id) };
    }
    Ok(())
}

/// Starts a range that any thread may end; returns its id, 0 with no tool.
#[inline]
pub fn start(domain: &'static DomainState, event: &Event, family: Family) -> Result<u64, Error> {
    emit(&START, domain, event, family, 0)
}

/// Ends range `id`: every id is forwarded as it is, 0 too, as NVIDIA's API
/// does (Nsight Compute numbers its ranges from 0).
#[inline]
pub fn end(domain: &'static DomainState, id: u64, family: Family) -> Result<(), Error> {
    if domain.is_default() && family == Family::Default {
        default_end(id);
        Ok(())
    } else {
        domain_end(domain, id)
    }
}

/// Whether the tool wants events of `domain` (NVTX's `nvtxDomainIsEnabled`,
/// from the payload extension): false with no tool, or a tool whose
/// extension entry point declined; the tool's answer when it has one; true
/// for a tool without the extension or without that function, as NVIDIA's
/// implementation answers.
pub fn domain_is_enabled(domain: &'static DomainState) -> Result<bool, Error> {
    use crate::loader::extensions::PAYLOAD;
    use nvtx_protocol::ext::cbid::DOMAIN_IS_ENABLED;
    let answer = crate::ext_call::call(&PAYLOAD, domain, DOMAIN_IS_ENABLED, |f, handle| {
        // SAFETY: the tool's function for this callback id, of the
        // protocol's type, with the tool's handle for the domain.
        unsafe { std::mem::transmute::<usize, unsafe extern "C" fn(Handle) -> u8>(f)(handle) != 0 }
    })?;
    // No function: what NVIDIA's answers (0 with no tool, the module not
    // loaded or declined).
    Ok(answer.unwrap_or_else(|| PAYLOAD.enabled_without_function() != 0))
}
