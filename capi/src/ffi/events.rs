//! Marks, push/pop ranges and start/end ranges: the exported event calls,
//! hand-tuned (a slot load and a branch with no tool), all in this file.

use super::boundary::{boundary, exported};
use super::codes::nvtxr_status_t;
use super::codes::{error_code, status, NVTXR_NO_PUSH_POP_TRACKING, NVTXR_OK};
use super::domain::{domain_ref, nvtxr_domain_t, nvtxr_string_t, string_ref};
use super::event::{event_from, nvtxr_event_t, Arg};
use nvtx_protocol::slot;
use nvtxr_engine::events::{self, Family};
use nvtxr_engine::loader::{slots, tool_attached};
use std::ffi::c_char;

/// The fast path of the `*_string` calls once a tool is known, `f` the
/// tool's function: see [`events::emit_registered`]. `None`: take the full
/// path (which validates, attaches, and reports errors).
#[inline(always)]
unsafe fn registered_fast<R>(
    domain: *const nvtxr_domain_t,
    string: *const nvtxr_string_t,
    f: events::DomainExFn<R>,
) -> Option<R> {
    // SAFETY: the caller upholds this function's `# Safety` contract.
    unsafe {
        let s = string_ref(string).ok()??;
        // A domain handle equal to the string's own domain is that domain
        // (no tag to check); NULL names the default domain.
        let named = (!domain.is_null()).then(|| s.domain());
        if named.is_some_and(|d| !std::ptr::eq(d, domain.cast())) {
            return None;
        }
        events::emit_registered(f, named, s)
    }
}

/// The fast path of the `*_ex` calls once a tool is known: see
/// [`events::emit_attached`]. `None`: take the full path.
#[inline(always)]
unsafe fn ex_fast<R>(
    kind: &events::Slots3<R>,
    domain: *const nvtxr_domain_t,
    event: *const nvtxr_event_t,
) -> Option<R> {
    // SAFETY: the caller upholds this function's `# Safety` contract.
    unsafe {
        let event = event_from(event).ok()?;
        let named = if domain.is_null() {
            None
        } else {
            Some(domain_ref(domain).ok()?)
        };
        events::emit_attached(kind, named, &event)
    }
}

/// What an exported event call returns for the tool's result `R`: the
/// result itself (a depth, a range id), or `NVTXR_OK` for a mark.
trait Done<R> {
    fn done(result: R) -> Self;
}

impl Done<()> for nvtxr_status_t {
    fn done((): ()) -> Self {
        NVTXR_OK
    }
}

impl Done<i32> for i32 {
    fn done(depth: i32) -> Self {
        depth
    }
}

impl Done<u64> for u64 {
    fn done(id: u64) -> Self {
        id
    }
}

/// A `*_string` call once a tool is known: the fast path, else `slow`. Out
/// of line, so that the exported function's no-tool path needs no stack
/// frame; `extern "C"`, as the exported functions are, so that they reach
/// it by a jump rather than a call.
#[inline(never)]
unsafe extern "C" fn string_call<R, T: Done<R>>(
    domain: *const nvtxr_domain_t,
    string: *const nvtxr_string_t,
    f: events::DomainExFn<R>,
    slow: unsafe extern "C" fn(*const nvtxr_domain_t, Arg) -> T,
) -> T {
    // SAFETY: the caller upholds this function's `# Safety` contract.
    unsafe {
        boundary(|| registered_fast(domain, string, f))
            .map_or_else(|| slow(domain, Arg::string(string)), T::done)
    }
}

/// A `*_ex` call once a tool is known: the fast path, else `slow`. Out of
/// line, as [`string_call`].
#[inline(never)]
unsafe fn ex_call<R, T: Done<R>>(
    kind: &events::Slots3<R>,
    domain: *const nvtxr_domain_t,
    event: *const nvtxr_event_t,
    slow: unsafe extern "C" fn(*const nvtxr_domain_t, Arg) -> T,
) -> T {
    // SAFETY: the caller upholds this function's `# Safety` contract.
    unsafe {
        boundary(|| ex_fast(kind, domain, event))
            .map_or_else(|| slow(domain, Arg::event(event)), T::done)
    }
}

// Each exported function first reads the slot NVIDIA's API uses for its
// commonest form (one load; see `loader::slots`):
// - NULL: no tool; it returns at once (a load, a branch and a return);
// - a function, with the default domain and a non-NULL text message (or a
//   registered string the tool knows): it calls that function, as NVIDIA's
//   `nvtxMarkA` does. Before initialization the slot holds its first-call
//   function, which initializes first. Only C functions are called there,
//   so nothing can panic;
// - anything else goes to these out-of-line helpers (arguments passed by
//   value), which initialize if needed, validate, and run inside the panic
//   boundary. They are `extern "C"` (they cannot unwind), so the exported
//   function reaches them by a tail jump.

