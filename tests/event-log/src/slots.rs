//! The functions the event-log tool writes into the producer's slots.

use crate::format::{attributes, c_str, domain, mark_destroyed, w_str, Domain, Registered};
use crate::objects::*;
use crate::record;
use nvtx_protocol::WChar;
use nvtx_protocol::{slot, EventAttributes, Handle, ToolFunctions, WStr};
use std::cell::RefCell;
use std::collections::HashMap;
use std::ffi::{c_char, c_int, c_void};
use std::sync::atomic::{AtomicU64, Ordering};

type Attr = *const EventAttributes;

static NEXT_RANGE_ID: AtomicU64 = AtomicU64::new(1);

thread_local! {
    /// Push/pop depth per domain handle, per thread.
    static DEPTH: RefCell<HashMap<usize, i32>> = RefCell::new(HashMap::new());
}

fn push_depth(d: *const c_void) -> i32 {
    DEPTH.with(|m| {
        let mut m = m.borrow_mut();
        let depth = m.entry(d as usize).or_insert(0);
        *depth += 1;
        *depth - 1
    })
}

fn pop_depth(d: *const c_void) -> i32 {
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
    // SAFETY: gettid has no preconditions.
    if tid == unsafe { libc::gettid() } as u32 {
        "tid=self".into()
    } else {
        format!("tid={tid}")
    }
}

fn new_domain(name: String) -> Handle {
    Box::into_raw(Box::new(Domain { name })).cast()
}

fn new_string(d: *const c_void, text: String) -> Handle {
    Box::into_raw(Box::new(Registered { domain: d, text })).cast()
}

unsafe fn text(p: *const c_char) -> String {
    // SAFETY: the caller upholds this function's contract (for a slot
    // function, the protocol's: valid arguments of the slot's types).
    unsafe {
        if p.is_null() {
            String::new()
        } else {
            std::ffi::CStr::from_ptr(p).to_string_lossy().into_owned()
        }
    }
}

unsafe fn wtext(p: WStr) -> String {
    // SAFETY: the caller upholds this function's contract (for a slot
    // function, the protocol's: valid arguments of the slot's types).
    unsafe {
        let quoted = w_str(p);
        quoted
            .trim_start_matches("w\"")
            .trim_end_matches('"')
            .to_string()
    }
}

