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
//!   from its own `InitializeInjectionNvtx2`) reaches the tool if it has
//!   already filled that call's slot, as with NVIDIA's loader, and is
//!   dropped otherwise, instead of spinning forever;
//! - a process forked while initialization was running (on any thread,
//!   the tool's own entry point included) has no tool, instead of spinning
//!   forever: the parent may have been inside `dlopen` or inside the tool's
//!   initialization, and re-running either in the child can deadlock on a
//!   lock its thread held, or crash in the dynamic loader. Processes forked
//!   after the first NVTX call keep the tool;
//! - a tool that fails to load is reported once on stderr (unless
//!   `NVTXR_QUIET` is set) and through [`load_error`].

pub mod export_table;
pub mod extensions;
pub mod slots;

use crate::claim::{self, Turn};
use nvtx_protocol as protocol;
use std::ffi::{CStr, CString, OsString};
use std::io::Write;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::OnceLock;

const UNINIT: u64 = claim::FREE;
const NO_TOOL: u64 = claim::DONE;
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

/// Initializes and, with a tool, forwards `nvtxInitialize(NULL)` to it.
pub fn initialize_and_forward() -> bool {
    let attached = tool_attached();
    if attached {
        if let Some(f) = slots::get(protocol::slot::INITIALIZE) {
            // SAFETY: NULL is the argument NVIDIA's API passes.
            unsafe { f(std::ptr::null()) };
        }
    }
    attached
}

/// Why the configured tool did not attach, if it did not.
pub fn load_error() -> Option<&'static CStr> {
    if FORKED_MID_INIT.load(Ordering::Relaxed) {
        return Some(
            c"this process was forked while its parent was attaching the NVTX tool; it has no tool",
        );
    }
    LOAD_ERROR.get().map(CString::as_c_str)
}

/// Set in a child forked while initialization was running.
static FORKED_MID_INIT: AtomicBool = AtomicBool::new(false);

/// In a child forked mid-initialization: no tool, every slot a no-op
/// (atomic stores only: this runs between fork and the child's code).
extern "C" fn in_fork_child() {
    // UNINIT: nobody had started; the child initializes on its own first call.
    if !matches!(STATE.load(Ordering::Acquire), UNINIT | NO_TOOL | TOOL) {
        slots::clear_all();
        FORKED_MID_INIT.store(true, Ordering::Relaxed);
        STATE.store(NO_TOOL, Ordering::Release);
    }
}

/// Registers [`in_fork_child`] when the library is loaded, before any thread
/// can call NVTX: registering it from the first call instead (behind a
/// `Once`) let a `fork()` land while another thread held that `Once`, and
/// the child waited for it forever.
extern "C" fn register_fork_handler() {
    // SAFETY: registers an `extern "C"` function with no preconditions.
    unsafe { libc::pthread_atfork(None, None, Some(in_fork_child)) };
}

// SAFETY: `.init_array` holds pointers to functions taking no arguments,
// which the dynamic loader (or the C runtime, statically linked) calls once.
#[used]
#[unsafe(link_section = ".init_array")]
static REGISTER_FORK_HANDLER: extern "C" fn() = register_fork_handler;

#[cold]
#[inline(never)]
fn initialize_slow() -> bool {
    match claim::take(&STATE, &[NO_TOOL, TOOL]) {
        (Turn::Mine, _) => run_initialization(),
        (Turn::Done, outcome) => outcome == TOOL,
        // The tool is calling back into NVTX from its own init: drop the call.
        (Turn::Reentered, _) => false,
    }
}

/// Runs on the thread that owns initialization; publishes the result.
fn run_initialization() -> bool {
    let attached = match attach() {
        Ok(()) => {
            slots::fill_gaps();
            true
        }
        Err(failure) => {
            slots::clear_all();
            report(failure);
            false
        }
    };
    // A child the tool forked from inside its own initialization continues
    // here: it keeps no tool (see `in_fork_child`).
    let attached = attached && !FORKED_MID_INIT.load(Ordering::Relaxed);
    claim::finish(&STATE, if attached { TOOL } else { NO_TOOL });
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
    let message = printable(&failure.to_string());
    if std::env::var_os(QUIET_VAR).is_none_or(|v| v.is_empty() || v == "0") {
        // Not eprintln!: a closed stderr must not panic.
        let _ = writeln!(std::io::stderr(), "nvtxr: {message}");
    }
    let _ = LOAD_ERROR.set(CString::new(message).unwrap_or_default());
}

/// `text` on one line: control characters (a newline or an escape sequence
/// in the tool path, say) written as escapes, as Rust writes them.
fn printable(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_control() {
                c.escape_default().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}
