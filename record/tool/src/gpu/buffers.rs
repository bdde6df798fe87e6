//! CUPTI's activity buffers: handed to CUPTI empty, read back filled (on
//! CUPTI's thread, or at a flush), their records appended to the image's
//! `gpu` file in the recording format's GPU encoding.

use super::cupti::{self, field, offset, Cupti};
use crate::recording;
use nvtxr_record_format::gpu::{
    uuid_text, Activity, ApiCall, Device, GpuRecord, Limits, Peer, Tag, GPU_FILE, GPU_MAGIC,
};
// hashbrown's maps: per record, a name's or thread's lookup with std's
// SipHash was a tenth of the tool's work on a buffer.
use hashbrown::{HashMap, HashSet};
use std::borrow::Cow;
use std::ffi::{c_char, c_void, CStr};
use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, OnceLock};

/// Bytes in each buffer handed to CUPTI (4 MiB lost no record on the
/// PyTorch loop of `cupti-notes.md`).
const BUFFER: usize = 4 << 20;
/// CUPTI wants buffers 8-byte aligned.
const ALIGN: usize = 8;

/// The GPU file and the kernel and thread names already written to it.
struct Output {
    file: std::fs::File,
    names: HashMap<String, u32>,
    /// Each kernel name's id by CUPTI's pointer to it (shared by every
    /// record of the kernel), with the text it pointed to: a record's name
    /// is found without hashing or validating it, and still checked, as
    /// an unloaded module's names may be freed and the memory reused.
    by_pointer: HashMap<usize, (u32, Box<[u8]>)>,
    threads: HashSet<u32>,
    /// A write failed: said once, nothing more written.
    failed: bool,
    /// CUPTI could not hand over a buffer's records: said once.
    lost: bool,
}

static OUTPUT: OnceLock<Mutex<Output>> = OnceLock::new();
/// The buffers lent to CUPTI and not yet handed back, by address (a few:
/// CUPTI fills one per thread or stream at a time). CUPTI hands a buffer
/// back to whichever callbacks are registered then, and another CUPTI
/// client in the program (PyTorch's profiler, Kineto) registers its own
/// (`docs/gpu.md`, "When it cannot").
static LENT: Mutex<Vec<usize>> = Mutex::new(Vec::new());
/// CUPTI handed the tool a buffer it never lent: another client's.
static FOREIGN: AtomicBool = AtomicBool::new(false);
static CUPTI: OnceLock<&'static Cupti> = OnceLock::new();
/// The traced APIs' ids, sorted: the API records kept.
static TRACED: OnceLock<Vec<u64>> = OnceLock::new();

/// Creates the image's GPU file, once: its presence says that the process
/// initialized CUDA (the driver called the tool), whether or not CUPTI
/// then records.
pub fn create() -> Result<(), String> {
    if OUTPUT.get().is_some() {
        return Ok(());
    }
    let mut file = recording::create_file(GPU_FILE)?;
    file.write_all(&GPU_MAGIC)
        .map_err(|e| format!("cannot write the GPU file: {e}"))?;
    let _ = OUTPUT.set(Mutex::new(Output {
        file,
        names: HashMap::new(),
        by_pointer: HashMap::new(),
        threads: Default::default(),
        failed: false,
        lost: false,
    }));
    Ok(())
}

/// Hands CUPTI the buffer callbacks (after [`create`]).
pub fn open(cupti: &'static Cupti) -> Result<(), String> {
    let _ = CUPTI.set(cupti);
    register(cupti)
}

fn register(cupti: &Cupti) -> Result<(), String> {
    // SAFETY: CUPTI's documented call; both callbacks live for good.
    let r = unsafe { (cupti.register_callbacks)(requested, completed) };
    if r != cupti::SUCCESS {
        return Err(cupti.error("cuptiActivityRegisterCallbacks", r));
    }
    Ok(())
}

/// At exit, before the last flush: the tool's callbacks registered again,
/// so that CUPTI hands what it still holds to them, not to another
/// client's, which may be gone by then (a C++ singleton destroyed by the
/// exit handlers that ran before this one).
pub fn reclaim() {
    if let Some(cupti) = CUPTI.get() {
        let _ = register(cupti);
    }
}

