//! A recording NVTX tool (injection library) for tests.
//!
//! Attaches through NVIDIA's NVTX3 protocol (`InitializeInjectionNvtx2`),
//! checks the export tables it is given, and appends one canonical line per
//! NVTX call to the file named by `NVTXR_RECORDER_OUT` (stderr if unset):
//! attributes decoded, domain handles shown by name, registered strings by text.
//!
//! `NVTXR_RECORDER_MODE` changes its behaviour for protocol tests:
//! - `record` (default): record everything;
//! - `decline`: fill the slots, then return 0 from the entry point;
//! - `slow`: sleep 500 ms inside the entry point before attaching;
//! - `reenter`: call the producer's `nvtxr_mark` from inside the entry point;
//! - `slow-domain`: sleep 500 ms inside `DomainCreateA`;
//! - `null`: fill the CORE and CORE2 slots with functions that do nothing
//!   (the "do-nothing tool" of the benchmarks).

mod format;
mod slots;

use std::ffi::{c_char, c_int, c_uint, c_void};
use std::fs::File;
use std::io::Write;
use std::sync::{Mutex, OnceLock};

static OUT: OnceLock<Mutex<Option<File>>> = OnceLock::new();

/// Appends one line (one `write` call, so processes sharing the file do not interleave).
pub(crate) fn record(line: String) {
    let out = OUT.get_or_init(|| {
        Mutex::new(std::env::var_os("NVTXR_RECORDER_OUT").and_then(|p| {
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

extern "C" {
    fn dlsym(handle: *mut c_void, symbol: *const c_char) -> *mut c_void;
}

/// The tool's entry point.
///
/// # Safety
/// Called by an NVTX producer with its export-table getter.
#[no_mangle]
pub unsafe extern "C" fn InitializeInjectionNvtx2(get_export_table: GetExportTable) -> c_int {
    let mode = std::env::var("NVTXR_RECORDER_MODE").unwrap_or_default();
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
        if !shape_ok {
            tables_ok = false;
            continue;
        }
        if mode == "null" {
            slots::fill_null(module, table, size);
        } else {
            slots::fill(module, table, size);
        }
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
            let f = dlsym(std::ptr::null_mut(), c"nvtxr_mark".as_ptr());
            if f.is_null() {
                record("reenter: nvtxr_mark not found".into());
            } else {
                let mark: unsafe extern "C" fn(*const c_void, *const c_char) -> c_int =
                    std::mem::transmute(f);
                let status = mark(std::ptr::null(), c"from inside init".as_ptr());
                record(format!("reenter: nvtxr_mark returned {status}"));
            }
        }
        _ => {}
    }
    c_int::from(tables_ok)
}
