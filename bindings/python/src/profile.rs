//! `nvtxr.profile`'s hot path, in native code so that a profiled call costs
//! no Python-level call of its own: before Python 3.12 a profile function in
//! C (`PyEval_SetProfile`), from 3.12 `sys.monitoring` callbacks that are
//! native methods. `nvtxr/profile.py` chooses the tool id, registers the
//! callbacks and describes what the ranges are; this module keeps them.
//!
//! Each start of a code object the Python side's `attributes_for` wants is
//! a push/pop range; an end pops only when the same code's push is the
//! thread's innermost open range; after `stop` no range opens, ends keep
//! closing the open ones, and profiling ends once none is left (on each
//! thread before 3.12; with the last one on any thread from 3.12). The
//! Python side is asked once per code object.

use crate::annotation::{pop_attributes, push_attributes};
use crate::classes::EventAttributes;
use hashbrown::HashMap;
use pyo3::ffi;
use pyo3::prelude::*;
use std::cell::RefCell;
use std::ffi::c_int;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
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

/// One `nvtxr.profile.start()`'s ranges.
#[pyclass(module = "nvtxr._native", name = "_Profiler", frozen)]
pub struct Profiler {
    /// `attributes_for(code, module)`: an `EventAttributes`, or `None`.
    lookup: Py<PyAny>,
    /// From 3.12: called once the last open range closes after `stop`.
    release: Option<Py<PyAny>>,
    /// `sys.monitoring.DISABLE` (from 3.12): switches a callback off where it is.
    disable: Option<Py<PyAny>>,
    known: Mutex<HashMap<usize, Known>>,
    stopping: AtomicBool,
    /// Ranges open on every thread.
    open: AtomicUsize,
    number: u64,
}

#[pymethods]
impl Profiler {
    #[new]
    #[pyo3(signature = (lookup, release=None, disable=None))]
    fn new(lookup: Py<PyAny>, release: Option<Py<PyAny>>, disable: Option<Py<PyAny>>) -> Self {
        Profiler {
            lookup,
            release,
            disable,
            known: Mutex::new(HashMap::new()),
            stopping: AtomicBool::new(false),
            open: AtomicUsize::new(0),
            number: PROFILERS.fetch_add(1, Ordering::Relaxed) + 1,
        }
    }

    /// Before 3.12: profiles the calling thread with the profile function in C.
    fn install(slf: &Bound<'_, Self>) {
        // SAFETY: the GIL is held; CPython keeps its own reference to the argument.
        unsafe { PyEval_SetProfile(Some(profile), slf.as_ptr()) };
    }

    /// No new ranges from now on; returns whether any is still open. Before
    /// 3.12 the calling thread stops profiling at once if it has none open
    /// (others at their next return with none open).
    fn stop(&self) -> bool {
        self.stopping.store(true, Ordering::Relaxed);
        if self.release.is_none() && !self.has_open() {
            // SAFETY: the GIL is held.
            unsafe { PyEval_SetProfile(None, std::ptr::null_mut()) };
        }
        self.open.load(Ordering::Relaxed) > 0
    }

    /// Before 3.12, as a `threading.setprofile` hook: a new thread's first
    /// event installs the profile function in C on that thread, then is
    /// handled as it would.
    fn __call__(
        slf: &Bound<'_, Self>,
        frame: &Bound<'_, PyAny>,
        event: &str,
        _arg: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        Profiler::install(slf);
        match event {
            "call" => drop(
                slf.get()
                    .start(slf.py(), &frame.getattr("f_code")?, frame)?,
            ),
            "return" => slf.get().end(slf.py(), &frame.getattr("f_code")?)?,
            _ => {}
        }
        Ok(())
    }

    /// `sys.monitoring`'s PY_START and PY_RESUME: `DISABLE` for code not profiled.
    fn enter(
        &self,
        py: Python<'_>,
        code: &Bound<'_, PyAny>,
        _offset: &Bound<'_, PyAny>,
    ) -> PyResult<Py<PyAny>> {
        // SAFETY: the GIL is held; the frame that is starting (borrowed), or NULL.
        let frame = unsafe { ffi::PyEval_GetFrame() };
        let frame = if frame.is_null() {
            py.None().into_bound(py)
        } else {
            // SAFETY: a live frame object, borrowed for this call.
            unsafe { Bound::from_borrowed_ptr(py, frame.cast()) }
        };
        Ok(match self.start(py, code, &frame)? {
            Some(()) => py.None(),
            None => self.disabled(py),
        })
    }

    /// `sys.monitoring`'s PY_THROW (which cannot be switched off): as `enter`.
    fn thrown(
        &self,
        py: Python<'_>,
        code: &Bound<'_, PyAny>,
        offset: &Bound<'_, PyAny>,
        _exception: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        self.enter(py, code, offset).map(drop)
    }