/// After the last flush: what another CUPTI client took, when one did (one
/// of its buffers came back here), as a line to say; `None` otherwise. A
/// buffer of the tool's still lent went to it, its records with it.
pub fn taken() -> Option<String> {
    if !FOREIGN.load(Ordering::Relaxed) {
        return None;
    }
    let lent = LENT.lock().unwrap_or_else(|e| e.into_inner()).len();
    let client = "another CUPTI client in the program (PyTorch's profiler, for one) registered its own buffer callbacks";
    Some(match lent {
        0 => format!("{client}: what CUPTI recorded for it instead of the tool is missing"),
        n => format!("{client}, and CUPTI handed it {n} of the tool's buffers: the GPU activity in them, and what CUPTI recorded for it instead, is missing"),
    })
}

/// Writes records to the GPU file (in one `write`).
fn write(records: &[GpuRecord]) {
    let Some(output) = OUTPUT.get() else { return };
    let mut output = output.lock().unwrap_or_else(|e| e.into_inner());
    let mut bytes = Vec::new();
    for r in records {
        r.encode(&mut bytes);
    }
    output.append(&bytes);
}

impl Output {
    fn append(&mut self, bytes: &[u8]) {
        if self.failed {
            return;
        }
        if let Err(e) = self.file.write_all(bytes) {
            self.failed = true;
            crate::say(format_args!(
                "GPU activity not recorded from here on: cannot write the GPU file: {e}"
            ));
        }
    }
}

/// Says how GPU times were placed on CLOCK_MONOTONIC.
pub fn clock(record: GpuRecord) {
    write(&[record]);
}

/// Marks the process's exit: its exit handlers ran (CUPTI was asked for
/// its last records). Not when the file stays locked (a thread stuck
/// writing): the exit goes on.
pub fn exited() {
    let Some(output) = OUTPUT.get() else { return };
    if let Some(mut output) = super::lock_at_exit(output) {
        let mut bytes = Vec::new();
        GpuRecord::Exited.encode(&mut bytes);
        output.append(&bytes);
    }
}

/// Names a traced API.
pub fn name_api(id: u64, name: &str) {
    write(&[GpuRecord::ApiName(id, name.into())]);
}

/// Keeps the API records of these APIs (ids), and no other.
pub fn trace(mut ids: Vec<u64>) {
    ids.sort_unstable();
    let _ = TRACED.set(ids);
}

/// CUPTI asks for an empty buffer.
unsafe extern "C" fn requested(buffer: *mut *mut u8, size: *mut usize, max_records: *mut usize) {
    let layout = std::alloc::Layout::from_size_align(BUFFER, ALIGN).expect("a valid layout");
    // SAFETY: a non-zero size.
    let b = unsafe { std::alloc::alloc(layout) };
    if !b.is_null() {
        LENT.lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(b as usize);
    }
    // SAFETY: CUPTI passes three pointers to fill.
    unsafe {
        *buffer = b;
        *size = if b.is_null() { 0 } else { BUFFER };
        *max_records = 0;
    }
}

/// CUPTI hands a buffer back with `valid` bytes of records.
unsafe extern "C" fn completed(
    context: *mut c_void,
    stream: u32,
    buffer: *mut u8,
    _size: usize,
    valid: usize,
) {
    if buffer.is_null() {
        return;
    }
    // Another client's buffer (handed here after `reclaim`): neither read
    // nor freed, as its memory is its owner's.
    let ours = {
        let mut lent = LENT.lock().unwrap_or_else(|e| e.into_inner());
        let at = lent.iter().position(|b| *b == buffer as usize);
        at.map(|at| lent.swap_remove(at)).is_some()
    };
    if !ours {
        FOREIGN.store(true, Ordering::Relaxed);
        return;
    }
    nvtx_protocol::boundary::guard((), || {
        // SAFETY: a buffer from `requested`, `valid` bytes of it filled by CUPTI.
        unsafe { read(context, stream, buffer, valid) }
    });
    let layout = std::alloc::Layout::from_size_align(BUFFER, ALIGN).expect("a valid layout");
    // SAFETY: allocated by `requested` with this layout, no longer CUPTI's.
    unsafe { std::alloc::dealloc(buffer, layout) };
}

