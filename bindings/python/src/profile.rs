//! `nvtxr.profile`'s hot path before Python 3.12: a profile function in C
//! (`PyEval_SetProfile`), so that a profiled call costs no Python-level
//! call of its own. (From 3.12, `nvtxr.profile` uses `sys.monitoring`.)
//!
//! What it does is what `nvtxr/profile.py` describes: each call of a code
//! object the Python side's `attributes_for` wants is a push/pop range, a
//! return pops only when the same code's push is the thread's innermost open
//! one, and after `stop` returns keep closing the open ranges, then each
//! thread's profiling ends. The Python side is asked once per code object.

use crate::annotation::{pop_attributes, push_attributes};
use crate::domain::EventAttributes;
use hashbrown::HashMap;
use pyo3::ffi;
use pyo3::prelude::*;
use std::cell::RefCell;
use std::ffi::c_int;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;

/// CPython's profile function type and events (`cpython/pystate.h`,
/// unchanged since 3.0). Outside the limited API this module is built
/// against, so declared here; only called on CPython before 3.12.
type ProfileFunction = unsafe extern "C" fn(
    *mut ffi::PyObject,
    *mut ffi::PyObject,
    c_int,
    *mut ffi::PyObject,
) -> c_int;
const TRACE_CALL: c_int = 0;
const TRACE_RETURN: c_int = 3;

extern "C" {
    fn PyEval_SetProfile(function: Option<ProfileFunction>, argument: *mut ffi::PyObject);
}

/// Profilers made so far: each thread's open ranges belong to one.
static PROFILERS: AtomicU64 = AtomicU64::new(0);

/// An open range: its code object's address, and its attributes (held by
/// the profiler's table of code objects, which outlives the range).
type Open = (usize, *mut ffi::PyObject);

thread_local! {
    /// This thread's open ranges: whose (a profiler's number), and each
    /// range, innermost last. Another profiler's are never read.
    static OPEN: RefCell<(u64, Vec<Open>)> = const { RefCell::new((0, Vec::new())) };
}

/// A code object seen: held (so that its address names it alone), and its
/// range's attributes, or `None` when it is not profiled.
type Known = (Py<PyAny>, Option<Py<EventAttributes>>);

/// One `nvtxr.profile.start()`'s profile function.
#[pyclass(module = "nvtxr._native", name = "_SetProfile", frozen)]
pub struct SetProfile {
    /// `attributes_for(code, module)`: an `EventAttributes`, or `None`.
    lookup: Py<PyAny>,
    known: Mutex<HashMap<usize, Known>>,
    stopping: AtomicBool,
    number: u64,
}

#[pymethods]
impl SetProfile {
    #[new]
    fn new(lookup: Py<PyAny>) -> Self {
        SetProfile {
            lookup,
            known: Mutex::new(HashMap::new()),
            stopping: AtomicBool::new(false),
            number: PROFILERS.fetch_add(1, Ordering::Relaxed) + 1,
        }
    }

    /// Profiles the calling thread.
    fn install(slf: &Bound<'_, Self>) {
        // SAFETY: the GIL is held; CPython keeps its own reference to the argument.
        unsafe { PyEval_SetProfile(Some(profile), slf.as_ptr()) };
    }

    /// No new ranges from now on; the calling thread stops profiling at once
    /// if it has no range open (others at their next return with none open).
    fn stop(&self) {
        self.stopping.store(true, Ordering::Relaxed);
        if !self.has_open() {
            // SAFETY: the GIL is held.
            unsafe { PyEval_SetProfile(None, std::ptr::null_mut()) };
        }
    }

    /// As a `threading.setprofile` hook: a new thread's first event installs
    /// the profile function in C on that thread, then is handled as it would.
    fn __call__(
        slf: &Bound<'_, Self>,
        frame: &Bound<'_, PyAny>,
        event: &str,
        _arg: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        SetProfile::install(slf);
        let what = match event {
            "call" => TRACE_CALL,
            "return" => TRACE_RETURN,
            _ => return Ok(()),
        };
        slf.get().event(slf.py(), frame, what)
    }
}

