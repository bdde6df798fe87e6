//! `nvtxr.writer`'s native core: an NVTXW backend (`nvtx_protocol::nvtxw`)
//! loaded and called with the C structs each call takes, built from Python
//! values. The objects, their checks and NVIDIA's errors are Python
//! (`nvtxr/writer.py`); every call here returns the backend's result code
//! (and what it wrote), which the Python side turns into `WriterError`s.
//! Handles (sessions, domains, streams, registered strings) are addresses.

use crate::values::{c_bytes, semantics as counter_semantics, with_schema, Semantics};
use nvtx_protocol::ext::{CounterAttr, CounterBatch};
use nvtx_protocol::nvtxw::{self, Interface, EVENT_SCHEMAS};
use nvtx_protocol::payload::{
    schema_field, PayloadData, SchemaAttr, SchemaEntry, ScopeAttr, SemanticsHeader,
};
use pyo3::exceptions::PyOSError;
use pyo3::prelude::*;
use std::ffi::{c_void, CString};
use std::ptr;
use std::sync::atomic::{AtomicUsize, Ordering};

/// A loaded backend library (loaded until the process exits, as NVIDIA's
/// package keeps it) and, once it gave it, its function table.
#[pyclass(frozen)]
pub(crate) struct Backend {
    _library: libloading::Library,
    get_interface: Option<nvtxw::GetInterface>,
    finalize: Option<nvtxw::Finalize>,
    /// `nvtxwInterface_v2_t*`, static in the backend; 0 until given.
    iface: AtomicUsize,
}

/// An optional byte string as a C string (`None`: NULL), cut at a NUL.
fn c_opt(s: Option<&[u8]>) -> Option<CString> {
    s.map(c_bytes)
}

fn ptr_of(s: &Option<CString>) -> *const std::ffi::c_char {
    s.as_ref().map_or(ptr::null(), |s| s.as_ptr())
}

/// Loads the backend library at `path`; `OSError` when it does not load.
#[pyfunction]
pub(crate) fn _nvtxw_load(path: &str) -> PyResult<Backend> {
    // SAFETY: loading a library runs its initializers: the caller chose it.
    let library = unsafe { libloading::Library::new(path) }
        .map_err(|e| PyOSError::new_err(format!("{path}: {e}")))?;
    // SAFETY: the symbol's type is NVTXW's optional `nvtxwFinalize_t`.
    let finalize = unsafe { library.get::<nvtxw::Finalize>(nvtxw::FINALIZE) }
        .ok()
        .map(|f| *f);
    // SAFETY: the symbol's type is NVTXW's `nvtxwGetInterface_t`.
    let get_interface = unsafe { library.get::<nvtxw::GetInterface>(nvtxw::GET_INTERFACE) }
        .ok()
        .map(|f| *f);
    Ok(Backend {
        _library: library,
        get_interface,
        finalize,
        iface: AtomicUsize::new(0),
    })
}

/// An event's color for NVTXW: `None` is 0 (no color given), else a name,
/// `#RRGGBB` or an ARGB int; anything else is a `TypeError` (as NVIDIA's).
#[pyfunction]
pub(crate) fn _nvtxw_color(color: &Bound<'_, PyAny>) -> PyResult<u32> {
    if color.is_none() {
        return Ok(0);
    }
    crate::values::color_value(color).map_err(pyo3::exceptions::PyTypeError::new_err)
}

/// The registration order of `nvtxw3_event_helpers.h`'s event schemas.
const EVENT_SCHEMA_COUNT: usize = EVENT_SCHEMAS.len();

impl Backend {
    fn iface(&self) -> &Interface {
        // `nvtxr.writer` calls nothing before the backend gave its table; a
        // panic here is a Python exception.
        let iface = self.iface.load(Ordering::Acquire);
        assert!(iface != 0, "the backend gave no interface");
        // SAFETY: the table the backend gave, static while it is loaded
        // (it is: `_library` is held).
        unsafe { &*(iface as *const Interface) }
    }
}

/// An address from Python as a handle.
fn h(address: usize) -> *mut c_void {
    address as *mut c_void
}

#[pymethods]
impl Backend {
    /// Asks the backend for the interface this module speaks: its result
    /// code (`NVTXW_RESULT_LIBRARY_SYMBOL_MISSING` without `nvtxwGetInterface`).
    fn get_interface(&self) -> i32 {
        let Some(get) = self.get_interface else {
            return nvtxw::result::LIBRARY_SYMBOL_MISSING;
        };
        let mut iface: *const c_void = ptr::null();
        // SAFETY: the backend's entry point, with a pointer to write its table to.
        let rc = match unsafe { get(nvtxw::INTERFACE_VERSION, &mut iface) } {
            nvtxw::result::SUCCESS if iface.is_null() => nvtxw::result::FAILED,
            rc => rc,
        };
        let given = if rc == nvtxw::result::SUCCESS {
            iface as usize
        } else {
            0
        };
        self.iface.store(given, Ordering::Release);
        rc
    }

