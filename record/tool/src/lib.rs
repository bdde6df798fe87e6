//! nvtxr's recording tool (`libnvtxr_record.so`): an NVTX tool that attaches
//! through NVIDIA's NVTX3 protocol to every producer (nvtxr, NVIDIA's headers
//! and `libnvtx3interop.so.1`, NVIDIA's Python `nvtx`, PyTorch) and streams
//! timestamped events to `NVTXR_RECORD_DIR`, which `nvtxr record` / `nvtxr
//! report` turn into a trace, an HTML timeline and a summary.
//!
//! Use it through `nvtxr record -- COMMAND`, or by hand:
//! `NVTX_INJECTION64_PATH=libnvtxr_record.so NVTXR_RECORD_DIR=dir COMMAND`,
//! then `nvtxr report dir`.

pub mod buffer;
mod callbacks;
pub mod format;

use std::ffi::{c_int, c_uint};
use std::io::Write;
use std::sync::Once;

/// The variable naming the recording directory.
pub const DIR_VAR: &str = "NVTXR_RECORD_DIR";

use nvtx_protocol::{fill_slots, module, Callbacks, GetExportTable, Slot, ETID_CALLBACKS};

/// Process-wide setup, once (every producer in the process calls the entry point).
fn setup() -> bool {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let Some(dir) = std::env::var_os(DIR_VAR).filter(|d| !d.is_empty()) else {
            let _ = writeln!(
                std::io::stderr(),
                "nvtxr record: {DIR_VAR} is not set; not recording"
            );
            return;
        };
        let dir = std::path::PathBuf::from(dir);
        if let Err(e) = std::fs::create_dir_all(&dir) {
            buffer::fail(&format!("cannot create {}: {e}", dir.display()));
            return;
        }
        let _ = buffer::DIR.set(dir);
        write_process_file();
        // SAFETY: plain C calls registering `extern "C"` handlers.
        unsafe {
            libc::atexit(at_exit);
            libc::pthread_atfork(None, None, Some(in_fork_child));
            for signal in [libc::SIGINT, libc::SIGTERM] {
                install_flush_on(signal);
            }
        }
    });
    buffer::DIR.get().is_some()
}

/// `<pid>.process`: the command line (NUL-separated), then the parent pid on its own line.
fn write_process_file() {
    let Some(dir) = buffer::DIR.get() else { return };
    let cmdline = std::fs::read("/proc/self/cmdline").unwrap_or_default();
    let mut contents = cmdline;
    // SAFETY: getppid has no preconditions.
    contents.extend_from_slice(format!("\n{}\n", unsafe { libc::getppid() }).as_bytes());
    let path = dir.join(format!("{}.process", std::process::id()));
    if let Err(e) = std::fs::write(&path, contents) {
        buffer::fail(&format!("cannot write {}: {e}", path.display()));
    }
}

extern "C" fn at_exit() {
    buffer::flush_all(false);
}

extern "C" fn in_fork_child() {
    buffer::after_fork_in_child();
    write_process_file();
}

/// On SIGINT/SIGTERM with the default action (terminate), flush what the
/// threads recorded, then terminate as the default action would. A program's
/// own handler is left alone.
unsafe fn install_flush_on(signal: c_int) {
    let mut old: libc::sigaction = std::mem::zeroed();
    if libc::sigaction(signal, std::ptr::null(), &mut old) != 0 || old.sa_sigaction != libc::SIG_DFL
    {
        return;
    }
    let mut action: libc::sigaction = std::mem::zeroed();
    action.sa_sigaction = flush_and_die as extern "C" fn(c_int) as usize;
    action.sa_flags = libc::SA_RESETHAND;
    libc::sigemptyset(&mut action.sa_mask);
    libc::sigaction(signal, &action, std::ptr::null_mut());
}

extern "C" fn flush_and_die(signal: c_int) {
    buffer::flush_all(true);
    // SA_RESETHAND restored the default action: terminate with the signal.
    unsafe { libc::raise(signal) };
}

/// The tool's entry point.
///
/// # Safety
/// Called by an NVTX producer with its export-table getter.
#[no_mangle]
pub unsafe extern "C" fn InitializeInjectionNvtx2(get_export_table: GetExportTable) -> c_int {
    if !setup() {
        return 0;
    }
    let callbacks = get_export_table(ETID_CALLBACKS).cast::<Callbacks>();
    let Some(callbacks) = callbacks.as_ref() else {
        return 0;
    };
    for (module, functions) in [
        (module::CORE, callbacks::core()),
        (module::CORE2, callbacks::core2()),
    ] {
        let mut table: *mut *mut Slot = std::ptr::null_mut();
        let mut size: c_uint = 0;
        if (callbacks.get_module_function_table)(module, &mut table, &mut size) == 0
            || table.is_null()
        {
            return 0;
        }
        fill_slots(table, size, &functions);
    }
    1
}
