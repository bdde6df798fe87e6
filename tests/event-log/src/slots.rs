//! The functions the event-log tool writes into the producer's slots.

use crate::format::{attributes, c_str, domain, w_str, Domain, Registered};
use crate::record;
use nvtx_protocol::{
    fill_slots, module, EventAttributes, ResourceAttributes, Slot, SyncUserAttributes,
};
use std::cell::RefCell;
use std::collections::HashMap;
use std::ffi::{c_char, c_int, c_uint, c_void};
use std::sync::atomic::{AtomicU64, Ordering};

type Attr = *const EventAttributes;
type Handle = *const c_void;

static NEXT_RANGE_ID: AtomicU64 = AtomicU64::new(1);

thread_local! {
    /// Push/pop depth per domain handle, per thread.
    static DEPTH: RefCell<HashMap<usize, i32>> = RefCell::new(HashMap::new());
}

fn push_depth(d: Handle) -> i32 {
    DEPTH.with(|m| {
        let mut m = m.borrow_mut();
        let depth = m.entry(d as usize).or_insert(0);
        *depth += 1;
        *depth - 1
    })
}

fn pop_depth(d: Handle) -> i32 {
    DEPTH.with(|m| {
        let mut m = m.borrow_mut();
        let depth = m.entry(d as usize).or_insert(0);
        if *depth == 0 {
            return -1; // unbalanced pop
        }
        *depth -= 1;
        *depth
    })
}

fn new_range_id() -> u64 {
    NEXT_RANGE_ID.fetch_add(1, Ordering::Relaxed)
}

fn thread(tid: u32) -> String {
    if tid == unsafe { libc::gettid() } as u32 {
        "tid=self".into()
    } else {
        format!("tid={tid}")
    }
}

fn new_domain(name: String) -> Handle {
    Box::into_raw(Box::new(Domain { name })).cast()
}

fn new_string(d: Handle, text: String) -> Handle {
    Box::into_raw(Box::new(Registered { domain: d, text })).cast()
}

unsafe fn text(p: *const c_char) -> String {
    if p.is_null() {
        String::new()
    } else {
        std::ffi::CStr::from_ptr(p).to_string_lossy().into_owned()
    }
}

unsafe fn wtext(p: *const u32) -> String {
    let quoted = w_str(p);
    quoted
        .trim_start_matches("w\"")
        .trim_end_matches('"')
        .to_string()
}

// CORE
unsafe extern "C" fn mark_ex(a: Attr) {
    record(format!("MarkEx {}", attributes(std::ptr::null(), a)));
}
unsafe extern "C" fn mark_a(m: *const c_char) {
    record(format!("MarkA {}", c_str(m)));
}
unsafe extern "C" fn mark_w(m: *const u32) {
    record(format!("MarkW {}", w_str(m)));
}
unsafe extern "C" fn range_start_ex(a: Attr) -> u64 {
    let id = new_range_id();
    record(format!(
        "RangeStartEx {} -> {id}",
        attributes(std::ptr::null(), a)
    ));
    id
}
unsafe extern "C" fn range_start_a(m: *const c_char) -> u64 {
    let id = new_range_id();
    record(format!("RangeStartA {} -> {id}", c_str(m)));
    id
}
unsafe extern "C" fn range_start_w(m: *const u32) -> u64 {
    let id = new_range_id();
    record(format!("RangeStartW {} -> {id}", w_str(m)));
    id
}
unsafe extern "C" fn range_end(id: u64) {
    record(format!("RangeEnd {id}"));
}
unsafe extern "C" fn range_push_ex(a: Attr) -> c_int {
    let depth = push_depth(std::ptr::null());
    record(format!(
        "RangePushEx {} -> {depth}",
        attributes(std::ptr::null(), a)
    ));
    depth
}
unsafe extern "C" fn range_push_a(m: *const c_char) -> c_int {
    let depth = push_depth(std::ptr::null());
    record(format!("RangePushA {} -> {depth}", c_str(m)));
    depth
}
unsafe extern "C" fn range_push_w(m: *const u32) -> c_int {
    let depth = push_depth(std::ptr::null());
    record(format!("RangePushW {} -> {depth}", w_str(m)));
    depth
}
unsafe extern "C" fn range_pop() -> c_int {
    let depth = pop_depth(std::ptr::null());
    record(format!("RangePop -> {depth}"));
    depth
}
unsafe extern "C" fn name_category_a(id: u32, n: *const c_char) {
    record(format!("NameCategoryA {id} {}", c_str(n)));
}
unsafe extern "C" fn name_category_w(id: u32, n: *const u32) {
    record(format!("NameCategoryW {id} {}", w_str(n)));
}
unsafe extern "C" fn name_os_thread_a(tid: u32, n: *const c_char) {
    record(format!("NameOsThreadA {} {}", thread(tid), c_str(n)));
}
unsafe extern "C" fn name_os_thread_w(tid: u32, n: *const u32) {
    record(format!("NameOsThreadW {} {}", thread(tid), w_str(n)));
}