    /// Calls the backend's `nvtxwFinalize`, if it has one; its table is
    /// not used again before it gives it again.
    fn finalize(&self) {
        self.iface.store(0, Ordering::Release);
        if let Some(f) = self.finalize {
            // SAFETY: the backend's own cleanup, which takes nothing.
            unsafe { f() }
        }
    }

    #[pyo3(signature = (name, config))]
    fn session_begin(&self, name: Option<&[u8]>, config: Option<&[u8]>) -> (i32, usize) {
        let (name, config) = (c_opt(name), c_opt(config));
        let attributes = nvtxw::SessionAttributes {
            struct_size: std::mem::size_of::<nvtxw::SessionAttributes>(),
            name: ptr_of(&name),
            config_string: ptr_of(&config),
        };
        let mut session = ptr::null_mut();
        // SAFETY: the backend's function, with live attributes.
        let rc = unsafe { (self.iface().session_begin)(&attributes, &mut session) };
        (rc, session as usize)
    }

    fn session_end(&self, session: usize) -> i32 {
        // SAFETY: a session this backend began.
        unsafe { (self.iface().session_end)(h(session)) }
    }

    #[pyo3(signature = (session, name))]
    fn domain_register(&self, session: usize, name: Option<&[u8]>) -> (i32, usize) {
        let name = c_opt(name);
        let attributes = nvtxw::DomainAttributes {
            struct_size: std::mem::size_of::<nvtxw::DomainAttributes>(),
            name: ptr_of(&name),
        };
        let mut domain = ptr::null_mut();
        // SAFETY: as above.
        let rc = unsafe { (self.iface().domain_register)(h(session), &attributes, &mut domain) };
        (rc, domain as usize)
    }

    fn category_register(&self, domain: usize, id: u32, name: &[u8]) -> i32 {
        let name = c_bytes(name);
        // SAFETY: as above.
        unsafe { (self.iface().category_register)(h(domain), id, name.as_ptr()) }
    }

    fn string_register(&self, domain: usize, string: &[u8]) -> (i32, usize) {
        let string = c_bytes(string);
        let mut handle = ptr::null_mut();
        // SAFETY: as above.
        let rc = unsafe { (self.iface().string_register)(h(domain), string.as_ptr(), &mut handle) };
        (rc, handle as usize)
    }

    #[pyo3(signature = (domain, path, parent))]
    fn scope_register(&self, domain: usize, path: Option<&[u8]>, parent: u64) -> (i32, u64) {
        let path = c_opt(path);
        let attributes = ScopeAttr {
            struct_size: std::mem::size_of::<ScopeAttr>(),
            path: ptr_of(&path),
            parent_scope: parent,
            scope_id: 0,
        };
        let mut id = 0;
        // SAFETY: as above.
        let rc = unsafe { (self.iface().scope_register)(h(domain), &attributes, &mut id) };
        (rc, id)
    }

    /// A schema `nvtxr._payloads` describes (see `with_schema`).
    #[pyo3(signature = (domain, kind, static_size, entries, flags=0, semantics=Vec::new()))]
    fn schema_register(
        &self,
        domain: usize,
        kind: u64,
        static_size: usize,
        entries: Vec<(u64, u64, Option<String>, u64, u64)>,
        flags: u64,
        semantics: Vec<Option<Semantics>>,
    ) -> (i32, u64) {
        with_schema(
            kind,
            static_size,
            &entries,
            flags,
            &semantics,
            |attributes| {
                let mut id = 0;
                // SAFETY: as above.
                let rc = unsafe { (self.iface().schema_register)(h(domain), attributes, &mut id) };
                (rc, id)
            },
        )
    }

    /// `nvtxwEventSchemasRegister(..., NVTXW_EVENT_HELPER_SCHEMA_ALL, ...)`:
    /// the event helpers' schemas, in order; their ids.
    fn event_schemas_register(&self, domain: usize) -> (i32, Vec<u64>) {
        let mut ids = Vec::with_capacity(EVENT_SCHEMA_COUNT);
        for schema in &EVENT_SCHEMAS {
            let entries: Vec<SchemaEntry> = schema.entries.iter().map(|e| e.raw()).collect();
            let attributes = SchemaAttr {
                field_mask: schema_field::TYPE
                    | schema_field::FLAGS
                    | schema_field::ENTRIES
                    | schema_field::NUM_ENTRIES
                    | schema_field::STATIC_SIZE,
                name: ptr::null(),
                type_: schema.type_,
                flags: schema.flags,
                entries: entries.as_ptr(),
                num_entries: entries.len(),
                payload_static_size: schema.static_size,
                pack_align: 0,
                schema_id: 0,
                extension: ptr::null(),
            };
            let mut id = 0;
            // SAFETY: as above.
            let rc = unsafe { (self.iface().schema_register)(h(domain), &attributes, &mut id) };
            if rc != nvtxw::result::SUCCESS {
                return (rc, ids);
            }
            ids.push(id);
        }
        (nvtxw::result::SUCCESS, ids)
    }

