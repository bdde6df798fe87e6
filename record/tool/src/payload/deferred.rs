//! Deferred events (`nvtxEventSubmit`, `nvtxEventBatchSubmit`): events a
//! producer took the times of earlier and submits afterwards, each a
//! payload whose timestamp entries say when (a range's begin and end, or a
//! mark's time). They are recorded at those times, on the submitting
//! thread: a range as a start/end range, a mark as a mark; the other
//! fields as the event's fields.
//!
//! Timestamps are read in the tool's time domain (`nvtxTimestampGet`, the
//! recording clock: exact), in CLOCK_MONOTONIC ns, in time-stamp counter
//! ticks, or in a registered time domain placed through its sync points,
//! conversion factors or timer source (see [`time`]). One that cannot be
//! placed is recorded when it is submitted, with a `timestamp error` field
//! saying why.

use super::decode::{decode, Decoded, Time};
use super::schema::{self, Definition};
use super::time;
use crate::clock;
use crate::events;
use crate::handles::{id_of, next_id};
use crate::text::{Event, Text, MAX_TEXT};
use nvtx_protocol::boundary::guard;
use nvtx_protocol::payload::{entry_flag, schema_type, EventBatch, PayloadData};
use nvtx_protocol::Handle;
use nvtxr_record_format::Kind;
use serde_json::Value;
use std::ffi::c_void;

/// The most events of one batch recorded.
const MAX_BATCH: usize = 1 << 20;

/// `nvtxTimestampGet`: a reading of the recording clock.
pub(super) unsafe extern "C" fn timestamp_get() -> i64 {
    clock::now() as i64
}

/// A timestamp on the recording clock; `Err` for one that cannot be placed.
fn to_clock(t: &Time) -> Result<u64, String> {
    time::to_clock(t.domain, t.value)
}

/// Records one decoded deferred event of domain `domain`.
fn submit(domain: u64, mut decoded: Decoded) {
    let time = |role: u64| decoded.times.iter().find(|t| t.role == role).copied();
    let begin = time(entry_flag::RANGE_BEGIN);
    let end = time(entry_flag::RANGE_END);
    let at = time(entry_flag::MARK).or_else(|| time(0));
    let converted = match (begin, end, at) {
        (Some(b), Some(e), _) => to_clock(&b).and_then(|b| Ok((b, Some(to_clock(&e)?)))),
        (_, _, Some(m)) => to_clock(&m).map(|m| (m, None)),
        _ => Err("no timestamp entry".to_string()),
    };
    let times = converted.unwrap_or_else(|why| {
        decoded
            .fields
            .insert("timestamp error".into(), Value::String(why));
        (clock::now(), None)
    });
    let mut json = Value::Object(decoded.fields).to_string();
    if json.len() > MAX_TEXT {
        json = r#"{"payload error":"fields past the longest text"}"#.to_string();
    }
    let text = decoded.message.map(Text::Owned);
    match times {
        (start, Some(end)) => {
            let id = next_id();
            let mut open = Event::simple(Kind::Start, domain, id, text);
            open.fields = Some(Text::Owned(json));
            events::record_at(&mut open, start);
            events::record_at(
                &mut Event::simple(Kind::End, domain, id, None),
                end.max(start),
            );
        }
        (at, None) => {
            let mut mark = Event::simple(Kind::Mark, domain, 0, text);
            mark.fields = Some(Text::Owned(json));
            events::record_at(&mut mark, at);
        }
    }
}

/// `nvtxEventSubmit`: one deferred event, in `n` payloads.
pub(super) unsafe extern "C" fn event_submit(d: Handle, p: *const c_void, n: usize) {
    // SAFETY: the producer passes its domain and `n` payloads.
    let domain = unsafe { id_of(d) };
    let decoded = guard(None, || {
        // SAFETY: as above.
        Some(unsafe { decode(domain, p.cast::<PayloadData>(), n) })
    });
    if let Some(decoded) = decoded {
        submit(domain, decoded);
    }
}

/// `nvtxEventBatchSubmit`: events of one static schema, one after another.
pub(super) unsafe extern "C" fn event_batch_submit(d: Handle, batch: *const c_void) {
    // SAFETY: the producer passes its domain and NULL or its batch.
    let (domain, Some(b)) = (unsafe { id_of(d) }, unsafe {
        batch.cast::<EventBatch>().as_ref()
    }) else {
        return;
    };
    let stride = match schema::find(domain, b.event_schema_id).as_deref() {
        Some(Definition::Schema(s)) if s.type_ != schema_type::DYNAMIC && s.size > 0 => s.size,
        _ => return,
    };
    if b.events.is_null() {
        return;
    }
    for i in 0..(b.size / stride).min(MAX_BATCH) {
        let one = PayloadData {
            schema_id: b.event_schema_id,
            size: stride,
            // SAFETY: event `i` of the batch's `size` bytes.
            payload: unsafe { b.events.cast::<u8>().add(i * stride).cast() },
        };
        // SAFETY: one event's payload.
        unsafe { event_submit(d, (&one as *const PayloadData).cast(), 1) };
    }
}