    /// `sys.monitoring`'s PY_RETURN and PY_YIELD: `DISABLE` for code known
    /// not to be profiled (a function running since before `start` is not
    /// known yet, and keeps its callback).
    fn leave(
        &self,
        py: Python<'_>,
        code: &Bound<'_, PyAny>,
        _offset: &Bound<'_, PyAny>,
        _value: &Bound<'_, PyAny>,
    ) -> PyResult<Py<PyAny>> {
        if matches!(self.lock().get(&(code.as_ptr() as usize)), Some((_, None))) {
            return Ok(self.disabled(py));
        }
        self.end(py, code)?;
        Ok(py.None())
    }

    /// `sys.monitoring`'s PY_UNWIND (which cannot be switched off).
    fn unwind(
        &self,
        py: Python<'_>,
        code: &Bound<'_, PyAny>,
        _offset: &Bound<'_, PyAny>,
        _exception: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        self.end(py, code)
    }
}

/// The profile function CPython calls before 3.12 (with the GIL held) for
/// each event of the thread, `profiler` the `Profiler` given at install.
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
    nvtx_protocol::boundary::guard((), || {
        // SAFETY: CPython calls profile functions with the GIL held, with the
        // argument given at install (a `Profiler`) and the frame, both live.
        let py = unsafe { Python::assume_attached() };
        let (profiler, frame) = unsafe {
            (
                Bound::from_borrowed_ptr(py, profiler),
                Bound::from_borrowed_ptr(py, frame),
            )
        };
        let Ok(profiler) = profiler.cast::<Profiler>() else {
            return;
        };
        // SAFETY: a frame object, live for the call; a new reference comes back.
        let code = unsafe { ffi::PyFrame_GetCode(frame.as_ptr().cast()) };
        // SAFETY: PyFrame_GetCode never returns NULL.
        let code = unsafe { Bound::from_owned_ptr(py, code.cast()) };
        let done = match what {
            TRACE_CALL => profiler.get().start(py, &code, &frame).map(drop),
            _ => profiler.get().end(py, &code),
        };
        if let Err(e) = done {
            e.write_unraisable(py, Some(profiler.as_any()));
        }
    });
    0
}

impl Profiler {
    /// A start of `code` (running in `frame`): a push if it is profiled.
    /// `None` when it is not (nothing to do for it, ever).
    fn start(
        &self,
        py: Python<'_>,
        code: &Bound<'_, PyAny>,
        frame: &Bound<'_, PyAny>,
    ) -> PyResult<Option<()>> {
        if self.stopping.load(Ordering::Relaxed) {
            return Ok(Some(()));
        }
        let key = code.as_ptr() as usize;
        let Some(attributes) = self.attributes(py, code, frame, key)? else {
            return Ok(None);
        };
        self.with_open(|open| open.push((key, attributes.as_ptr())));
        self.open.fetch_add(1, Ordering::Relaxed);
        push_attributes(py, attributes.cast()?)?;
        Ok(Some(()))
    }

    /// An end of `code`: a pop if its push is this thread's innermost open
    /// range; after `stop`, profiling ends once no range is left open.
    fn end(&self, py: Python<'_>, code: &Bound<'_, PyAny>) -> PyResult<()> {
        let key = code.as_ptr() as usize;
        let closed = self.with_open(|open| match open.last() {
            Some((top, _)) if *top == key => open.pop().map(|(_, a)| a),
            _ => None,
        });
        if let Some(attributes) = closed {
            self.open.fetch_sub(1, Ordering::Relaxed);
            // SAFETY: held by this profiler's table of code objects.
            let attributes = unsafe { Bound::from_borrowed_ptr(py, attributes) };
            pop_attributes(attributes.cast()?);
        }
        if self.stopping.load(Ordering::Relaxed) {
            match &self.release {
                // From 3.12: the tool is released with the last range.
                Some(release) if closed.is_some() && self.open.load(Ordering::Relaxed) == 0 => {
                    release.call0(py)?;
                }
                Some(_) => {}
                // Before 3.12: each thread stops once it has none open.
                // SAFETY: the GIL is held.
                None if !self.has_open() => unsafe {
                    PyEval_SetProfile(None, std::ptr::null_mut())
                },
                None => {}
            }
        }
        Ok(())
    }

    /// The code's range attributes (`None`: not profiled), asked of the
    /// Python side the first time, with the name of `frame`'s module; held
    /// by the table of code objects.
    fn attributes<'py>(
        &self,
        py: Python<'py>,
        code: &Bound<'py, PyAny>,
        frame: &Bound<'py, PyAny>,
        key: usize,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        if let Some((_, found)) = self.lock().get(&key) {
            return Ok(found.as_ref().map(|a| a.bind(py).clone().into_any()));
        }
        let module = if frame.is_none() {
            None
        } else {
            frame.getattr("f_globals")?.get_item("__name__").ok()
        };
        let attributes = self.lookup.bind(py).call1((code, module))?;
        let attributes = if attributes.is_none() {
            None
        } else {
            Some(attributes.cast_into::<EventAttributes>()?.unbind())
        };
        let found = attributes.as_ref().map(|a| a.bind(py).clone().into_any());
        self.lock().insert(key, (code.clone().unbind(), attributes));
        Ok(found)
    }

    fn disabled(&self, py: Python<'_>) -> Py<PyAny> {
        self.disable
            .as_ref()
            .map_or_else(|| py.None(), |d| d.clone_ref(py))
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