// CORE2
unsafe extern "C" fn domain_mark_ex(d: Handle, a: Attr) {
    record(format!("DomainMarkEx {} {}", domain(d), attributes(d, a)));
}
unsafe extern "C" fn domain_range_start_ex(d: Handle, a: Attr) -> u64 {
    let id = new_range_id();
    record(format!(
        "DomainRangeStartEx {} {} -> {id}",
        domain(d),
        attributes(d, a)
    ));
    id
}
unsafe extern "C" fn domain_range_end(d: Handle, id: u64) {
    record(format!("DomainRangeEnd {} {id}", domain(d)));
}
unsafe extern "C" fn domain_range_push_ex(d: Handle, a: Attr) -> c_int {
    let depth = push_depth(d);
    record(format!(
        "DomainRangePushEx {} {} -> {depth}",
        domain(d),
        attributes(d, a)
    ));
    depth
}
unsafe extern "C" fn domain_range_pop(d: Handle) -> c_int {
    let depth = pop_depth(d);
    record(format!("DomainRangePop {} -> {depth}", domain(d)));
    depth
}
/// A message of type ascii (1) or unicode (2), quoted.
unsafe fn message(message_type: i32, p: *const c_void) -> String {
    match message_type {
        1 => c_str(p.cast()),
        2 => w_str(p.cast()),
        t => format!("msgtype={t}"),
    }
}

/// A resource or sync-object handle: a leaked box with its description.
fn new_object(description: String) -> Handle {
    Box::into_raw(Box::new(description)).cast()
}

unsafe fn object(h: Handle) -> String {
    if h.is_null() {
        "NULL".into()
    } else {
        (*h.cast::<String>()).clone()
    }
}

unsafe extern "C" fn domain_resource_create(d: Handle, attr: *const ResourceAttributes) -> Handle {
    let a = &*attr;
    let description = format!(
        "{{type=0x{:x} id=0x{:x} msg={} version={} size={}}}",
        a.identifier_type,
        a.identifier,
        message(a.message_type, a.message),
        a.version,
        a.size
    );
    record(format!("DomainResourceCreate {} {description}", domain(d)));
    new_object(description)
}
unsafe extern "C" fn domain_resource_destroy(r: Handle) {
    record(format!("DomainResourceDestroy {}", object(r)));
}

// SYNC
unsafe extern "C" fn sync_user_create(d: Handle, attr: *const SyncUserAttributes) -> Handle {
    let a = &*attr;
    let description = format!(
        "{{msg={} version={} size={}}}",
        message(a.message_type, a.message),
        a.version,
        a.size
    );
    record(format!("DomainSyncUserCreate {} {description}", domain(d)));
    new_object(description)
}
macro_rules! sync_fns {
    ($($f:ident: $label:literal;)*) => {$(
        unsafe extern "C" fn $f(h: Handle) {
            record(format!(concat!($label, " {}"), object(h)));
        }
    )*};
}
sync_fns! {
    sync_user_destroy: "DomainSyncUserDestroy";
    sync_user_acquire_start: "DomainSyncUserAcquireStart";
    sync_user_acquire_failed: "DomainSyncUserAcquireFailed";
    sync_user_acquire_success: "DomainSyncUserAcquireSuccess";
    sync_user_releasing: "DomainSyncUserReleasing";
}
unsafe extern "C" fn domain_name_category_a(d: Handle, id: u32, n: *const c_char) {
    record(format!(
        "DomainNameCategoryA {} {id} {}",
        domain(d),
        c_str(n)
    ));
}
unsafe extern "C" fn domain_name_category_w(d: Handle, id: u32, n: *const u32) {
    record(format!(
        "DomainNameCategoryW {} {id} {}",
        domain(d),
        w_str(n)
    ));
}
unsafe extern "C" fn domain_register_string_a(d: Handle, s: *const c_char) -> Handle {
    record(format!("DomainRegisterStringA {} {}", domain(d), c_str(s)));
    new_string(d, text(s))
}
unsafe extern "C" fn domain_register_string_w(d: Handle, s: *const u32) -> Handle {
    record(format!("DomainRegisterStringW {} {}", domain(d), w_str(s)));
    new_string(d, wtext(s))
}
unsafe extern "C" fn domain_create_a(n: *const c_char) -> Handle {
    let mode = std::env::var("NVTXR_EVENT_LOG_MODE").unwrap_or_default();
    if mode == "slow-domain" {
        std::thread::sleep(std::time::Duration::from_millis(500));
    }
    record(format!("DomainCreateA {}", c_str(n)));
    if mode == "hostile-callbacks" && text(n) != "nested" {
        crate::hostile_callback();
    }
    new_domain(text(n))
}
unsafe extern "C" fn domain_create_w(n: *const u32) -> Handle {
    record(format!("DomainCreateW {}", w_str(n)));
    new_domain(wtext(n))
}
/// Domain handles the producer destroyed (a tool that frees them would have).
static DESTROYED: std::sync::Mutex<Vec<usize>> = std::sync::Mutex::new(Vec::new());

