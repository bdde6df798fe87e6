#![deny(missing_docs)]
#![deny(unsafe_op_in_unsafe_fn)]
#![deny(clippy::undocumented_unsafe_blocks)]
//! nvtxr's C library (`libnvtxr.so`, `libnvtxr.a`): the C door to nvtxr's
//! engine, the `nvtxr_*` functions of `include/nvtxr.h` (generated from
//! [`ffi`] by cbindgen). Rust users depend on `nvtxr` and never build this.

pub mod ffi;