// CORE
unsafe extern "C" fn mark_ex(a: Attr) {
    // SAFETY: the caller upholds this function's contract (for a slot
    // function, the protocol's: valid arguments of the slot's types).
    unsafe {
        record(format!("MarkEx {}", attributes(std::ptr::null(), a)));
    }
}
unsafe extern "C" fn mark_a(m: *const c_char) {
    // SAFETY: the caller upholds this function's contract (for a slot
    // function, the protocol's: valid arguments of the slot's types).
    unsafe {
        record(format!("MarkA {}", c_str(m)));
    }
}
unsafe extern "C" fn mark_w(m: WStr) {
    // SAFETY: the caller upholds this function's contract (for a slot
    // function, the protocol's: valid arguments of the slot's types).
    unsafe {
        record(format!("MarkW {}", w_str(m)));
    }
}
unsafe extern "C" fn range_start_ex(a: Attr) -> u64 {
    // SAFETY: the caller upholds this function's contract (for a slot
    // function, the protocol's: valid arguments of the slot's types).
    unsafe {
        let id = new_range_id();
        record(format!(
            "RangeStartEx {} -> {id}",
            attributes(std::ptr::null(), a)
        ));
        id
    }
}
unsafe extern "C" fn range_start_a(m: *const c_char) -> u64 {
    // SAFETY: the caller upholds this function's contract (for a slot
    // function, the protocol's: valid arguments of the slot's types).
    unsafe {
        let id = new_range_id();
        record(format!("RangeStartA {} -> {id}", c_str(m)));
        id
    }
}
unsafe extern "C" fn range_start_w(m: WStr) -> u64 {
    // SAFETY: the caller upholds this function's contract (for a slot
    // function, the protocol's: valid arguments of the slot's types).
    unsafe {
        let id = new_range_id();
        record(format!("RangeStartW {} -> {id}", w_str(m)));
        id
    }
}
unsafe extern "C" fn range_end(id: u64) {
    record(format!("RangeEnd {id}"));
}
unsafe extern "C" fn range_push_ex(a: Attr) -> c_int {
    // SAFETY: the caller upholds this function's contract (for a slot
    // function, the protocol's: valid arguments of the slot's types).
    unsafe {
        let depth = push_depth(std::ptr::null());
        record(format!(
            "RangePushEx {} -> {depth}",
            attributes(std::ptr::null(), a)
        ));
        depth
    }
}
unsafe extern "C" fn range_push_a(m: *const c_char) -> c_int {
    // SAFETY: the caller upholds this function's contract (for a slot
    // function, the protocol's: valid arguments of the slot's types).
    unsafe {
        let depth = push_depth(std::ptr::null());
        record(format!("RangePushA {} -> {depth}", c_str(m)));
        depth
    }
}
unsafe extern "C" fn range_push_w(m: WStr) -> c_int {
    // SAFETY: the caller upholds this function's contract (for a slot
    // function, the protocol's: valid arguments of the slot's types).
    unsafe {
        let depth = push_depth(std::ptr::null());
        record(format!("RangePushW {} -> {depth}", w_str(m)));
        depth
    }
}
unsafe extern "C" fn range_pop() -> c_int {
    let depth = pop_depth(std::ptr::null());
    record(format!("RangePop -> {depth}"));
    depth
}
unsafe extern "C" fn name_category_a(id: u32, n: *const c_char) {
    // SAFETY: the caller upholds this function's contract (for a slot
    // function, the protocol's: valid arguments of the slot's types).
    unsafe {
        record(format!("NameCategoryA {id} {}", c_str(n)));
    }
}
unsafe extern "C" fn name_category_w(id: u32, n: WStr) {
    // SAFETY: the caller upholds this function's contract (for a slot
    // function, the protocol's: valid arguments of the slot's types).
    unsafe {
        record(format!("NameCategoryW {id} {}", w_str(n)));
    }
}
unsafe extern "C" fn name_os_thread_a(tid: u32, n: *const c_char) {
    // SAFETY: the caller upholds this function's contract (for a slot
    // function, the protocol's: valid arguments of the slot's types).
    unsafe {
        record(format!("NameOsThreadA {} {}", thread(tid), c_str(n)));
    }
}
unsafe extern "C" fn name_os_thread_w(tid: u32, n: WStr) {
    // SAFETY: the caller upholds this function's contract (for a slot
    // function, the protocol's: valid arguments of the slot's types).
    unsafe {
        record(format!("NameOsThreadW {} {}", thread(tid), w_str(n)));
    }
}