/// The profile function CPython calls (with the GIL held) for each event
/// of the thread, `profiler` the `SetProfile` given at install.
unsafe extern "C" fn profile(
    profiler: *mut ffi::PyObject,
    frame: *mut ffi::PyObject,
    what: c_int,
    _arg: *mut ffi::PyObject,
) -> c_int {
    if what != TRACE_CALL && what != TRACE_RETURN {
        return 0;
    }
    // A profile function must not fail: an error here would end profiling
    // with an exception in the program. A panic or error is dropped.
    let _ = std::panic::catch_unwind(|| {
        // SAFETY: CPython calls profile functions with the GIL held, with the
        // argument given at install (a `SetProfile`) and the frame, both live.
        let py = unsafe { Python::assume_attached() };
        let (profiler, frame) = unsafe {
            (
                Bound::from_borrowed_ptr(py, profiler),
                Bound::from_borrowed_ptr(py, frame),
            )
        };
        if let Ok(profiler) = profiler.cast::<SetProfile>() {
            if let Err(e) = profiler.get().event(py, &frame, what) {
                e.write_unraisable(py, Some(profiler.as_any()));
            }
        }
    });
    0
}

impl SetProfile {
    /// A call (a push, if the code is profiled) or a return (a pop, if the
    /// code's push is this thread's innermost open range).
    fn event(&self, py: Python<'_>, frame: &Bound<'_, PyAny>, what: c_int) -> PyResult<()> {
        // SAFETY: a frame object, live for the call; a new reference comes back.
        let code = unsafe { ffi::PyFrame_GetCode(frame.as_ptr().cast()) };
        // SAFETY: PyFrame_GetCode never returns NULL.
        let code = unsafe { Bound::from_owned_ptr(py, code.cast()) };
        let key = code.as_ptr() as usize;
        if what == TRACE_CALL {
            if self.stopping.load(Ordering::Relaxed) {
                return Ok(());
            }
            if let Some(attributes) = self.attributes(py, frame, code, key)? {
                self.with_open(|open| open.push((key, attributes.as_ptr())));
                push_attributes(py, attributes.cast()?)?;
            }
            return Ok(());
        }
        let closed = self.with_open(|open| match open.last() {
            Some((top, _)) if *top == key => open.pop().map(|(_, a)| a),
            _ => None,
        });
        if let Some(attributes) = closed {
            // SAFETY: held by this profiler's table of code objects.
            let attributes = unsafe { Bound::from_borrowed_ptr(py, attributes) };
            pop_attributes(attributes.cast()?);
        }
        if self.stopping.load(Ordering::Relaxed) && !self.has_open() {
            // SAFETY: the GIL is held; this thread's profiling ends.
            unsafe { PyEval_SetProfile(None, std::ptr::null_mut()) };
        }
        Ok(())
    }

    /// The code's range attributes (`None`: not profiled), asked of the
    /// Python side the first time; held by the table of code objects.
    fn attributes<'py>(
        &self,
        py: Python<'py>,
        frame: &Bound<'py, PyAny>,
        code: Bound<'py, PyAny>,
        key: usize,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        if let Some((_, found)) = self.lock().get(&key) {
            return Ok(found.as_ref().map(|a| a.bind(py).clone().into_any()));
        }
        let module = frame.getattr("f_globals")?.get_item("__name__").ok();
        let attributes = self.lookup.bind(py).call1((&code, module))?;
        let attributes = if attributes.is_none() {
            None
        } else {
            Some(attributes.cast_into::<EventAttributes>()?.unbind())
        };
        let found = attributes.as_ref().map(|a| a.bind(py).clone().into_any());
        self.lock().insert(key, (code.unbind(), attributes));
        Ok(found)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<usize, Known>> {
        self.known.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Runs `f` on this thread's open ranges of this profiler (forgetting
    /// those of an earlier one).
    fn with_open<R>(&self, f: impl FnOnce(&mut Vec<Open>) -> R) -> R {
        OPEN.with(|open| {
            let mut open = open.borrow_mut();
            if open.0 != self.number {
                *open = (self.number, Vec::new());
            }
            f(&mut open.1)
        })
    }

    fn has_open(&self) -> bool {
        self.with_open(|open| !open.is_empty())
    }
}
