//! `nvtxr._native`: the hot path of the `nvtxr` Python package, on nvtxr's
//! NVTX core (not its C ABI). Every call checks for a tool first (one
//! atomic load) and returns at once without one; with a tool, messages are
//! registered strings cached per domain in a dict keyed by the `str` object
//! (its hash is cached), bounded so that formatted messages keep memory
//! bounded.

mod annotation;
mod attributes;
mod classes;
mod counters;
mod domain;
mod fastcall;
mod functions;
mod profile;
mod tasks;
mod threads;
mod values;
mod writer;

use annotation::{_end, _pop, _push, _start, annotate};
use classes::{Domain, EventAttributes, RegisteredString};
use counters::{
    _counter_batch_bytes, _counter_register, _counter_sample_bytes, _counter_sample_float,
    _counter_sample_int, _counter_sample_no_value, _scope_register,
};
use domain::get_domain;
use functions::{
    _text_end, _text_mark, _text_pop, _text_push, _text_start, enabled, load_error, tool_attached,
};
use nvtxr_engine::Error;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString};
use std::ffi::CString;
use threads::{_forked, name_current_thread, name_threads};
use writer::{_nvtxw_color, _nvtxw_load, Backend as NvtxwBackend};

/// An engine result at the Python door, which never raises for an NVTX
/// call: the value, or, when the engine refused the call, a
/// `RuntimeWarning` saying why and `fallback`.
/// Whether `NVTX_DISABLE` is set to anything but the empty string (as
/// NVIDIA's package reads it, once): every call is then a no-op.
pub(crate) fn disabled() -> bool {
    static DISABLED: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *DISABLED.get_or_init(|| std::env::var_os("NVTX_DISABLE").is_some_and(|v| !v.is_empty()))
}

/// Whether calls reach a tool: one is attached and NVTX is not disabled.
#[inline]
pub(crate) fn active() -> bool {
    nvtxr_engine::statics::enabled() && !disabled()
}

pub(crate) fn checked<T>(py: Python<'_>, result: Result<T, Error>, fallback: T) -> T {
    result.unwrap_or_else(|e| {
        let warning = py.get_type::<pyo3::exceptions::PyRuntimeWarning>();
        let _ = PyErr::warn(py, &warning, &c_string(&format!("nvtxr: {e}")), 1);
        fallback
    })
}

/// `s` as the tool gets it: UTF-8, NULs replaced. Text Python holds but
/// UTF-8 cannot (a lone surrogate, as `os.fsdecode` makes of an undecodable
/// file name) is sent escaped (`\\ud800`), with one warning per process:
/// a call that passes with no tool never raises under one.
pub(crate) fn text(s: &Bound<'_, PyString>) -> CString {
    if let Ok(utf8) = s.to_cow() {
        return c_string(&utf8);
    }
    static WARNED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
    let py = s.py();
    if !WARNED.swap(true, std::sync::atomic::Ordering::Relaxed) {
        let warning = py.get_type::<pyo3::exceptions::PyUnicodeWarning>();
        let _ = PyErr::warn(
            py,
            &warning,
            c"nvtxr: text that is not valid Unicode (a lone surrogate) is sent to the tool with it escaped (\\udXXX)",
            1,
        );
    }
    let escaped = s
        .call_method1("encode", ("utf-8", "backslashreplace"))
        .and_then(|b| b.extract::<Vec<u8>>());
    match escaped {
        Ok(bytes) => c_string(&String::from_utf8_lossy(&bytes)),
        Err(_) => c_string("\u{FFFD}"),
    }
}

pub(crate) fn c_string(s: &str) -> CString {
    CString::new(s.replace('\0', "\u{FFFD}")).expect("NULs replaced")
}

/// The `nvtxr` command (`record`, `report`, `view`) with `args`, the
/// program's name first; returns its exit status. The package's `nvtxr`
/// script runs it, so `pip install` gives a command that records.
#[pyfunction]
fn _command(py: Python<'_>, args: Vec<std::ffi::OsString>) -> u8 {
    // The command waits for its program and converts: other Python threads
    // (there are none in the script) may run meanwhile.
    py.detach(|| nvtxr_command::run(args))
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let forked = wrap_pyfunction!(_forked, m)?;
    let hook = PyDict::new(m.py());
    hook.set_item("after_in_child", &forked)?;
    m.py()
        .import("os")?
        .call_method("register_at_fork", (), Some(&hook))?;
    m.add_function(forked)?;
    m.add_class::<Domain>()?;
    fastcall::add_methods(&m.py().get_type::<Domain>(), &domain::METHODS)?;
    m.add_class::<RegisteredString>()?;
    m.add_class::<EventAttributes>()?;
    m.add_class::<annotate>()?;
    fastcall::add_methods(&m.py().get_type::<annotate>(), &annotation::METHODS)?;
    m.add_class::<profile::Profiler>()?;
    m.add_function(wrap_pyfunction!(_command, m)?)?;
    m.add_function(wrap_pyfunction!(get_domain, m)?)?;
    functions::intern_names(m.py());
    fastcall::add_functions(m, &functions::FUNCTIONS)?;
    m.add_function(wrap_pyfunction!(enabled, m)?)?;
    m.add_function(wrap_pyfunction!(tool_attached, m)?)?;
    m.add_function(wrap_pyfunction!(name_threads, m)?)?;
    m.add_function(wrap_pyfunction!(name_current_thread, m)?)?;
    m.add_function(wrap_pyfunction!(load_error, m)?)?;
    m.add_function(wrap_pyfunction!(_push, m)?)?;
    m.add_function(wrap_pyfunction!(_pop, m)?)?;
    m.add_function(wrap_pyfunction!(_start, m)?)?;
    m.add_function(wrap_pyfunction!(_end, m)?)?;
    fastcall::add_functions(m, &annotation::FUNCTIONS)?;
    m.add_function(wrap_pyfunction!(_text_mark, m)?)?;
    m.add_function(wrap_pyfunction!(_text_push, m)?)?;
    m.add_function(wrap_pyfunction!(_text_start, m)?)?;
    m.add_function(wrap_pyfunction!(_text_pop, m)?)?;
    m.add_function(wrap_pyfunction!(_text_end, m)?)?;
    m.add_function(wrap_pyfunction!(_counter_register, m)?)?;
    m.add_function(wrap_pyfunction!(_counter_batch_bytes, m)?)?;
    m.add_function(wrap_pyfunction!(_counter_sample_bytes, m)?)?;
    m.add_function(wrap_pyfunction!(_scope_register, m)?)?;
    m.add_function(wrap_pyfunction!(_counter_sample_int, m)?)?;
    m.add_function(wrap_pyfunction!(_counter_sample_float, m)?)?;
    m.add_function(wrap_pyfunction!(_counter_sample_no_value, m)?)?;
    m.add_class::<NvtxwBackend>()?;
    m.add_function(wrap_pyfunction!(_nvtxw_load, m)?)?;
    m.add_function(wrap_pyfunction!(_nvtxw_color, m)?)?;
    Ok(())
}