/// Reads a filled buffer's records and appends them to the GPU file.
///
/// CUPTI is called first, with no lock of ours held: a flush on another
/// thread may hold CUPTI's own while it calls back here for the file's.
///
/// # Safety
/// `buffer` holds `valid` bytes of CUPTI activity records.
unsafe fn read(context: *mut c_void, stream: u32, buffer: *mut u8, valid: usize) {
    let (Some(cupti), Some(output)) = (CUPTI.get(), OUTPUT.get()) else {
        return;
    };
    if !super::active() {
        return;
    }
    // A record is 32 bytes or more; most are a kernel's, over 100.
    let mut records = Vec::with_capacity(valid / 64);
    let mut record: *mut u8 = std::ptr::null_mut();
    let end = loop {
        // SAFETY: CUPTI's documented loop over a completed buffer.
        let r = unsafe { (cupti.get_next_record)(buffer, valid, &mut record) };
        if r != cupti::SUCCESS {
            break r;
        }
        records.push(record.cast_const());
    };
    let mut dropped = 0usize;
    // SAFETY: CUPTI's documented call, for the buffer's context and stream.
    if unsafe { (cupti.dropped)(context, stream, &mut dropped) } != cupti::SUCCESS {
        dropped = 0;
    }
    let mut output = output.lock().unwrap_or_else(|e| e.into_inner());
    let mut bytes = Vec::with_capacity(valid / 4);
    for record in records {
        // SAFETY: CUPTI returned a record of its buffer, still ours.
        if let Some(r) = unsafe { decode(record, &mut output, &mut bytes) } {
            r.encode(&mut bytes);
        }
    }
    if end != cupti::ERROR_MAX_LIMIT_REACHED && !std::mem::replace(&mut output.lost, true) {
        crate::say(format_args!(
            "GPU activity records lost: {}; the rest of that buffer is left out (said once)",
            cupti.error("cuptiActivityGetNextRecord", end)
        ));
    }
    if dropped > 0 {
        GpuRecord::Dropped(dropped as u64).encode(&mut bytes);
    }
    output.append(&bytes);
}

