//! Hand-written entries for the hot calls (the module's and `Domain`'s
//! `mark`, `push_range`, `pop_range`, `start_range` and `end_range`,
//! `annotate.__enter__` and `__exit__`, and `_call`, what `@annotate` wraps a
//! call in), with NVIDIA's signatures.
//!
//! PyO3's generated entries spend about 120 instructions per call before
//! nvtxr's code runs (every parameter extracted into a table, a type lookup
//! per typed argument, its trampoline), which made `Domain.push_range(a)` +
//! `pop_range()` with no tool dearer than NVIDIA's Cython (777 instructions
//! against 666). These are plain `METH_FASTCALL | METH_KEYWORDS` (or
//! `METH_NOARGS`) entries:
//! - with no tool, a call of the common shape (its arguments by position,
//!   of the right types) is answered at once by the entry's `off` function,
//!   which reads a few fields and compares pointers (454 instructions);
//! - otherwise the arguments are read by position, keywords only when
//!   there are some ([`Params::parse`]), in PyO3's own trampoline (the one
//!   its generated entries use: a panic becomes `PanicException`, an error
//!   is raised, PyO3's bookkeeping of the attached thread is kept).
//!
//! PyO3 makes every other method and function.

use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::type_object::PyTypeInfo;
use pyo3::types::{PyString, PyTuple, PyType};
use std::ffi::CStr;

/// A method or module function defined here: its name, its `__doc__` with
/// its `__text_signature__` first (`name(...)\n--\n\n`, as CPython reads
/// them from `ml_doc`), and its entry.
pub(crate) struct Def {
    pub name: &'static CStr,
    pub doc: &'static CStr,
    pub entry: Entry,
}

/// An entry: with no arguments, or with a vector of them.
pub(crate) enum Entry {
    NoArgs(ffi::PyCFunction),
    Fast(ffi::PyCFunctionFastWithKeywords),
}

/// A vector call's arguments, as CPython passes them to an entry: the
/// object (`self`, or the module), `nargs` positional arguments in `args`
/// and then one per name of the tuple `kwnames` (or NULL: none).
#[derive(Clone, Copy)]
pub(crate) struct Vector {
    pub slf: *mut ffi::PyObject,
    pub args: *const *mut ffi::PyObject,
    pub nargs: ffi::Py_ssize_t,
    pub kwnames: *mut ffi::PyObject,
}

impl Vector {
    /// `self` as a `T`.
    ///
    /// # Safety
    /// `slf` is a `T` (a method descriptor checks its object's type before
    /// the entry runs); called from Python.
    pub(crate) unsafe fn object<'a, 'py, T>(&self, py: Python<'py>) -> Borrowed<'a, 'py, T> {
        // SAFETY: see the safety section.
        unsafe { Borrowed::from_ptr(py, self.slf).cast_unchecked::<T>() }
    }

    /// The first positional argument (`nargs` is at least 1).
    ///
    /// # Safety
    /// As [`Vector::object`], with `nargs >= 1`.
    pub(crate) unsafe fn first<'a, 'py>(&self, py: Python<'py>) -> Borrowed<'a, 'py, PyAny> {
        // SAFETY: see the safety section.
        unsafe { Borrowed::from_ptr(py, *self.args) }
    }

    /// Whether the call has no keywords and at most `n` positional arguments.
    pub(crate) fn at_most(&self, n: ffi::Py_ssize_t) -> bool {
        self.kwnames.is_null() && self.nargs <= n
    }
}

/// What a [`Entry::Fast`] entry runs in PyO3's trampoline.
pub(crate) type FastBody = unsafe fn(Python<'_>, Vector) -> PyResult<*mut ffi::PyObject>;

/// What a [`Entry::NoArgs`] entry runs in PyO3's trampoline (its object).
pub(crate) type NoArgsBody =
    for<'py> unsafe fn(Python<'py>, *mut ffi::PyObject) -> PyResult<*mut ffi::PyObject>;

/// An entry's answer with no tool, given before PyO3's trampoline (which
/// costs about 55 instructions a call): the result, or `None` for the
/// body to answer. It reads fields and compares pointers, and returns a
/// constant: it cannot fail, panic, or drop a `Py`.
pub(crate) type FastOff = unsafe fn(Vector) -> Option<*mut ffi::PyObject>;

/// What an `off` function answers with no tool: `None`, or an `int`.
#[derive(Clone, Copy)]
pub(crate) enum Answer {
    None,
    Int(std::ffi::c_long),
}

impl Answer {
    /// The answer as a new reference (a small `int` or `None`: never fails).
    ///
    /// # Safety
    /// Called from Python (the thread attached).
    pub(crate) unsafe fn object(self) -> *mut ffi::PyObject {
        // SAFETY: see the safety section.
        let py = unsafe { Python::assume_attached() };
        match self {
            Answer::None => py.None().into_ptr(),
            Answer::Int(value) => unsafe { ffi::PyLong_FromLong(value) },
        }
    }
}

