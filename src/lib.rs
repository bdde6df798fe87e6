#![deny(missing_docs)]
#![deny(unsafe_op_in_unsafe_fn)]
#![deny(clippy::undocumented_unsafe_blocks)]
//! # nvtxr: NVTX annotations without the CUDA toolkit
//!
//! nvtxr marks ranges and events ("forward", "epoch 3") that NVIDIA's tools
//! (Nsight Systems, Nsight Compute) show on their timelines. It implements
//! NVIDIA's NVTX3 tool-loading protocol itself: when `NVTX_INJECTION64_PATH`
//! names a tool library, nvtxr loads it on the first call and forwards every
//! event to it; with no tool, every call is one atomic load and a branch.
//!
//! ```
//! use nvtxr::{Color, EventAttributes, Payload};
//!
//! nvtxr::name_current_thread("main");
//! let _epoch = nvtxr::push("epoch 1");                 // closed at end of scope
//! nvtxr::mark(EventAttributes::new("checkpoint").color(Color::GREEN).payload(Payload::U64(3)));
//!
//! let domain = nvtxr::Domain::new("trainer");
//! let step = domain.register("step");                  // registered once, passed by handle
//! let cross_thread = domain.start(&step);              // Send: may end on another thread
//! std::thread::scope(|s| {
//!     s.spawn(move || cross_thread.end());
//! });
//! ```
//!
//! The C ABI (`include/nvtxr.h`) is in [`ffi`]; the loader, with every number
//! of the protocol, in `loader`.

mod api;
mod attributes;
mod claim;
mod domain;
mod error;
mod events;
pub mod ffi;
mod loader;
mod naming;
mod panic;
mod sync;

pub use api::{
    initialize, is_tool_attached, load_error, mark, name_category, name_cuda, name_current_thread,
    name_os_thread, push, start, Domain, EventAttributes, LocalRange, Message, Range,
    RegisteredString,
};
pub use api::{name_opencl, SyncUser};
pub use attributes::{Color, Payload};
pub use error::Error;
pub use naming::{current_os_thread_id, CudaObject, OpenClObject};

#[doc(hidden)]
pub mod bindings;

/// The README's Rust code, compiled and run as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
mod readme {}

/// The loader and slots, for nvtxr's own NVTX-API compatibility library
/// (`bindings/nvtx-compat`, the drop-in `libnvToolsExt.so.1`). Not a public API.
#[doc(hidden)]
pub mod __compat {
    pub use crate::loader::slots::get;
    pub use crate::panic::guard;
}