#[cold]
#[inline(never)]
unsafe extern "C" fn mark_with(domain: *const nvtxr_domain_t, arg: Arg) -> i32 {
    exported!(unsafe {
        if !tool_attached() {
            return NVTXR_OK;
        }
        status(
            arg.translate()
                .and_then(|e| events::mark(domain_ref(domain)?, &e, Family::Default)),
        )
    })
}

#[cold]
#[inline(never)]
unsafe extern "C" fn push_with(domain: *const nvtxr_domain_t, arg: Arg) -> i32 {
    exported!(unsafe {
        if !tool_attached() {
            return NVTXR_NO_PUSH_POP_TRACKING;
        }
        arg.translate()
            .and_then(|e| events::push(domain_ref(domain)?, &e, Family::Default))
            .unwrap_or_else(error_code)
    })
}

#[cold]
#[inline(never)]
unsafe extern "C" fn start_with(domain: *const nvtxr_domain_t, arg: Arg) -> u64 {
    exported!(unsafe {
        if !tool_attached() {
            return 0;
        }
        arg.translate()
            .and_then(|e| events::start(domain_ref(domain)?, &e, Family::Default))
            .unwrap_or(0)
    })
}

#[cold]
#[inline(never)]
unsafe extern "C" fn pop_with(domain: *const nvtxr_domain_t) -> i32 {
    exported!(unsafe {
        if !tool_attached() {
            return NVTXR_NO_PUSH_POP_TRACKING;
        }
        domain_ref(domain)
            .and_then(|d| events::pop(d, Family::Default))
            .unwrap_or_else(error_code)
    })
}

#[cold]
#[inline(never)]
unsafe extern "C" fn end_with(domain: *const nvtxr_domain_t, id: u64) -> i32 {
    exported!(unsafe {
        if !tool_attached() {
            return NVTXR_OK;
        }
        status(domain_ref(domain).and_then(|d| events::end(d, id, Family::Default)))
    })
}

/// Marks an instant with a text message in `domain` (NULL: default domain).
///
/// Returns `NVTXR_OK`, or with a tool attached `NVTXR_ERROR_NULL_ARGUMENT`
/// (NULL message) or `NVTXR_ERROR_DESTROYED`. Thread-safe.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvtxr_mark(
    domain: *const nvtxr_domain_t,
    message: *const c_char,
) -> nvtxr_status_t {
    // SAFETY: the caller upholds this function's `# Safety` contract.
    unsafe {
        match slots::get(slot::MARK_A) {
            None => NVTXR_OK,
            Some(f) if domain.is_null() && !message.is_null() => boundary(|| {
                f(message);
                NVTXR_OK
            }),
            Some(_) => mark_with(domain, Arg::text(message)),
        }
    }
}

/// Marks an instant with a registered string as its message.
///
/// Returns as `nvtxr_mark`, and `NVTXR_ERROR_INVALID_ARGUMENT` when the string
/// belongs to another domain.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvtxr_mark_string(
    domain: *const nvtxr_domain_t,
    string: *const nvtxr_string_t,
) -> nvtxr_status_t {
    // SAFETY: the caller upholds this function's `# Safety` contract.
    unsafe {
        match slots::get(slot::DOMAIN_MARK_EX) {
            None => NVTXR_OK,
            Some(f) => string_call(domain, string, f, mark_with),
        }
    }
}

/// Marks an instant with full attributes.
///
/// Returns as `nvtxr_mark_string`, and `NVTXR_ERROR_INVALID_ARGUMENT` for an
/// unknown color or payload type or both messages set.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvtxr_mark_ex(
    domain: *const nvtxr_domain_t,
    event: *const nvtxr_event_t,
) -> nvtxr_status_t {
    // SAFETY: the caller upholds this function's `# Safety` contract.
    unsafe {
        match slots::get(slot::MARK_EX) {
            None => NVTXR_OK,
            Some(_) => ex_call(&events::MARK, domain, event, mark_with),
        }
    }
}

/// Opens a push/pop range on the calling OS thread.
///
/// Returns the depth the tool reports (0-based), `NVTXR_NO_PUSH_POP_TRACKING`
/// (-2) with no tool, or a negative `NVTXR_ERROR_*` code (nothing forwarded).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvtxr_range_push(
    domain: *const nvtxr_domain_t,
    message: *const c_char,
) -> i32 {
    // SAFETY: the caller upholds this function's `# Safety` contract.
    unsafe {
        match slots::get(slot::RANGE_PUSH_A) {
            None => NVTXR_NO_PUSH_POP_TRACKING,
            Some(f) if domain.is_null() && !message.is_null() => boundary(|| f(message)),
            Some(_) => push_with(domain, Arg::text(message)),
        }
    }
}