// CORE2
unsafe extern "C" fn domain_mark_ex(d: Handle, a: Attr) {
    // SAFETY: the caller upholds this function's contract (for a slot
    // function, the protocol's: valid arguments of the slot's types).
    unsafe {
        record(format!("DomainMarkEx {} {}", domain(d), attributes(d, a)));
    }
}
unsafe extern "C" fn domain_range_start_ex(d: Handle, a: Attr) -> u64 {
    // SAFETY: the caller upholds this function's contract (for a slot
    // function, the protocol's: valid arguments of the slot's types).
    unsafe {
        let id = new_range_id();
        record(format!(
            "DomainRangeStartEx {} {} -> {id}",
            domain(d),
            attributes(d, a)
        ));
        id
    }
}
unsafe extern "C" fn domain_range_end(d: Handle, id: u64) {
    // SAFETY: the caller upholds this function's contract (for a slot
    // function, the protocol's: valid arguments of the slot's types).
    unsafe {
        record(format!("DomainRangeEnd {} {id}", domain(d)));
    }
}
unsafe extern "C" fn domain_range_push_ex(d: Handle, a: Attr) -> c_int {
    // SAFETY: the caller upholds this function's contract (for a slot
    // function, the protocol's: valid arguments of the slot's types).
    unsafe {
        let depth = push_depth(d);
        record(format!(
            "DomainRangePushEx {} {} -> {depth}",
            domain(d),
            attributes(d, a)
        ));
        depth
    }
}
unsafe extern "C" fn domain_range_pop(d: Handle) -> c_int {
    // SAFETY: the caller upholds this function's contract (for a slot
    // function, the protocol's: valid arguments of the slot's types).
    unsafe {
        let depth = pop_depth(d);
        record(format!("DomainRangePop {} -> {depth}", domain(d)));
        depth
    }
}
unsafe extern "C" fn domain_name_category_a(d: Handle, id: u32, n: *const c_char) {
    // SAFETY: the caller upholds this function's contract (for a slot
    // function, the protocol's: valid arguments of the slot's types).
    unsafe {
        record(format!(
            "DomainNameCategoryA {} {id} {}",
            domain(d),
            c_str(n)
        ));
    }
}
unsafe extern "C" fn domain_name_category_w(d: Handle, id: u32, n: WStr) {
    // SAFETY: the caller upholds this function's contract (for a slot
    // function, the protocol's: valid arguments of the slot's types).
    unsafe {
        record(format!(
            "DomainNameCategoryW {} {id} {}",
            domain(d),
            w_str(n)
        ));
    }
}
unsafe extern "C" fn domain_register_string_a(d: Handle, s: *const c_char) -> Handle {
    // SAFETY: the caller upholds this function's contract (for a slot
    // function, the protocol's: valid arguments of the slot's types).
    unsafe {
        record(format!("DomainRegisterStringA {} {}", domain(d), c_str(s)));
        new_string(d, text(s))
    }
}
unsafe extern "C" fn domain_register_string_w(d: Handle, s: WStr) -> Handle {
    // SAFETY: the caller upholds this function's contract (for a slot
    // function, the protocol's: valid arguments of the slot's types).
    unsafe {
        record(format!("DomainRegisterStringW {} {}", domain(d), w_str(s)));
        new_string(d, wtext(s))
    }
}
unsafe extern "C" fn domain_create_a(n: *const c_char) -> Handle {
    // SAFETY: the caller upholds this function's contract (for a slot
    // function, the protocol's: valid arguments of the slot's types).
    unsafe {
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
}
unsafe extern "C" fn domain_create_w(n: WStr) -> Handle {
    // SAFETY: the caller upholds this function's contract (for a slot
    // function, the protocol's: valid arguments of the slot's types).
    unsafe {
        record(format!("DomainCreateW {}", w_str(n)));
        new_domain(wtext(n))
    }
}
unsafe extern "C" fn domain_destroy(d: Handle) {
    // SAFETY: the caller upholds this function's contract (for a slot
    // function, the protocol's: valid arguments of the slot's types).
    unsafe {
        record(format!("DomainDestroy {}", domain(d)));
        if !d.is_null() {
            mark_destroyed(d);
        }
    }
}
unsafe extern "C" fn initialize(_reserved: *const c_void) {
    record("Initialize".into());
}

// CUDA and CUDART naming.
macro_rules! name_fns {
    ($($f:ident: $label:literal, $id:ty, $str:ty, $show:ident;)*) => {$(
        unsafe extern "C" fn $f(id: $id, n: *const $str) {
            // SAFETY: the caller upholds this function's contract (for a slot
            // function, the protocol's: valid arguments of the slot's types).
            unsafe {
                record(format!(concat!($label, " {:?} {}"), id, $show(n)));

            }
        }
    )*};
}
name_fns! {
    name_cu_device_a: "NameCuDeviceA", c_int, c_char, c_str;
    name_cu_device_w: "NameCuDeviceW", c_int, WChar, w_str;
    name_cu_context_a: "NameCuContextA", Handle, c_char, c_str;
    name_cu_context_w: "NameCuContextW", Handle, WChar, w_str;
    name_cu_stream_a: "NameCuStreamA", Handle, c_char, c_str;
    name_cu_stream_w: "NameCuStreamW", Handle, WChar, w_str;
    name_cu_event_a: "NameCuEventA", Handle, c_char, c_str;
    name_cu_event_w: "NameCuEventW", Handle, WChar, w_str;
    name_cuda_device_a: "NameCudaDeviceA", c_int, c_char, c_str;
    name_cuda_device_w: "NameCudaDeviceW", c_int, WChar, w_str;
    name_cuda_stream_a: "NameCudaStreamA", Handle, c_char, c_str;
    name_cuda_stream_w: "NameCudaStreamW", Handle, WChar, w_str;
    name_cuda_event_a: "NameCudaEventA", Handle, c_char, c_str;
    name_cuda_event_w: "NameCudaEventW", Handle, WChar, w_str;
    name_cl_device_a: "NameClDeviceA", Handle, c_char, c_str;
    name_cl_device_w: "NameClDeviceW", Handle, WChar, w_str;
    name_cl_context_a: "NameClContextA", Handle, c_char, c_str;
    name_cl_context_w: "NameClContextW", Handle, WChar, w_str;
    name_cl_command_queue_a: "NameClCommandQueueA", Handle, c_char, c_str;
    name_cl_command_queue_w: "NameClCommandQueueW", Handle, WChar, w_str;
    name_cl_mem_object_a: "NameClMemObjectA", Handle, c_char, c_str;
    name_cl_mem_object_w: "NameClMemObjectW", Handle, WChar, w_str;
    name_cl_sampler_a: "NameClSamplerA", Handle, c_char, c_str;
    name_cl_sampler_w: "NameClSamplerW", Handle, WChar, w_str;
    name_cl_program_a: "NameClProgramA", Handle, c_char, c_str;
    name_cl_program_w: "NameClProgramW", Handle, WChar, w_str;
    name_cl_event_a: "NameClEventA", Handle, c_char, c_str;
    name_cl_event_w: "NameClEventW", Handle, WChar, w_str;
}

/// The logging functions, for every slot.
pub fn functions() -> ToolFunctions {
    let mut f = domain_functions();
    f.set(slot::MARK_EX, mark_ex)
        .set(slot::MARK_A, mark_a)
        .set(slot::MARK_W, mark_w)
        .set(slot::RANGE_START_EX, range_start_ex)
        .set(slot::RANGE_START_A, range_start_a)
        .set(slot::RANGE_START_W, range_start_w)
        .set(slot::RANGE_END, range_end)
        .set(slot::RANGE_PUSH_EX, range_push_ex)
        .set(slot::RANGE_PUSH_A, range_push_a)
        .set(slot::RANGE_PUSH_W, range_push_w)
        .set(slot::RANGE_POP, range_pop)
        .set(slot::NAME_CATEGORY_A, name_category_a)
        .set(slot::NAME_CATEGORY_W, name_category_w)
        .set(slot::NAME_OS_THREAD_A, name_os_thread_a)
        .set(slot::NAME_OS_THREAD_W, name_os_thread_w)
        .set(slot::INITIALIZE, initialize)
        .set(slot::NAME_CU_DEVICE_A, name_cu_device_a)
        .set(slot::NAME_CU_DEVICE_W, name_cu_device_w)
        .set(slot::NAME_CU_CONTEXT_A, name_cu_context_a)
        .set(slot::NAME_CU_CONTEXT_W, name_cu_context_w)
        .set(slot::NAME_CU_STREAM_A, name_cu_stream_a)
        .set(slot::NAME_CU_STREAM_W, name_cu_stream_w)
        .set(slot::NAME_CU_EVENT_A, name_cu_event_a)
        .set(slot::NAME_CU_EVENT_W, name_cu_event_w)
        .set(slot::NAME_CUDA_DEVICE_A, name_cuda_device_a)
        .set(slot::NAME_CUDA_DEVICE_W, name_cuda_device_w)
        .set(slot::NAME_CUDA_STREAM_A, name_cuda_stream_a)
        .set(slot::NAME_CUDA_STREAM_W, name_cuda_stream_w)
        .set(slot::NAME_CUDA_EVENT_A, name_cuda_event_a)
        .set(slot::NAME_CUDA_EVENT_W, name_cuda_event_w)
        .set(slot::NAME_CL_DEVICE_A, name_cl_device_a)
        .set(slot::NAME_CL_DEVICE_W, name_cl_device_w)
        .set(slot::NAME_CL_CONTEXT_A, name_cl_context_a)
        .set(slot::NAME_CL_CONTEXT_W, name_cl_context_w)
        .set(slot::NAME_CL_COMMAND_QUEUE_A, name_cl_command_queue_a)
        .set(slot::NAME_CL_COMMAND_QUEUE_W, name_cl_command_queue_w)
        .set(slot::NAME_CL_MEM_OBJECT_A, name_cl_mem_object_a)
        .set(slot::NAME_CL_MEM_OBJECT_W, name_cl_mem_object_w)
        .set(slot::NAME_CL_SAMPLER_A, name_cl_sampler_a)
        .set(slot::NAME_CL_SAMPLER_W, name_cl_sampler_w)
        .set(slot::NAME_CL_PROGRAM_A, name_cl_program_a)
        .set(slot::NAME_CL_PROGRAM_W, name_cl_program_w)
        .set(slot::NAME_CL_EVENT_A, name_cl_event_a)
        .set(slot::NAME_CL_EVENT_W, name_cl_event_w)
        .set(slot::SYNC_USER_CREATE, sync_user_create)
        .set(slot::SYNC_USER_DESTROY, sync_user_destroy)
        .set(slot::SYNC_USER_ACQUIRE_START, sync_user_acquire_start)
        .set(slot::SYNC_USER_ACQUIRE_FAILED, sync_user_acquire_failed)
        .set(slot::SYNC_USER_ACQUIRE_SUCCESS, sync_user_acquire_success)
        .set(slot::SYNC_USER_RELEASING, sync_user_releasing);
    f
}

/// The logging functions for the CORE2 (domain) module's slots only, but
/// `nvtxInitialize`: what a tool that ignores the default domain's `...A`
/// and `...Ex` calls installs (the `domains-only` mode).
pub fn domain_functions() -> ToolFunctions {
    let mut f = ToolFunctions::new();
    f.set(slot::DOMAIN_MARK_EX, domain_mark_ex)
        .set(slot::DOMAIN_RANGE_START_EX, domain_range_start_ex)
        .set(slot::DOMAIN_RANGE_END, domain_range_end)
        .set(slot::DOMAIN_RANGE_PUSH_EX, domain_range_push_ex)
        .set(slot::DOMAIN_RANGE_POP, domain_range_pop)
        .set(slot::DOMAIN_RESOURCE_CREATE, domain_resource_create)
        .set(slot::DOMAIN_RESOURCE_DESTROY, domain_resource_destroy)
        .set(slot::DOMAIN_NAME_CATEGORY_A, domain_name_category_a)
        .set(slot::DOMAIN_NAME_CATEGORY_W, domain_name_category_w)
        .set(slot::DOMAIN_REGISTER_STRING_A, domain_register_string_a)
        .set(slot::DOMAIN_REGISTER_STRING_W, domain_register_string_w)
        .set(slot::DOMAIN_CREATE_A, domain_create_a)
        .set(slot::DOMAIN_CREATE_W, domain_create_w)
        .set(slot::DOMAIN_DESTROY, domain_destroy);
    f
}
