//! The tool's extension modules (`InitializeInjectionNvtxExtension`): the
//! counters module, whose registrations and scalar samples (`int64`,
//! `double`) are recorded like any event, and the payload module (see
//! [`crate::payload`]) and the memory module (see [`crate::memory`]). Other
//! counter calls (samples in a schema's layout, batches, "no value") are not
//! recorded yet: their slots stay empty, and the producer makes them no-ops.

use crate::text::Event;
use crate::writer;
use nvtx_protocol::ext::{self, cbid, CounterAttr, ModuleInfo};
use nvtx_protocol::{attr, Handle};
use nvtxr_record_format::Kind;
use std::ffi::{c_int, c_void};
use std::sync::atomic::{AtomicU64, Ordering};

/// Counter ids the tool gives (the protocol's dynamic ids start at 2^32).
static NEXT_COUNTER: AtomicU64 = AtomicU64::new(1 << 32);

/// `nvtxCounterRegister`: records the counter's name; returns its id (the
/// one asked for, or a new one), 0 for unreadable attributes.
unsafe extern "C" fn counter_register(d: Handle, a: *const c_void) -> u64 {
    // SAFETY: the producer passes NULL or its attributes, with a C string
    // name, and a domain handle this tool made.
    unsafe {
        let Some(a) = a.cast::<CounterAttr>().as_ref() else {
            return 0;
        };
        if a.struct_size < std::mem::size_of::<CounterAttr>() {
            return 0;
        }
        let id = match a.counter_id {
            0 => NEXT_COUNTER.fetch_add(1, Ordering::Relaxed),
            asked => asked,
        };
        writer::record(&mut Event::simple(
            Kind::CounterRegister,
            crate::callbacks::id_of(d),
            id,
            crate::text::Text::from_c(a.name),
        ));
        id
    }
}

fn sample(d: Handle, counter: u64, payload: (u8, u64)) {
    // SAFETY: a domain handle this tool made (or NULL).
    let mut e = Event::simple(
        Kind::CounterSample,
        unsafe { crate::callbacks::id_of(d) },
        counter,
        None,
    );
    e.payload = payload;
    writer::record(&mut e);
}

unsafe extern "C" fn counter_sample_int64(d: Handle, counter: u64, value: i64) {
    sample(d, counter, (attr::PAYLOAD_I64 as u8, value as u64));
}

unsafe extern "C" fn counter_sample_float64(d: Handle, counter: u64, value: f64) {
    sample(d, counter, (attr::PAYLOAD_F64 as u8, value.to_bits()));
}

/// The tool's extension entry point: fills the counters module's slots.
///
/// # Safety
/// Called by a producer, as the protocol says, with its module description.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn InitializeInjectionNvtxExtension(info: *mut ModuleInfo) -> c_int {
    // SAFETY: the producer's description and its one segment, for the
    // duration of the call.
    unsafe {
        let Some(info) = info.as_mut() else { return 0 };
        if !crate::setup() {
            return 0;
        }
        let Some(segment) = info.segments.as_ref() else {
            return 0;
        };
        let functions: Vec<(usize, usize)> = match (info.module_id, info.compat_id) {
            (m, c) if m == ext::COUNTERS.id && c == ext::COUNTERS.compat => vec![
                (
                    cbid::COUNTER_REGISTER,
                    counter_register as *const () as usize,
                ),
                (
                    cbid::COUNTER_SAMPLE_INT64,
                    counter_sample_int64 as *const () as usize,
                ),
                (
                    cbid::COUNTER_SAMPLE_FLOAT64,
                    counter_sample_float64 as *const () as usize,
                ),
            ],
            (m, c) if m == ext::PAYLOAD.id && c == ext::PAYLOAD.compat => {
                crate::payload::functions().to_vec()
            }
            (m, c) if m == ext::MEM.id && c == ext::MEM.compat => {
                crate::memory::functions().to_vec()
            }
            _ => return 0,
        };
        for (cbid, f) in functions {
            if cbid < segment.slot_count {
                *segment.function_slots.add(cbid) = f as isize;
            }
        }
        1
    }
}