/// [`FastOff`] for a no-argument entry (its object).
pub(crate) type NoArgsOff = unsafe fn(*mut ffi::PyObject) -> Option<*mut ffi::PyObject>;

/// A [`Def`] of a vector-call entry running `$body` (a [`FastBody`]). With
/// `off = $off` (a [`FastOff`]), `$off` answers first, before the
/// trampoline, where it can.
macro_rules! fast {
    ($name:literal, $doc:literal, $body:path $(, off = $off:path)?) => {{
        unsafe extern "C" fn entry(
            slf: *mut pyo3::ffi::PyObject,
            args: *const *mut pyo3::ffi::PyObject,
            nargs: pyo3::ffi::Py_ssize_t,
            kwnames: *mut pyo3::ffi::PyObject,
        ) -> *mut pyo3::ffi::PyObject {
            $(
                const OFF: $crate::fastcall::FastOff = $off;
                let vector = $crate::fastcall::Vector { slf, args, nargs, kwnames };
                // SAFETY: CPython's arguments, as `OFF` takes them.
                if let Some(answer) = unsafe { OFF(vector) } {
                    return answer;
                }
            )?
            unsafe fn body(
                py: pyo3::Python<'_>,
                slf: *mut pyo3::ffi::PyObject,
                args: *const *mut pyo3::ffi::PyObject,
                nargs: pyo3::ffi::Py_ssize_t,
                kwnames: *mut pyo3::ffi::PyObject,
            ) -> pyo3::PyResult<*mut pyo3::ffi::PyObject> {
                const BODY: $crate::fastcall::FastBody = $body;
                let vector = $crate::fastcall::Vector { slf, args, nargs, kwnames };
                // SAFETY: CPython's arguments, as `BODY` takes them.
                unsafe { BODY(py, vector) }
            }
            // SAFETY: CPython calls it with a vector call's arguments.
            unsafe {
                pyo3::impl_::trampoline::fastcall_with_keywords(slf, args, nargs, kwnames, body)
            }
        }
        $crate::fastcall::Def {
            name: $name,
            doc: $doc,
            entry: $crate::fastcall::Entry::Fast(entry),
        }
    }};
}

/// A [`Def`] of a no-argument entry running `$body` (a [`NoArgsBody`]),
/// `off = $off` (a [`NoArgsOff`]) answering first where it can.
macro_rules! noargs {
    ($name:literal, $doc:literal, $body:path $(, off = $off:path)?) => {{
        unsafe extern "C" fn entry(
            slf: *mut pyo3::ffi::PyObject,
            args: *mut pyo3::ffi::PyObject,
        ) -> *mut pyo3::ffi::PyObject {
            $(
                const OFF: $crate::fastcall::NoArgsOff = $off;
                // SAFETY: CPython's argument, as `OFF` takes it.
                if let Some(answer) = unsafe { OFF(slf) } {
                    return answer;
                }
            )?
            const BODY: $crate::fastcall::NoArgsBody = $body;
            // SAFETY: CPython calls it as a `METH_NOARGS` method.
            unsafe { pyo3::impl_::trampoline::noargs(slf, args, BODY) }
        }
        $crate::fastcall::Def {
            name: $name,
            doc: $doc,
            entry: $crate::fastcall::Entry::NoArgs(entry),
        }
    }};
}
pub(crate) use {fast, noargs};

impl Def {
    /// Its `PyMethodDef`, made once and kept for the process's life (a
    /// method object points at it).
    fn leak(&self) -> *mut ffi::PyMethodDef {
        let (ml_meth, ml_flags) = match self.entry {
            Entry::NoArgs(f) => (ffi::PyMethodDefPointer { PyCFunction: f }, ffi::METH_NOARGS),
            Entry::Fast(f) => (
                ffi::PyMethodDefPointer {
                    PyCFunctionFastWithKeywords: f,
                },
                ffi::METH_FASTCALL | ffi::METH_KEYWORDS,
            ),
        };
        Box::leak(Box::new(ffi::PyMethodDef {
            ml_name: self.name.as_ptr(),
            ml_meth,
            ml_flags,
            ml_doc: self.doc.as_ptr(),
        }))
    }
}

/// Adds `defs` to the class `ty` as methods.
pub(crate) fn add_methods(ty: &Bound<'_, PyType>, defs: &[Def]) -> PyResult<()> {
    for def in defs {
        // SAFETY: a live type and a method definition that is never freed.
        let method = unsafe {
            Bound::from_owned_ptr_or_err(
                ty.py(),
                ffi::PyDescr_NewMethod(ty.as_type_ptr(), def.leak()),
            )
        }?;
        ty.setattr(PyString::new(ty.py(), &def.name.to_string_lossy()), method)?;
    }
    Ok(())
}

