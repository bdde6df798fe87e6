//! A drop-in for CUDA's `libnvToolsExt.so.1` and NVIDIA's `libnvtx3interop.so.1`:
//! the NVTX C API under its standard names (`nvtxMarkA`, `nvtxRangePushEx`,
//! `nvtxDomainCreateA`, ...), on nvtxr's tool loader.
//!
//! Each function does what NVIDIA's implementation does: call what its slot
//! holds (on first use the loader's first-call function, which initializes
//! through nvtxr's loader, with its fixes for re-entrant tools and fork), so
//! passing its arguments unchanged to the tool's function in the slot the
//! protocol gives it, or return the no-tool value (`-2` for push/pop, 0 for
//! range ids, NULL for handles). Arguments are never read here: attribute
//! structs, strings and handles are the tool's to interpret, exactly as with
//! NVIDIA's library. Every function runs inside nvtxr's panic guard.
//!
//! Built as a static library; `nvtxr_harness::compat_libraries` links it into
//! the two shared libraries with their SONAMEs and symbol versions.

#![allow(non_snake_case)]

use nvtx_protocol::boundary::guard;
use nvtx_protocol::{for_each_ext_slot, for_each_slot, no_tool_value, slot};
use nvtxr_engine::loader::extensions;
use nvtxr_engine::loader::slots::get;

/// Defines each exported function of the protocol's slot list: it forwards
/// its arguments to the tool's function in its slot.
macro_rules! nvtx_api {
    ($($module:ident $index:literal $slot:ident $name:ident($($arg:ident: $ty:ty),*) $(-> $ret:ty = $none:expr)?;)*) => {$(
        /// NVIDIA's function of this name.
        ///
        /// # Safety
        /// The arguments must be valid as NVIDIA's NVTX API documents; they
        /// are passed to the tool unread.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $name($($arg: $ty),*) $(-> $ret)? {
            // Before initialization the slot holds its first-call
            // function, so one load and a branch serve every case.
            guard(no_tool_value!($($none)?), || match get(slot::$slot) {
                // SAFETY: the caller's arguments, passed on unchanged.
                Some(f) => unsafe { f($($arg),*) },
                None => no_tool_value!($($none)?),
            })
        }
    )*};
}

for_each_slot!(nvtx_api);

/// What an extension function returns when the tool has nothing for it:
/// its no-tool value, but for `nvtxDomainIsEnabled`, which NVIDIA's answers
/// 1 for a tool without extensions or without that function.
macro_rules! ext_absent {
    (DOMAIN_IS_ENABLED $($none:expr)?) => {
        extensions::PAYLOAD.enabled_without_function()
    };
    ($slot:ident $($none:expr)?) => {
        no_tool_value!($($none)?)
    };
}

/// Defines each extension function of the protocol's list: it initializes
/// its module at its first call, then passes its arguments to the tool's
/// function for its callback id, unread, as NVIDIA's implementation does.
macro_rules! nvtx_ext_api {
    ($($module:ident $cbid:literal $slot:ident $name:ident($($arg:ident: $ty:ty),*) $(-> $ret:ty = $none:expr)?;)*) => {$(
        /// NVIDIA's extension function of this name.
        ///
        /// # Safety
        /// The arguments must be valid as NVIDIA's NVTX headers document;
        /// they are passed to the tool unread.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $name($($arg: $ty),*) $(-> $ret)? {
            guard(ext_absent!($slot $($none)?), || match extensions::$module.get($cbid) {
                Some(f) => {
                    // SAFETY: what the tool wrote in this callback id's slot
                    // is its function of this signature (the protocol's).
                    let f = unsafe {
                        std::mem::transmute::<usize, unsafe extern "C" fn($($ty),*) $(-> $ret)?>(f)
                    };
                    // SAFETY: the caller's arguments, passed on unchanged.
                    unsafe { f($($arg),*) }
                }
                None => ext_absent!($slot $($none)?),
            })
        }
    )*};
}

for_each_ext_slot!(nvtx_ext_api);
