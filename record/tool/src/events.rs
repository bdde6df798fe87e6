//! Recording an event on the calling thread: the entry points every
//! callback of the tool uses. Each finds the thread's writer (`thread`) and
//! writes through it (`writer`); none lets a panic unwind into the program.

use crate::clock;
use crate::recording;
use crate::text::{Event, Text};
use crate::thread::current;
use nvtx_protocol::boundary::guard_with;
use nvtxr_record_format::Kind;
use std::ffi::c_char;

/// Records one event on the calling thread. Returns, for a push or a pop,
/// the depth NVIDIA's tools return (see `Writer::step_depth`); else 0; -1
/// when the event could not be recorded.
///
/// Runs inside a panic guard: a panic here (a bug) must never unwind into
/// the program that called NVTX; the event is dropped and counted instead.
pub fn record(event: &mut Event) -> i32 {
    guard_with(dropped_by_panic, || record_unguarded(event))
}

/// After a panic while recording (a bug): the event is dropped and counted,
/// and the thread's writer is usable again for its next event.
#[cold]
fn dropped_by_panic() -> i32 {
    if let Some(w) = current() {
        w.busy.set(false);
    }
    recording::count_dropped(1);
    -1
}

/// Records an event that happened earlier, at `timestamp` (a reading of
/// the recording clock, as `nvtxTimestampGet` gives): written with its
/// absolute time, so that it may sit anywhere in its chunk.
pub fn record_at(event: &mut Event, timestamp: u64) -> i32 {
    guard_with(dropped_by_panic, || {
        event.timestamp = timestamp;
        write_on_this_thread(event, true)
    })
}

fn record_unguarded(event: &mut Event) -> i32 {
    event.timestamp = clock::now();
    write_on_this_thread(event, false)
}

/// Writes `event` (its time set) on the calling thread's writer.
fn write_on_this_thread(event: &Event, absolute: bool) -> i32 {
    match current() {
        Some(w) => w
            .exclusive(|w| w.write(event, absolute))
            // A signal handler interrupted this thread mid-record.
            .unwrap_or_else(|| w.set_aside(event)),
        None => {
            recording::count_dropped(1);
            -1
        }
    }
}

/// [`record`] for the commonest events, the fast way: a record with only a
/// kind, a domain, a value and a C string's text (NULL: none), encoded
/// straight from the producer's arguments. Anything the fast way does not
/// cover (a long text, an anchor due, no room, a signal handler's record)
/// goes through `record`.
///
/// # Safety
/// `text` is NULL or NUL-terminated.
#[inline(always)]
pub unsafe fn record_simple(kind: Kind, domain: u64, value: u64, text: *const c_char) -> i32 {
    // One fast way per kind, so that each leaves out what its kind does not
    // need (`kind` is a constant where this is inlined).
    let fast = match kind {
        // SAFETY: the caller upholds this function's `# Safety` contract.
        Kind::Mark => unsafe { record_simple_fast::<MARK>(domain, value, text) },
        // SAFETY: as above.
        Kind::Push => unsafe { record_simple_fast::<PUSH>(domain, value, text) },
        // SAFETY: as above.
        Kind::Pop => unsafe { record_simple_fast::<POP>(domain, value, text) },
        // SAFETY: as above.
        Kind::Start => unsafe { record_simple_fast::<START>(domain, value, text) },
        // SAFETY: as above.
        Kind::End => unsafe { record_simple_fast::<END>(domain, value, text) },
        _ => FAST_DECLINED,
    };
    if fast != FAST_DECLINED {
        return fast;
    }
    // SAFETY: as above.
    unsafe { record_simple_slow(kind, domain, value, text) }
}

const MARK: u8 = Kind::Mark as u8;
const PUSH: u8 = Kind::Push as u8;
const POP: u8 = Kind::Pop as u8;
const START: u8 = Kind::Start as u8;
const END: u8 = Kind::End as u8;

/// [`record_simple`] through [`record`], out of the fast way's way.
///
/// # Safety
/// `text` is NULL or NUL-terminated.
#[cold]
#[inline(never)]
unsafe fn record_simple_slow(kind: Kind, domain: u64, value: u64, text: *const c_char) -> i32 {
    // SAFETY: the caller upholds this function's `# Safety` contract.
    record(&mut Event::simple(kind, domain, value, unsafe {
        Text::from_c(text)
    }))
}

/// What [`record_simple_fast`] returns when it did not record the event.
const FAST_DECLINED: i32 = i32::MIN;

/// The fast way of [`record_simple`]: the result, or [`FAST_DECLINED`].
///
/// `extern "C"`, so it cannot unwind: nothing in it can panic (no
/// indexing, no allocation; sizes stay within the chunk and the depth
/// saturates; the side-buffer append guards itself), so it needs no panic
/// guard, whose closure cost about 20 instructions per event here.
/// Inlined into each tool callback, where the domain and value are often
/// constants (0 for the default domain's push): 161 → 140 instructions per
/// event in the recording benchmark's push/pop loop.
///
/// # Safety
/// `text` is NULL or NUL-terminated.
#[inline(always)]
unsafe extern "C" fn record_simple_fast<const KIND: u8>(
    domain: u64,
    value: u64,
    text: *const c_char,
) -> i32 {
    let Some(kind) = Kind::from_u8(KIND) else {
        return FAST_DECLINED;
    };
    let Some(w) = current() else {
        return FAST_DECLINED;
    };
    // The clock read once the thread's writer is found: one value less to
    // keep across that call.
    let timestamp = clock::now();
    // SAFETY: the caller upholds this function's `# Safety` contract.
    w.exclusive(|w| unsafe { w.write_simple(timestamp, kind, domain, value, text) })
        .flatten()
        .unwrap_or(FAST_DECLINED)
}
