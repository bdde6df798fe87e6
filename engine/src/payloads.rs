//! Extended payloads (NVTX's payload extension): a schema registered once
//! in a domain describes a struct's fields; events then carry such structs
//! (see [`crate::attributes::RawPayload::extended`]) and the tool shows
//! their fields by name.

use crate::domain::DomainState;
use crate::error::Error;
use crate::ext_call;
use crate::loader::extensions::PAYLOAD;
use nvtx_protocol::ext::cbid;
use nvtx_protocol::payload::{EnumAttr, PayloadData, SchemaAttr};
use nvtx_protocol::Handle;
use std::ffi::c_void;

/// Passes a registration to the tool's function `cbid`: its id, 0 with no
/// tool (or a tool without the extension, or one that refused it).
pub(crate) fn register(
    domain: &'static DomainState,
    cbid: usize,
    attributes: *const c_void,
) -> Result<u64, Error> {
    let id = ext_call::call(&PAYLOAD, domain, cbid, |f, handle| {
        // SAFETY: the tool's function for this callback id, of the
        // protocol's type, with attributes that live through the call.
        unsafe {
            let f =
                std::mem::transmute::<usize, unsafe extern "C" fn(Handle, *const c_void) -> u64>(f);
            f(handle, attributes)
        }
    })?;
    Ok(id.unwrap_or(0))
}

/// Registers the schema `attributes` describes in `domain`; its id (the one
/// asked for in `schema_id`, or the tool's), 0 with no tool or when the
/// tool refuses it. The tool copies what it needs during the call.
pub fn register_schema(
    domain: &'static DomainState,
    attributes: &SchemaAttr,
) -> Result<u64, Error> {
    register(
        domain,
        cbid::PAYLOAD_SCHEMA_REGISTER,
        (attributes as *const SchemaAttr).cast(),
    )
}

/// Registers the enum `attributes` describes in `domain`, as [`register_schema`].
pub fn register_enum(domain: &'static DomainState, attributes: &EnumAttr) -> Result<u64, Error> {
    register(
        domain,
        cbid::PAYLOAD_ENUM_REGISTER,
        (attributes as *const EnumAttr).cast(),
    )
}

/// Registers the scope at `path` (e.g. `/node/gpu0`) in `domain`
/// (`nvtxScopeRegister`); its id, 0 with no tool or when the tool refuses.
pub fn register_scope(domain: &'static DomainState, path: &std::ffi::CStr) -> Result<u64, Error> {
    let attributes = nvtx_protocol::payload::ScopeAttr {
        struct_size: std::mem::size_of::<nvtx_protocol::payload::ScopeAttr>(),
        path: path.as_ptr(),
        parent_scope: 0,
        scope_id: 0,
    };
    register(
        domain,
        cbid::SCOPE_REGISTER,
        (&attributes as *const nvtx_protocol::payload::ScopeAttr).cast(),
    )
}

/// A timestamp for deferred events (NVTX's `nvtxTimestampGet`): the tool's
/// clock; 0 with no tool (or a tool without deferred events).
pub fn timestamp() -> i64 {
    if !crate::loader::tool_attached() {
        return 0;
    }
    match PAYLOAD.get(cbid::TIMESTAMP_GET) {
        // SAFETY: the tool's function for this callback id, of the
        // protocol's type.
        Some(f) => unsafe { std::mem::transmute::<usize, unsafe extern "C" fn() -> i64>(f)() },
        None => 0,
    }
}

/// Submits a deferred event of `domain` (NVTX's `nvtxEventSubmit`): `count`
/// payloads at `data` whose timestamp entries say when it happened. The
/// tool reads them during the call.
///
/// # Safety
/// `data` holds `count` payloads, each valid as its schema says.
pub unsafe fn submit(
    domain: &'static DomainState,
    data: *const PayloadData,
    count: usize,
) -> Result<(), Error> {
    ext_call::call(&PAYLOAD, domain, cbid::EVENT_SUBMIT, |f, handle| {
        // SAFETY: the tool's function for this callback id, of the
        // protocol's type; the caller's payloads.
        unsafe {
            let f =
                std::mem::transmute::<usize, unsafe extern "C" fn(Handle, *const c_void, usize)>(f);
            f(handle, data.cast(), count);
        }
    })?;
    Ok(())
}