/// `nvtxr_range_push` with a registered string as the message.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvtxr_range_push_string(
    domain: *const nvtxr_domain_t,
    string: *const nvtxr_string_t,
) -> i32 {
    // SAFETY: the caller upholds this function's `# Safety` contract.
    unsafe {
        match slots::get(slot::DOMAIN_RANGE_PUSH_EX) {
            None => NVTXR_NO_PUSH_POP_TRACKING,
            Some(f) => string_call(domain, string, f, push_with),
        }
    }
}

/// `nvtxr_range_push` with full attributes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvtxr_range_push_ex(
    domain: *const nvtxr_domain_t,
    event: *const nvtxr_event_t,
) -> i32 {
    // SAFETY: the caller upholds this function's `# Safety` contract.
    unsafe {
        match slots::get(slot::RANGE_PUSH_EX) {
            None => NVTXR_NO_PUSH_POP_TRACKING,
            Some(_) => ex_call(&events::PUSH, domain, event, push_with),
        }
    }
}

/// Closes the calling thread's innermost push/pop range of `domain`.
///
/// Returns the tool's result (an unbalanced pop is forwarded and the tool
/// decides; NVIDIA's tools return a negative value), -2 with no tool, or
/// `NVTXR_ERROR_DESTROYED`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvtxr_range_pop(domain: *const nvtxr_domain_t) -> i32 {
    // SAFETY: the caller upholds this function's `# Safety` contract.
    unsafe {
        match slots::get(slot::RANGE_POP) {
            None => NVTXR_NO_PUSH_POP_TRACKING,
            Some(f) if domain.is_null() => boundary(|| f()),
            Some(_) => domain_pop(domain),
        }
    }
}

/// `nvtxr_range_pop` with a domain handle, out of the default domain's way.
#[inline(never)]
unsafe extern "C" fn domain_pop(domain: *const nvtxr_domain_t) -> i32 {
    // SAFETY: the caller upholds this function's `# Safety` contract.
    unsafe {
        match slots::get(slot::DOMAIN_RANGE_POP) {
            None => NVTXR_NO_PUSH_POP_TRACKING,
            Some(f) => boundary(|| {
                let entered = domain_ref(domain).ok()?.enter_attached()?;
                Some(f(entered.handle))
            })
            .unwrap_or_else(|| pop_with(domain)),
        }
    }
}

/// Starts a range that any thread may end with `nvtxr_range_end`.
///
/// Returns the tool's 64-bit range id; 0 with no tool or on invalid input.
/// Ending any id with no tool is a no-op, so callers never need to branch;
/// with a tool every id reaches it, 0 too (Nsight Compute's first range is 0).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvtxr_range_start(
    domain: *const nvtxr_domain_t,
    message: *const c_char,
) -> u64 {
    // SAFETY: the caller upholds this function's `# Safety` contract.
    unsafe {
        match slots::get(slot::RANGE_START_A) {
            None => 0,
            Some(f) if domain.is_null() && !message.is_null() => boundary(|| f(message)),
            Some(_) => start_with(domain, Arg::text(message)),
        }
    }
}

/// `nvtxr_range_start` with a registered string as the message.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvtxr_range_start_string(
    domain: *const nvtxr_domain_t,
    string: *const nvtxr_string_t,
) -> u64 {
    // SAFETY: the caller upholds this function's `# Safety` contract.
    unsafe {
        match slots::get(slot::DOMAIN_RANGE_START_EX) {
            None => 0,
            Some(f) => string_call(domain, string, f, start_with),
        }
    }
}

/// `nvtxr_range_start` with full attributes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvtxr_range_start_ex(
    domain: *const nvtxr_domain_t,
    event: *const nvtxr_event_t,
) -> u64 {
    // SAFETY: the caller upholds this function's `# Safety` contract.
    unsafe {
        match slots::get(slot::RANGE_START_EX) {
            None => 0,
            Some(_) => ex_call(&events::START, domain, event, start_with),
        }
    }
}

/// Ends range `id` of `domain`. Id 0 is a no-op; any other id is forwarded
/// as is (ending an unknown or already-ended id is the tool's to judge, as
/// with NVIDIA's API).
///
/// Returns `NVTXR_OK` or `NVTXR_ERROR_DESTROYED`. Thread-safe.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvtxr_range_end(domain: *const nvtxr_domain_t, id: u64) -> nvtxr_status_t {
    // SAFETY: the caller upholds this function's `# Safety` contract.
    unsafe {
        match slots::get(slot::RANGE_END) {
            None => NVTXR_OK,
            Some(f) if domain.is_null() => {
                boundary(|| f(id));
                NVTXR_OK
            }
            Some(_) => end_with(domain, id),
        }
    }
}