/// Adds `defs` to the module `m` as functions.
pub(crate) fn add_functions(m: &Bound<'_, PyModule>, defs: &[Def]) -> PyResult<()> {
    let module_name = m.name()?;
    for def in defs {
        // SAFETY: a method definition that is never freed; the module's
        // name is a live `str` (the function keeps its own reference).
        let function = unsafe {
            Bound::from_owned_ptr_or_err(
                m.py(),
                ffi::PyCFunction_NewEx(def.leak(), std::ptr::null_mut(), module_name.as_ptr()),
            )
        }?;
        m.add(PyString::new(m.py(), &def.name.to_string_lossy()), function)?;
    }
    Ok(())
}

/// A vector call's parameters: `names` in order; the first `positional` may
/// be given by position, the first `required` must be given.
pub(crate) struct Params {
    pub function: &'static str,
    pub names: &'static [&'static str],
    pub positional: usize,
    pub required: usize,
}

/// An argument as a call got it: `None` given or not given alike (as
/// PyO3's `Option` arguments), but a required one is always there.
pub(crate) type Arg<'a, 'py> = Option<Borrowed<'a, 'py, PyAny>>;

impl Params {
    /// The arguments of a vector call, by parameter (`N` is `names.len()`);
    /// a `TypeError` worded as CPython's for a call that does not fit.
    ///
    /// # Safety
    /// `v` is a vector call's arguments as CPython passes them.
    #[inline]
    pub(crate) unsafe fn parse<'a, 'py, const N: usize>(
        &self,
        py: Python<'py>,
        v: Vector,
    ) -> PyResult<[Arg<'a, 'py>; N]> {
        let Vector {
            args,
            nargs,
            kwnames,
            ..
        } = v;
        debug_assert_eq!(N, self.names.len());
        let nargs = nargs as usize;
        // Parameter `j`'s value, the `i`th of the vector.
        let arg = |i: usize, j: usize| {
            // SAFETY: `i` is within the vector (see the safety section).
            let a = unsafe { Borrowed::from_ptr(py, *args.add(i)) };
            (j < self.required || !a.is_none()).then_some(a)
        };
        if nargs > self.positional {
            let (takes, fixed) = match self.required == self.positional {
                true => (self.positional.to_string(), true),
                false => (
                    format!("from {} to {}", self.required, self.positional),
                    false,
                ),
            };
            let plural = if fixed && self.positional == 1 {
                ""
            } else {
                "s"
            };
            let were = if nargs == 1 { "was" } else { "were" };
            return Err(self.error(format!(
                "takes {takes} positional argument{plural} but {nargs} {were} given"
            )));
        }
        if kwnames.is_null() && nargs >= self.required {
            // The common shape: by position alone.
            return Ok(std::array::from_fn(|i| {
                (i < nargs).then(|| arg(i, i)).flatten()
            }));
        }
        let mut out: [Arg<'a, 'py>; N] = [None; N];
        let mut given = [false; N];
        for i in 0..nargs {
            (out[i], given[i]) = (arg(i, i), true);
        }
        if !kwnames.is_null() {
            // SAFETY: CPython passes a tuple of `str` (or NULL, excluded above).
            let kwnames = unsafe { Borrowed::from_ptr(py, kwnames).cast_unchecked::<PyTuple>() };
            for (k, key) in kwnames.iter().enumerate() {
                let key = key.cast_into::<PyString>()?;
                let key = key.to_cow()?;
                let Some(j) = self.names.iter().position(|n| *n == key) else {
                    return Err(self.error(format!("got an unexpected keyword argument '{key}'")));
                };
                if given[j] {
                    return Err(self.error(format!("got multiple values for argument '{key}'")));
                }
                (out[j], given[j]) = (arg(nargs + k, j), true);
            }
        }
        if let Some(missing) = (0..self.required).find(|&i| !given[i]) {
            return Err(self.error(format!(
                "missing required argument '{}' (pos {})",
                self.names[missing],
                missing + 1
            )));
        }
        Ok(out)
    }

    fn error(&self, what: String) -> PyErr {
        pyo3::exceptions::PyTypeError::new_err(format!("{}() {what}", self.function))
    }

    /// Argument `name`'s value as a `T`; a `TypeError` naming the argument
    /// (as PyO3's) if it is not one.
    pub(crate) fn extract<'a, 'py, T: FromPyObject<'a, 'py>>(
        name: &str,
        value: Borrowed<'a, 'py, PyAny>,
    ) -> PyResult<T> {
        value.extract().map_err(|e: T::Error| {
            pyo3::impl_::extract_argument::argument_extraction_error(value.py(), name, e.into())
        })
    }

    /// Argument `name`'s value as a `T` object; a `TypeError` naming the
    /// argument (as PyO3's) if it is not one.
    #[inline]
    pub(crate) fn cast<'a, 'py, T: PyTypeInfo>(
        name: &str,
        value: Borrowed<'a, 'py, PyAny>,
    ) -> PyResult<Borrowed<'a, 'py, T>> {
        if T::is_exact_type_of(&value) {
            // SAFETY: just checked.
            return Ok(unsafe { value.cast_unchecked::<T>() });
        }
        value.cast::<T>().map_err(|e| {
            pyo3::impl_::extract_argument::argument_extraction_error(value.py(), name, e.into())
        })
    }
}
