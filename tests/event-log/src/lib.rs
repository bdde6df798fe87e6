#![deny(unsafe_op_in_unsafe_fn)]
#![deny(clippy::undocumented_unsafe_blocks)]
//! The event-log tool (`libnvtxr_event_log.so`), for nvtxr's tests only: an NVTX tool
//! (injection library) that logs each call as one canonical line. Not to be
//! confused with the recording tool users run, `record/tool` (`libnvtxr_record.so`).
//!
//! Attaches through NVIDIA's NVTX3 protocol (`InitializeInjectionNvtx2`),
//! checks the export tables it is given, and appends one canonical line per
//! NVTX call to the file named by `NVTXR_EVENT_LOG_OUT` (stderr if unset):
//! attributes decoded, domain handles shown by name, registered strings by text.
//!
//! `NVTXR_EVENT_LOG_MODE` changes its behaviour for protocol tests:
//! - `record` (default): record everything;
//! - `decline`: fill the slots, then return 0 from the entry point;
//! - `slow`: sleep 500 ms inside the entry point before attaching;
//! - `reenter`: call the producer's `nvtxr_mark` from inside the entry point;
//! - `slow-domain`: sleep 500 ms inside `DomainCreateA`;
//! - `reenter-create`: from inside the entry point, create a domain and
//!   register strings through the producer's `nvtxr_` functions;
//! - `fork-in-init`: fork from inside the entry point (the child exits);
//! - `hostile-callbacks`: from inside `DomainCreateA`, mark, create another
//!   domain ("nested") and fork;
//! - `null`: fill the CORE and CORE2 slots with functions that do nothing
//!   (the "do-nothing tool" of the benchmarks);
//! - `domains-only`: fill only the CORE2 (domain) slots, as a tool that
//!   ignores the default domain's `...A` and `...Ex` calls would.

mod extensions;
mod format;
mod nothing;
mod objects;
mod slots;

use std::ffi::{c_int, c_uint};
use std::fs::File;
use std::io::Write;
use std::sync::{Mutex, OnceLock};

static OUT: OnceLock<Mutex<Option<File>>> = OnceLock::new();

/// Appends one line (one `write` call, so processes sharing the file do not interleave).
pub(crate) fn record(line: String) {
    let out = OUT.get_or_init(|| {
        Mutex::new(std::env::var_os("NVTXR_EVENT_LOG_OUT").and_then(|p| {
            std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(p)
                .ok()
        }))
    });
    let mut bytes = line.into_bytes();
    bytes.push(b'\n');
    let mut guard = out.lock().unwrap_or_else(|e| e.into_inner());
    match guard.as_mut() {
        Some(f) => drop(f.write_all(&bytes)),
        None => drop(std::io::stderr().write_all(&bytes)),
    }
}

use nvtx_protocol::{
    module, Callbacks, GetExportTable, Slot, VersionInfo, ETID_CALLBACKS, ETID_VERSIONINFO,
};

/// The tool's entry point.
///
/// # Safety
/// Called by an NVTX producer with its export-table getter.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn InitializeInjectionNvtx2(get_export_table: GetExportTable) -> c_int {
    // SAFETY: the caller upholds this function's contract (for a slot
    // function, the protocol's: valid arguments of the slot's types).
    unsafe {
        let mode = std::env::var("NVTXR_EVENT_LOG_MODE").unwrap_or_default();
        if mode == "slow" {
            std::thread::sleep(std::time::Duration::from_millis(500));
        }
        let callbacks = get_export_table(ETID_CALLBACKS).cast::<Callbacks>();
        let version = get_export_table(ETID_VERSIONINFO).cast::<VersionInfo>();
        if callbacks.is_null() || version.is_null() {
            record("init error: CALLBACKS or VERSIONINFO table missing".into());
            return 0;
        }
        let others: Vec<u32> = [0u32, 2, 4, 5, 99]
            .into_iter()
            .filter(|&id| !get_export_table(id).is_null())
            .collect();
        ((*version).set_injection_nvtx_version)(3);
        let get_table = (*callbacks).get_module_function_table;
        let mut sizes = Vec::new();
        let mut tables_ok = true;
        for (module, expected) in module::ALL {
            let expected = expected as c_uint;
            let mut table: *mut *mut Slot = std::ptr::null_mut();
            let mut size: c_uint = 0;
            let ok = get_table(module, &mut table, &mut size);
            sizes.push(size.to_string());
            let shape_ok = ok == 1
                && size == expected
                && !table.is_null()
                && (*table).is_null()
                && (*table.add(size as usize)).is_null()
                && (1..size as usize).all(|i| !(*table.add(i)).is_null());
            tables_ok &= shape_ok;
        }
        if tables_ok {
            let functions = match mode.as_str() {
                "null" => nothing::null_functions(),
                "domains-only" => slots::domain_functions(),
                _ => slots::functions(),
            };
            tables_ok = functions.install(&*callbacks);
        }
        let mut unknown_size: c_uint = 12345;
        let unknown = get_table(7, std::ptr::null_mut(), &mut unknown_size);
        record(format!(
            "init callbacks={} versioninfo={} version={} sizes={} tables={} unknown_module={}{} other_etids={}",
            (*callbacks).struct_size,
            (*version).struct_size,
            (*version).version,
            sizes.join(","),
            if tables_ok { "ok" } else { "BAD" },
            unknown,
            if unknown_size == 12345 { "" } else { " (size written!)" },
            if others.is_empty() { "null".to_string() } else { format!("{others:?}") },
        ));
        match mode.as_str() {
            "decline" => return 0,
            "reenter" => {
                let status = nvtxr::mark(std::ptr::null(), c"from inside init".as_ptr());
                record(format!("reenter: nvtxr_mark returned {status}"));
            }
            "reenter-create" => {
                let d = nvtxr::domain_create(c"made in init".as_ptr());
                let s = nvtxr::string_register(d, c"string from init".as_ptr());
                let g =
                    nvtxr::string_register(std::ptr::null(), c"default string from init".as_ptr());
                record(format!(
                    "reenter-create: domain {} strings {} {}",
                    !d.is_null(),
                    !s.is_null(),
                    !g.is_null()
                ));
            }
            "fork-in-init" => record(format!("fork-in-init: child exit {}", fork_and_wait())),
            _ => {}
        }
        c_int::from(tables_ok)
    }
}