/// The GPU record of one CUPTI record (`None` for kinds not kept); a
/// kernel's name is written to `bytes` the first time it is seen.
///
/// # Safety
/// `r` is a CUPTI activity record of the layout its kind has since
/// `cupti::MIN_API_VERSION` (`cupti::offset`).
unsafe fn decode(
    r: *const u8,
    output: &mut Output,
    bytes: &mut Vec<u8>,
) -> Option<GpuRecord<'static>> {
    use offset::*;
    // SAFETY: the caller upholds this function's `# Safety` contract: every
    // offset read is inside the record of that kind.
    unsafe {
        let kind: u32 = field(r, 0);
        let mut a = Activity::default();
        match kind {
            cupti::KIND_KERNEL | cupti::KIND_CONCURRENT_KERNEL => {
                a.tag = Tag::Kernel as u8;
                a.start = field(r, KERNEL_START);
                a.end = field(r, KERNEL_END);
                a.device = field(r, KERNEL_DEVICE);
                a.context = field(r, KERNEL_CONTEXT);
                a.stream = field(r, KERNEL_STREAM);
                a.correlation = field(r, KERNEL_CORRELATION);
                a.grid = field(r, KERNEL_GRID);
                a.block = field(r, KERNEL_BLOCK);
                a.registers = field(r, KERNEL_REGISTERS);
                a.static_shared = field(r, KERNEL_STATIC_SHARED);
                a.dynamic_shared = field(r, KERNEL_DYNAMIC_SHARED);
                let name: *const c_char = field(r, KERNEL_NAME);
                a.name = output.kernel_name(name, bytes);
                a.local_per_thread = field(r, KERNEL_LOCAL_PER_THREAD);
                a.local_total = field(r, KERNEL_LOCAL_TOTAL);
                a.grid_id = field(r, KERNEL_GRID_ID);
                a.shared_executed = field(r, KERNEL_SHARED_EXECUTED);
                a.launch_type = Some(field(r, KERNEL_LAUNCH_TYPE));
                // A `CUpti_FuncShmemLimitConfig`: 0 or 1.
                a.shared_limit = u8::try_from(field::<u32>(r, KERNEL_SHARED_LIMIT)).ok();
                a.graph_node = field(r, KERNEL_GRAPH_NODE);
                a.graph = field(r, KERNEL_GRAPH);
            }
            cupti::KIND_MEMCPY | cupti::KIND_MEMCPY2 => {
                a.tag = Tag::Memcpy as u8;
                a.copy_kind = u32::from(field::<u8>(r, MEMCPY_COPY_KIND));
                a.src_kind = u16::from(field::<u8>(r, MEMCPY_SRC_KIND));
                a.dst_kind = u16::from(field::<u8>(r, MEMCPY_DST_KIND));
                a.bytes = field(r, MEMCPY_BYTES);
                a.start = field(r, MEMCPY_START);
                a.end = field(r, MEMCPY_END);
                a.device = field(r, MEMCPY_DEVICE);
                a.context = field(r, MEMCPY_CONTEXT);
                a.stream = field(r, MEMCPY_STREAM);
                if kind == cupti::KIND_MEMCPY {
                    a.correlation = field(r, MEMCPY_CORRELATION);
                    a.graph_node = field(r, MEMCPY_GRAPH_NODE);
                    a.graph = field(r, MEMCPY_GRAPH);
                } else {
                    a.correlation = field(r, PEER_CORRELATION);
                    a.graph_node = field(r, PEER_GRAPH_NODE);
                    a.graph = field(r, PEER_GRAPH);
                    // Peer-to-peer, as CUPTI's copy kind says.
                    a.peer = Peer {
                        src_device: field(r, PEER_SRC_DEVICE),
                        src_context: field(r, PEER_SRC_CONTEXT),
                        dst_device: field(r, PEER_DST_DEVICE),
                        dst_context: field(r, PEER_DST_CONTEXT),
                    };
                }
            }
            cupti::KIND_MEMSET => {
                a.tag = Tag::Memset as u8;
                a.copy_kind = field(r, MEMSET_VALUE);
                a.bytes = field(r, MEMSET_BYTES);
                a.start = field(r, MEMSET_START);
                a.end = field(r, MEMSET_END);
                a.device = field(r, MEMSET_DEVICE);
                a.context = field(r, MEMSET_CONTEXT);
                a.stream = field(r, MEMSET_STREAM);
                a.correlation = field(r, MEMSET_CORRELATION);
                a.src_kind = field(r, MEMSET_MEMORY_KIND);
                a.graph_node = field(r, MEMSET_GRAPH_NODE);
                a.graph = field(r, MEMSET_GRAPH);
            }
            cupti::KIND_SYNCHRONIZATION => {
                a.tag = Tag::Sync as u8;
                a.sync_type = field(r, SYNC_TYPE);
                a.start = field(r, SYNC_START);
                a.end = field(r, SYNC_END);
                a.correlation = field(r, SYNC_CORRELATION);
                a.context = field(r, SYNC_CONTEXT);
                a.stream = field(r, SYNC_STREAM);
                a.event = field(r, SYNC_EVENT);
            }
            cupti::KIND_CONTEXT => {
                return Some(GpuRecord::Context {
                    context: field(r, CONTEXT_CONTEXT),
                    device: field(r, CONTEXT_DEVICE),
                })
            }
            cupti::KIND_DEVICE => {
                let name: *const c_char = field(r, DEVICE_NAME);
                let name = if name.is_null() {
                    String::new()
                } else {
                    CStr::from_ptr(name).to_string_lossy().into_owned()
                };
                let uuid = uuid_text(&field(r, DEVICE_UUID));
                return Some(GpuRecord::Device(Device {
                    id: field(r, DEVICE_ID),
                    name: name.into(),
                    compute_major: field(r, DEVICE_COMPUTE_MAJOR),
                    compute_minor: field(r, DEVICE_COMPUTE_MINOR),
                    memory: field(r, DEVICE_MEMORY),
                    multiprocessors: field(r, DEVICE_MULTIPROCESSORS),
                    limits: Limits {
                        l2_cache: field(r, DEVICE_L2_CACHE),
                        clock_khz: field(r, DEVICE_CLOCK),
                        threads_per_warp: field(r, DEVICE_THREADS_PER_WARP),
                        threads_per_block: field(r, DEVICE_THREADS_PER_BLOCK),
                        registers_per_block: field(r, DEVICE_REGISTERS_PER_BLOCK),
                        shared_per_block: field(r, DEVICE_SHARED_PER_BLOCK),
                        warps_per_sm: field(r, DEVICE_WARPS_PER_SM),
                        blocks_per_sm: field(r, DEVICE_BLOCKS_PER_SM),
                        shared_per_sm: field(r, DEVICE_SHARED_PER_SM),
                        registers_per_sm: field(r, DEVICE_REGISTERS_PER_SM),
                        constant_memory: field(r, DEVICE_CONSTANT_MEMORY),
                        max_ipc: field(r, DEVICE_MAX_IPC),
                        copy_engines: field(r, DEVICE_COPY_ENGINES),
                        block_dims: field(r, DEVICE_BLOCK_DIMS),
                        grid_dims: field(r, DEVICE_GRID_DIMS),
                    },
                    bus: super::bus::bus_location(&uuid).into(),
                    uuid: uuid.into(),
                    bandwidth_kbs: field(r, DEVICE_BANDWIDTH),
                }));
            }
            cupti::KIND_RUNTIME | cupti::KIND_DRIVER => {
                let domain = match kind {
                    cupti::KIND_RUNTIME => cupti::DOMAIN_RUNTIME,
                    _ => cupti::DOMAIN_DRIVER,
                };
                let api = super::api_id(domain, field(r, API_CBID));
                let traced = TRACED.get().is_some_and(|t| t.binary_search(&api).is_ok());
                let tid: u32 = field(r, API_THREAD);
                if traced {
                    output.thread_name(tid, bytes);
                }
                return traced.then(|| {
                    GpuRecord::Api(ApiCall {
                        api,
                        tid,
                        start: field(r, API_START),
                        end: field(r, API_END),
                        correlation: field(r, API_CORRELATION),
                    })
                });
            }
            _ => return None,
        }
        Some(GpuRecord::Activity(a))
    }
}

