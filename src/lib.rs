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
//! This crate is the Rust door to nvtxr's engine (`nvtxr-engine`, internal);
//! the C ABI (`include/nvtxr.h`) is another, in `nvtxr-capi`.

mod api;
mod attributes;
mod counter;
mod domain;
mod payload;
mod sync;

pub use api::{
    initialize, is_tool_attached, load_error, mark, name_category, name_cuda, name_current_thread,
    name_os_thread, push, start,
};
pub use api::{name_opencl, timestamp};
pub use attributes::{EventAttributes, Message, RegisteredString};
pub use counter::{Counter, CounterValue};
pub use domain::{Domain, LocalRange, Range};
pub use nvtxr_engine::attributes::{Color, Payload};
pub use nvtxr_engine::naming::{CudaObject, OpenClObject};
pub use nvtxr_engine::thread::current_os_thread_id;
pub use nvtxr_engine::Error;
pub use payload::{PayloadField, PayloadFieldInfo, PayloadSchema, PayloadStruct};
pub use sync::SyncUser;

/// The README's Rust code, compiled and run as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
mod readme {}

/// The C guide's Rust code (struct payloads), the same way.
#[cfg(doctest)]
#[doc = include_str!("../docs/c.md")]
mod c_guide {}