/// Whether `d` was destroyed (handles are never freed, so never reused).
pub(crate) fn was_destroyed(d: Handle) -> bool {
    DESTROYED
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .contains(&(d as usize))
}

unsafe extern "C" fn domain_destroy(d: Handle) {
    record(format!("DomainDestroy {}", domain(d)));
    if !d.is_null() {
        DESTROYED
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(d as usize);
    }
}
unsafe extern "C" fn initialize(_reserved: *const c_void) {
    record("Initialize".into());
}

// CUDA and CUDART naming.
macro_rules! name_fns {
    ($($f:ident: $label:literal, $id:ty, $str:ty, $show:ident;)*) => {$(
        unsafe extern "C" fn $f(id: $id, n: *const $str) {
            record(format!(concat!($label, " {:?} {}"), id, $show(n)));
        }
    )*};
}
name_fns! {
    name_cu_device_a: "NameCuDeviceA", c_int, c_char, c_str;
    name_cu_device_w: "NameCuDeviceW", c_int, u32, w_str;
    name_cu_context_a: "NameCuContextA", Handle, c_char, c_str;
    name_cu_context_w: "NameCuContextW", Handle, u32, w_str;
    name_cu_stream_a: "NameCuStreamA", Handle, c_char, c_str;
    name_cu_stream_w: "NameCuStreamW", Handle, u32, w_str;
    name_cu_event_a: "NameCuEventA", Handle, c_char, c_str;
    name_cu_event_w: "NameCuEventW", Handle, u32, w_str;
    name_cuda_device_a: "NameCudaDeviceA", c_int, c_char, c_str;
    name_cuda_device_w: "NameCudaDeviceW", c_int, u32, w_str;
    name_cuda_stream_a: "NameCudaStreamA", Handle, c_char, c_str;
    name_cuda_stream_w: "NameCudaStreamW", Handle, u32, w_str;
    name_cuda_event_a: "NameCudaEventA", Handle, c_char, c_str;
    name_cuda_event_w: "NameCudaEventW", Handle, u32, w_str;
    name_cl_device_a: "NameClDeviceA", Handle, c_char, c_str;
    name_cl_device_w: "NameClDeviceW", Handle, u32, w_str;
    name_cl_context_a: "NameClContextA", Handle, c_char, c_str;
    name_cl_context_w: "NameClContextW", Handle, u32, w_str;
    name_cl_command_queue_a: "NameClCommandQueueA", Handle, c_char, c_str;
    name_cl_command_queue_w: "NameClCommandQueueW", Handle, u32, w_str;
    name_cl_mem_object_a: "NameClMemObjectA", Handle, c_char, c_str;
    name_cl_mem_object_w: "NameClMemObjectW", Handle, u32, w_str;
    name_cl_sampler_a: "NameClSamplerA", Handle, c_char, c_str;
    name_cl_sampler_w: "NameClSamplerW", Handle, u32, w_str;
    name_cl_program_a: "NameClProgramA", Handle, c_char, c_str;
    name_cl_program_w: "NameClProgramW", Handle, u32, w_str;
    name_cl_event_a: "NameClEventA", Handle, c_char, c_str;
    name_cl_event_w: "NameClEventW", Handle, u32, w_str;
}