impl Output {
    /// Writes to `bytes` the OS's name of thread `tid` of this process, the
    /// first time it makes a traced call (while it lives: usually, as it
    /// launched moments ago).
    fn thread_name(&mut self, tid: u32, bytes: &mut Vec<u8>) {
        if !self.threads.insert(tid) {
            return;
        }
        if let Ok(name) = std::fs::read_to_string(format!("/proc/self/task/{tid}/comm")) {
            GpuRecord::ThreadName(tid, name.trim_end().into()).encode(bytes);
        }
    }

    /// The id of a kernel's name, written to `bytes` when new.
    ///
    /// # Safety
    /// `name` is NULL or NUL-terminated.
    unsafe fn kernel_name(&mut self, name: *const c_char, bytes: &mut Vec<u8>) -> u32 {
        if name.is_null() {
            return self.named("(unnamed kernel)".into(), bytes);
        }
        // SAFETY: the caller upholds this function's `# Safety` contract.
        let text = unsafe { CStr::from_ptr(name) }.to_bytes();
        match self.by_pointer.get(&(name as usize)) {
            Some((id, seen)) if **seen == *text => *id,
            _ => {
                let id = self.named(String::from_utf8_lossy(text), bytes);
                self.by_pointer.insert(name as usize, (id, text.into()));
                id
            }
        }
    }

    /// The id of a kernel's name, written to `bytes` when new.
    fn named(&mut self, text: Cow<str>, bytes: &mut Vec<u8>) -> u32 {
        if let Some(id) = self.names.get(&*text) {
            return *id;
        }
        let id = self.names.len() as u32 + 1;
        GpuRecord::KernelName(id, text.clone()).encode(bytes);
        self.names.insert(text.into_owned(), id);
        id
    }
}
