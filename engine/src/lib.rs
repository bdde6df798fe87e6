#![deny(unsafe_op_in_unsafe_fn)]
#![deny(clippy::undocumented_unsafe_blocks)]
// The engine is internal: its module docs explain its private state too.
#![allow(rustdoc::private_intra_doc_links)]
//! nvtxr's engine, under every door: the Rust API (`nvtxr`), the C ABI
//! (`nvtxr-capi`, `include/nvtxr.h`), the Python package and the drop-in
//! `libnvToolsExt.so.1` / `libnvtx3interop.so.1` (`nvtxr-nvtx-compat`).
//! Internal, with no stability promise: depend on `nvtxr`.
//!
//! - [`loader`]: NVIDIA's NVTX3 tool-loading protocol and the tool's slots;
//! - [`domain`]: domains and registered strings, attached to the tool once;
//! - [`attributes`] and [`events`]: an event's attributes, and the slot each
//!   kind of call goes through;
//! - [`naming`] and [`sync`]: thread, device and sync-object names;
//! - [`counters`]: counters (NVTX's counters extension);
//! - [`statics`]: process-lifetime handles for runtimes that cannot borrow;
//! - [`claim`]: work done once, safe against re-entry and `fork()`;
//! - [`thread`]: the calling thread's OS id.
//!
//! Every exported function runs inside `nvtx_protocol::boundary`'s panic
//! boundary.

mod attachment;
pub mod attributes;
pub mod claim;
pub mod counters;
pub mod domain;
pub mod error;
pub mod events;
mod ext_call;
pub mod handles;
pub mod loader;
pub mod memory;
pub mod naming;
pub mod payloads;
pub mod statics;
pub mod sync;
pub mod thread;
pub mod time;

pub use error::Error;
