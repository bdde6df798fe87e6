//! The NVTX3 tool loader: finds the tool named by `NVTX_INJECTION64_PATH`,
//! attaches it through NVIDIA's protocol, and tells every call whether a tool
//! is there.
//!
//! State lives in one atomic word:
//! - [`UNINIT`]: nobody has started; the next call initializes.
//! - [`NO_TOOL`] / [`TOOL`]: done, for the life of the process.
//! - anything else: initialization is running, and the word is the
//!   initializing thread's `(pid << 32) | tid`.
//!
//! Differences from NVIDIA's loader, on purpose:
//! - a call made by the initializing thread itself (a tool that calls NVTX
//!   from its own `InitializeInjectionNvtx2`) is dropped instead of spinning
//!   forever;
//! - a process forked while another thread was initializing finds the word
//!   naming a pid that is not its own, takes initialization over and runs it
//!   itself, instead of spinning forever;
//! - a tool that fails to load is reported once on stderr (unless
//!   `NVTXR_QUIET` is set) and through [`load_error`].

pub mod export_table;
pub mod slots;

/// The protocol's numbers and structs, shared with nvtxr's tools.
pub use nvtx_protocol as protocol;

use std::ffi::{CString, OsString};
use std::io::Write;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;
use std::time::Duration;

const UNINIT: u64 = 0;
const NO_TOOL: u64 = 1;
const TOOL: u64 = 2;

static STATE: AtomicU64 = AtomicU64::new(UNINIT);
static LOAD_ERROR: OnceLock<CString> = OnceLock::new();

/// Environment variable that silences the one-line load-failure report.
pub const QUIET_VAR: &str = "NVTXR_QUIET";

/// Whether a tool is attached, initializing first if nobody has yet.
///
/// The fast path is one atomic load and a branch.
#[inline(always)]
pub fn tool_attached() -> bool {
    match STATE.load(Ordering::Acquire) {
        TOOL => true,
        NO_TOOL => false,
        _ => initialize_slow(),
    }
}

/// What one load of the state word says, without initializing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Known {
    NoTool,
    Tool,
    /// Not initialized yet, or initializing: take the full path.
    Unknown,
}

/// The one-load check exported functions make before anything else.
#[inline(always)]
pub fn known() -> Known {
    match STATE.load(Ordering::Acquire) {
        NO_TOOL => Known::NoTool,
        TOOL => Known::Tool,
        _ => Known::Unknown,
    }
}

/// Why the configured tool did not attach, if it did not.
pub fn load_error() -> Option<&'static CString> {
    LOAD_ERROR.get()
}

/// This thread's identity across processes: `(pid << 32) | tid`.
fn me() -> u64 {
    let tid = crate::naming::current_os_thread_id();
    (u64::from(std::process::id()) << 32) | u64::from(tid)
}

fn pid_of(owner: u64) -> u32 {
    (owner >> 32) as u32
}

#[cold]
#[inline(never)]
fn initialize_slow() -> bool {
    let me = me();
    let mut spins = 0u32;
    loop {
        let owner = match STATE.compare_exchange(UNINIT, me, Ordering::AcqRel, Ordering::Acquire) {
            Ok(_) => return run_initialization(),
            Err(TOOL) => return true,
            Err(NO_TOOL) => return false,
            Err(owner) => owner,
        };
        if owner == me {
            // The tool is calling back into NVTX from its own init: drop the call.
            return false;
        }
        if pid_of(owner) != std::process::id() {
            // Forked while a thread of the parent was initializing: that thread
            // does not exist here. Take over and initialize this process.
            if STATE
                .compare_exchange(owner, me, Ordering::AcqRel, Ordering::Acquire)
                .is_ok()
            {
                return run_initialization();
            }
            continue;
        }
        wait(&mut spins);
    }
}

fn wait(spins: &mut u32) {
    *spins += 1;
    if *spins < 64 {
        std::thread::yield_now();
    } else {
        std::thread::sleep(Duration::from_micros(100));
    }
}

/// Runs on the thread that owns initialization; publishes the result.
fn run_initialization() -> bool {
    let attached = match attach() {
        Ok(()) => true,
        Err(failure) => {
            slots::clear_all();
            report(failure);
            false
        }
    };
    STATE.store(if attached { TOOL } else { NO_TOOL }, Ordering::Release);
    attached
}

/// Why a configured tool did not attach.
#[derive(Debug, thiserror::Error)]
enum AttachError {
    #[error("could not load NVTX tool {path:?}: {reason}")]
    Load { path: OsString, reason: String },
    #[error("NVTX tool {path:?} has no InitializeInjectionNvtx2 entry point")]
    NoEntryPoint { path: OsString },
    #[error(
        "NVTX tool {path:?}: InitializeInjectionNvtx2 returned 0 (the tool declined to attach)"
    )]
    Declined { path: OsString },
}

/// Loads and initializes the tool; `Ok` with no tool configured too.
fn attach() -> Result<(), Option<AttachError>> {
    let path = match std::env::var_os(protocol::INJECTION_PATH_VAR) {
        Some(p) if !p.is_empty() && p != protocol::NO_TOOL_PATH => p,
        _ => return Err(None),
    };
    // SAFETY: loading a library runs its constructors; naming one in
    // NVTX_INJECTION64_PATH is the user's request to do exactly that.
    let library = unsafe { libloading::Library::new(&path) }.map_err(|e| {
        Some(AttachError::Load {
            path: path.clone(),
            reason: e.to_string(),
        })
    })?;
    // SAFETY: the protocol fixes the entry point's type.
    let entry: protocol::InitializeInjection =
        match unsafe { library.get::<protocol::InitializeInjection>(protocol::ENTRY_POINT) } {
            Ok(symbol) => *symbol,
            Err(_) => return Err(Some(AttachError::NoEntryPoint { path })),
        };
    // SAFETY: as above; the tool may call back into get_export_table.
    if unsafe { entry(export_table::get_export_table) } == 0 {
        return Err(Some(AttachError::Declined { path }));
    }
    // The tool stays loaded for the life of the process.
    std::mem::forget(library);
    Ok(())
}

fn report(failure: Option<AttachError>) {
    let Some(failure) = failure else { return };
    let message = failure.to_string();
    if std::env::var_os(QUIET_VAR).is_none_or(|v| v.is_empty() || v == "0") {
        // Not eprintln!: a closed stderr must not panic.
        let _ = writeln!(std::io::stderr(), "nvtxr: {message}");
    }
    let _ = LOAD_ERROR.set(CString::new(message).unwrap_or_default());
}