    #[pyo3(signature = (domain, schema, name, description, scope, semantics))]
    fn counter_register(
        &self,
        domain: usize,
        schema: u64,
        name: &[u8],
        description: Option<&[u8]>,
        scope: u64,
        semantics: Option<Semantics>,
    ) -> (i32, u64) {
        let (name, description) = (c_bytes(name), c_opt(description));
        let unit = semantics.as_ref().and_then(|s| s.1.as_deref().map(c_bytes));
        let semantics = semantics
            .as_ref()
            .map(|s| counter_semantics(s, &unit).to_nvtx());
        let attributes = CounterAttr {
            struct_size: std::mem::size_of::<CounterAttr>(),
            schema_id: schema,
            name: name.as_ptr(),
            description: ptr_of(&description),
            scope_id: scope,
            semantics: semantics.as_ref().map_or(ptr::null(), |s| {
                (&s.header as *const SemanticsHeader).cast()
            }),
            counter_id: 0,
        };
        let mut id = 0;
        // SAFETY: as above.
        let rc = unsafe { (self.iface().counter_register)(h(domain), &attributes, &mut id) };
        (rc, id)
    }

    #[allow(clippy::too_many_arguments)]
    #[pyo3(signature = (session, name, domain, scope, time_domain, interleaving, ordering, skid, skid_amount))]
    fn stream_open(
        &self,
        session: usize,
        name: Option<&[u8]>,
        domain: usize,
        scope: u64,
        time_domain: u64,
        interleaving: i16,
        ordering: i16,
        skid: i32,
        skid_amount: i64,
    ) -> (i32, usize) {
        let name = c_opt(name);
        let attributes = nvtxw::StreamAttributes {
            struct_size: std::mem::size_of::<nvtxw::StreamAttributes>(),
            name: ptr_of(&name),
            domain: h(domain),
            scope_id: scope,
            time_domain_id: time_domain,
            order_interleaving: interleaving,
            ordering_type: ordering,
            ordering_skid: skid,
            ordering_skid_amount: skid_amount,
        };
        let mut stream = ptr::null_mut();
        // SAFETY: as above.
        let rc = unsafe { (self.iface().stream_open)(h(session), &attributes, &mut stream) };
        (rc, stream as usize)
    }

    fn stream_close(&self, stream: usize) -> i32 {
        // SAFETY: a stream this backend opened.
        unsafe { (self.iface().stream_close)(h(stream)) }
    }

    /// One event: its payloads as `(schema id, bytes)`.
    fn event_write(&self, stream: usize, payloads: Vec<(u64, Vec<u8>)>) -> i32 {
        let raw: Vec<PayloadData> = payloads
            .iter()
            .map(|(schema, bytes)| PayloadData {
                schema_id: *schema,
                size: bytes.len(),
                payload: bytes.as_ptr().cast(),
            })
            .collect();
        // SAFETY: as above; the payloads live through the call.
        unsafe { (self.iface().event_write)(h(stream), raw.as_ptr(), raw.len()) }
    }

    fn event_batch_write(
        &self,
        stream: usize,
        schema: u64,
        events: &[u8],
        scope: u64,
        flags: u64,
    ) -> i32 {
        let batch = nvtxw::EventBatch {
            event_schema_id: schema,
            size: events.len(),
            events: events.as_ptr().cast(),
            scope,
            flags,
            flex_data: ptr::null(),
            flex_data_size: 0,
            flex_data_offset: 0,
        };
        // SAFETY: as above.
        unsafe { (self.iface().event_batch_write)(h(stream), &batch) }
    }

    fn counter_write(&self, stream: usize, timestamp: i64, counter: u64, value: &[u8]) -> i32 {
        // SAFETY: as above.
        unsafe {
            (self.iface().counter_write)(
                h(stream),
                timestamp,
                counter,
                value.as_ptr().cast(),
                value.len(),
            )
        }
    }

    fn counter_no_value_write(
        &self,
        stream: usize,
        timestamp: i64,
        counter: u64,
        reason: u8,
    ) -> i32 {
        // SAFETY: as above.
        unsafe { (self.iface().counter_no_value_write)(h(stream), timestamp, counter, reason) }
    }

    #[pyo3(signature = (stream, counter, samples, timestamps, flags))]
    fn counter_batch_write(
        &self,
        stream: usize,
        counter: u64,
        samples: &[u8],
        timestamps: Option<&[u8]>,
        flags: u64,
    ) -> i32 {
        let batch = CounterBatch {
            counter_id: counter,
            counters: samples.as_ptr().cast(),
            counters_size: samples.len(),
            flags,
            timestamps: timestamps.map_or(ptr::null(), |t| t.as_ptr().cast()),
            timestamps_size: timestamps.map_or(0, <[u8]>::len),
        };
        // SAFETY: as above.
        unsafe { (self.iface().counter_batch_write)(h(stream), &batch) }
    }
}
