//! nvtxr's C library (`libnvtxr.so`, `libnvtxr.a`): the `nvtxr_*` functions
//! of `include/nvtxr.h`, which the `nvtxr` crate defines (`nvtxr::ffi`),
//! exported from a shared and a static library. Rust users depend on `nvtxr`
//! itself and never build these.

pub use nvtxr_core::ffi;