/// Fills a module's slots with the recording functions.
///
/// # Safety
/// `table` is a valid table of the module's size.
pub unsafe fn fill(module_id: c_int, table: *mut *mut Slot, size: c_uint) {
    let fns: &[Slot] = match module_id {
        module::CORE => &[
            mark_ex as _,
            mark_a as _,
            mark_w as _,
            range_start_ex as _,
            range_start_a as _,
            range_start_w as _,
            range_end as _,
            range_push_ex as _,
            range_push_a as _,
            range_push_w as _,
            range_pop as _,
            name_category_a as _,
            name_category_w as _,
            name_os_thread_a as _,
            name_os_thread_w as _,
        ],
        module::CUDA => &[
            name_cu_device_a as _,
            name_cu_device_w as _,
            name_cu_context_a as _,
            name_cu_context_w as _,
            name_cu_stream_a as _,
            name_cu_stream_w as _,
            name_cu_event_a as _,
            name_cu_event_w as _,
        ],
        module::OPENCL => &[
            name_cl_device_a as _,
            name_cl_device_w as _,
            name_cl_context_a as _,
            name_cl_context_w as _,
            name_cl_command_queue_a as _,
            name_cl_command_queue_w as _,
            name_cl_mem_object_a as _,
            name_cl_mem_object_w as _,
            name_cl_sampler_a as _,
            name_cl_sampler_w as _,
            name_cl_program_a as _,
            name_cl_program_w as _,
            name_cl_event_a as _,
            name_cl_event_w as _,
        ],
        module::SYNC => &[
            sync_user_create as _,
            sync_user_destroy as _,
            sync_user_acquire_start as _,
            sync_user_acquire_failed as _,
            sync_user_acquire_success as _,
            sync_user_releasing as _,
        ],
        module::CUDART => &[
            name_cuda_device_a as _,
            name_cuda_device_w as _,
            name_cuda_stream_a as _,
            name_cuda_stream_w as _,
            name_cuda_event_a as _,
            name_cuda_event_w as _,
        ],
        module::CORE2 => &[
            domain_mark_ex as _,
            domain_range_start_ex as _,
            domain_range_end as _,
            domain_range_push_ex as _,
            domain_range_pop as _,
            domain_resource_create as _,
            domain_resource_destroy as _,
            domain_name_category_a as _,
            domain_name_category_w as _,
            domain_register_string_a as _,
            domain_register_string_w as _,
            domain_create_a as _,
            domain_create_w as _,
            domain_destroy as _,
            initialize as _,
        ],
        _ => &[],
    };
    fill_slots(table, size, fns);
}

// The do-nothing tool: slots filled, nothing recorded.
unsafe extern "C" fn null_void_1(_: usize) {}
unsafe extern "C" fn null_void_2(_: usize, _: usize) {}
unsafe extern "C" fn null_int_0() -> c_int {
    0
}
unsafe extern "C" fn null_int_1(_: usize) -> c_int {
    0
}
unsafe extern "C" fn null_int_2(_: usize, _: usize) -> c_int {
    0
}
unsafe extern "C" fn null_u64_1(_: usize) -> u64 {
    1
}
unsafe extern "C" fn null_u64_2(_: usize, _: usize) -> u64 {
    1
}
unsafe extern "C" fn null_handle_1(_: usize) -> usize {
    1
}
unsafe extern "C" fn null_handle_2(_: usize, _: usize) -> usize {
    1
}

/// Fills CORE and CORE2 with do-nothing functions of matching shapes.
///
/// # Safety
/// `table` is a valid table of the module's size.
pub unsafe fn fill_null(module_id: c_int, table: *mut *mut Slot, size: c_uint) {
    let fns: &[Slot] = match module_id {
        module::CORE => &[
            null_void_1 as _,
            null_void_1 as _,
            null_void_1 as _,
            null_u64_1 as _,
            null_u64_1 as _,
            null_u64_1 as _,
            null_void_1 as _,
            null_int_1 as _,
            null_int_1 as _,
            null_int_1 as _,
            null_int_0 as _,
            null_void_2 as _,
            null_void_2 as _,
            null_void_2 as _,
            null_void_2 as _,
        ],
        module::CORE2 => &[
            null_void_2 as _,
            null_u64_2 as _,
            null_void_2 as _,
            null_int_2 as _,
            null_int_1 as _,
            null_handle_2 as _,
            null_void_1 as _,
            null_void_2 as _,
            null_void_2 as _,
            null_handle_2 as _,
            null_handle_2 as _,
            null_handle_1 as _,
            null_handle_1 as _,
            null_void_1 as _,
            null_void_1 as _,
        ],
        _ => &[],
    };
    fill_slots(table, size, fns);
}
