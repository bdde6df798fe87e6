//! Domains, registered strings and category names.

use super::boundary::exported;
use super::codes::nvtxr_status_t;
use super::codes::{status, NVTXR_OK};
use nvtxr_engine::domain::{DomainState, Family, StringState};
use nvtxr_engine::error::Error;
use nvtxr_engine::events;
use nvtxr_engine::handles::is_domain;
use nvtxr_engine::loader;
use std::ffi::{c_char, CStr};
use std::ptr;

/// A domain handle. NULL stands for the default domain everywhere.
/// Owned by nvtxr; never freed (see `nvtxr_domain_destroy`).
pub struct nvtxr_domain_t {
    _opaque: [u8; 0],
}

/// A registered-string handle, valid while its domain is not destroyed.
/// Owned by nvtxr; never freed.
pub struct nvtxr_string_t {
    _opaque: [u8; 0],
}

/// The domain behind a handle; NULL is the default domain. A string handle
/// passed as a domain is `InvalidArgument` (handles carry a tag).
///
/// # Safety
/// A non-NULL `domain` must come from `nvtxr_domain_create` (or be another nvtxr handle).
pub(crate) unsafe fn domain_ref(
    domain: *const nvtxr_domain_t,
) -> Result<&'static DomainState, Error> {
    // SAFETY: the caller upholds this function's `# Safety` contract.
    unsafe {
        if domain.is_null() {
            return Ok(DomainState::default_domain());
        }
        match is_domain(domain.cast()) {
            Some(true) => Ok(&*domain.cast::<DomainState>()),
            _ => Err(Error::InvalidArgument("not a domain handle")),
        }
    }
}

/// The registered string behind a handle; `None` for NULL. A domain handle
/// passed as a string is `InvalidArgument`.
///
/// # Safety
/// A non-NULL `string` must come from `nvtxr_string_register` (or be another nvtxr handle).
pub(crate) unsafe fn string_ref(
    string: *const nvtxr_string_t,
) -> Result<Option<&'static StringState>, Error> {
    // SAFETY: the caller upholds this function's `# Safety` contract.
    unsafe {
        if string.is_null() {
            return Ok(None);
        }
        match is_domain(string.cast()) {
            Some(false) => Ok(Some(&*string.cast::<StringState>())),
            _ => Err(Error::InvalidArgument("not a registered-string handle")),
        }
    }
}

/// Creates the domain `name` (UTF-8, copied), or takes one more reference on
/// it if it exists: the same name gives the same handle, and the domain is
/// destroyed when `nvtxr_domain_destroy` has been called once per create.
///
/// Returns NULL only when `name` is NULL, from a signal handler that
/// interrupted a domain or string call on this thread, or on an internal
/// error. The handle is valid with or without a tool. Thread-safe; not
/// async-signal-safe (see the conventions).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvtxr_domain_create(name: *const c_char) -> *mut nvtxr_domain_t {
    exported!(unsafe {
        if name.is_null() {
            return ptr::null_mut();
        }
        DomainState::create(CStr::from_ptr(name)).map_or(ptr::null_mut(), |d| {
            (d as *const DomainState).cast_mut().cast()
        })
    })
}

/// Releases one reference taken by `nvtxr_domain_create`; the last one
/// destroys the domain in the tool.
///
/// Returns `NVTXR_OK`; `NVTXR_OK` for NULL (the default domain is never
/// destroyed); `NVTXR_ERROR_DESTROYED` when the domain is already destroyed;
/// `NVTXR_ERROR_REENTERED` from a signal handler that interrupted a domain
/// or string call on this thread. Waits for events other threads are
/// sending in the domain right now, so that no event carries the tool's
/// handle after the tool destroyed it (so a tool must not destroy a domain
/// from inside its callback for an event in that same domain).
/// After destruction, calls with the handle or its strings return
/// `NVTXR_ERROR_DESTROYED` and forward nothing; creating the name again
/// revives the same handle. Thread-safe.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvtxr_domain_destroy(domain: *mut nvtxr_domain_t) -> nvtxr_status_t {
    exported!(unsafe { status(domain_ref(domain).and_then(|d| d.destroy())) })
}

/// Registers `text` (UTF-8, copied) in `domain` (NULL: the default domain).
/// Registering the same text again in the same domain returns the same handle
/// and does not call the tool again.
///
/// Returns NULL when `text` is NULL, the domain is destroyed, or from a
/// signal handler that interrupted a domain or string call on this thread.
/// The handle lives as long as the domain. Thread-safe.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvtxr_string_register(
    domain: *const nvtxr_domain_t,
    text: *const c_char,
) -> *const nvtxr_string_t {
    exported!(unsafe {
        if text.is_null() {
            return ptr::null();
        }
        let Ok(domain) = domain_ref(domain) else {
            return ptr::null();
        };
        if !domain.is_live() {
            return ptr::null();
        }
        domain
            .register_string(CStr::from_ptr(text))
            .map_or(ptr::null(), |s| (s as *const StringState).cast())
    })
}

/// Names category `category` of `domain` (NULL: the default domain).
///
/// Returns `NVTXR_OK`, `NVTXR_ERROR_NULL_ARGUMENT` (NULL name) or
/// `NVTXR_ERROR_DESTROYED`. Thread-safe.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvtxr_name_category(
    domain: *const nvtxr_domain_t,
    category: u32,
    name: *const c_char,
) -> nvtxr_status_t {
    exported!(unsafe {
        if !loader::tool_attached() {
            return NVTXR_OK;
        }
        if name.is_null() {
            return status(Err(Error::NullArgument));
        }
        status(domain_ref(domain).and_then(|d| d.name_category(category, name, Family::Default)))
    })
}

/// Whether the tool wants events of `domain` (NULL: the default domain), as
/// NVTX's `nvtxDomainIsEnabled` answers: false with no tool (or a tool that
/// declined its extensions), the tool's answer when it gives one, true for
/// a tool that does not. A program can skip building costly annotations
/// the tool would drop. False, too, for a destroyed or invalid handle.
/// Thread-safe.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvtxr_domain_is_enabled(domain: *const nvtxr_domain_t) -> bool {
    exported!(unsafe {
        domain_ref(domain)
            .and_then(events::domain_is_enabled)
            .unwrap_or(false)
    })
}