/// `hostile-callbacks`: what a tool may do from inside a callback.
pub(crate) unsafe fn hostile_callback() {
    // SAFETY: the caller upholds this function's contract (for a slot
    // function, the protocol's: valid arguments of the slot's types).
    unsafe {
        let status = nvtxr::mark(std::ptr::null(), c"from DomainCreate".as_ptr());
        let nested = nvtxr::domain_create(c"nested".as_ptr());
        record(format!(
            "hostile: mark {status}, nested domain {}, child exit {}",
            !nested.is_null(),
            fork_and_wait()
        ));
    }
}

/// Forks a child that exits at once (after 10 s at most, by alarm, if it
/// hangs); returns its exit status (142 for the alarm).
unsafe fn fork_and_wait() -> c_int {
    // SAFETY: the caller upholds this function's contract (for a slot
    // function, the protocol's: valid arguments of the slot's types).
    unsafe {
        use libc::{_exit, alarm, fork, waitpid};
        let pid = fork();
        if pid == 0 {
            alarm(10);
            // The child may call nvtxr too: it must not hang.
            nvtxr::mark(std::ptr::null(), c"in the forked child".as_ptr());
            _exit(0);
        }
        let mut status = 0;
        waitpid(pid, &mut status, 0);
        if status & 0x7f == 0 {
            (status >> 8) & 0xff
        } else {
            128 + (status & 0x7f)
        }
    }
}

/// The producer's `nvtxr_` functions, found in the process (as a tool that
/// calls back would).
mod nvtxr {
    use libc::dlsym;
    use std::ffi::{c_char, c_int, c_void};

    unsafe fn find<F: Copy>(name: &std::ffi::CStr) -> Option<F> {
        // SAFETY: the caller upholds this function's contract (for a slot
        // function, the protocol's: valid arguments of the slot's types).
        unsafe {
            let f = dlsym(libc::RTLD_DEFAULT, name.as_ptr());
            (!f.is_null()).then(|| std::mem::transmute_copy(&f))
        }
    }

    pub unsafe fn mark(d: *const c_void, m: *const c_char) -> c_int {
        // SAFETY: the caller upholds this function's contract (for a slot
        // function, the protocol's: valid arguments of the slot's types).
        unsafe {
            type F = unsafe extern "C" fn(*const c_void, *const c_char) -> c_int;
            find::<F>(c"nvtxr_mark").map_or(-100, |f| f(d, m))
        }
    }

    pub unsafe fn domain_create(n: *const c_char) -> *const c_void {
        // SAFETY: the caller upholds this function's contract (for a slot
        // function, the protocol's: valid arguments of the slot's types).
        unsafe {
            type F = unsafe extern "C" fn(*const c_char) -> *const c_void;
            find::<F>(c"nvtxr_domain_create").map_or(std::ptr::null(), |f| f(n))
        }
    }

    pub unsafe fn string_register(d: *const c_void, t: *const c_char) -> *const c_void {
        // SAFETY: the caller upholds this function's contract (for a slot
        // function, the protocol's: valid arguments of the slot's types).
        unsafe {
            type F = unsafe extern "C" fn(*const c_void, *const c_char) -> *const c_void;
            find::<F>(c"nvtxr_string_register").map_or(std::ptr::null(), |f| f(d, t))
        }
    }
}
