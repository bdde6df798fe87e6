//! The messages written for every event — `TracePacket`, `TrackEvent` and
//! `InternedData` — encoded by hand, straight into the block being
//! compressed. Built as prost message structs they cost a third of a
//! conversion (building, measuring and moving a struct of options and
//! vectors per event); the messages written once per track or sequence
//! stay prost structs (`proto.rs`), embedded here with [`Fields::encoded`].
//!
//! Field numbers are Perfetto's (`protos/perfetto/trace/trace_packet.proto`,
//! `track_event/track_event.proto`, `interned_data/interned_data.proto`);
//! the tests parse every packet nvtxr writes with Perfetto's own
//! `perfetto_trace_pb2`.

/// `Trace.packet`: a trace file is a sequence of these fields.
pub const TRACE_PACKET: u32 = 1;

/// `TracePacket`'s fields.
pub mod packet {
    pub const CLOCK_SNAPSHOT: u32 = 6;
    pub const TIMESTAMP: u32 = 8;
    pub const TRUSTED_PACKET_SEQUENCE_ID: u32 = 10;
    pub const TRACK_EVENT: u32 = 11;
    pub const INTERNED_DATA: u32 = 12;
    pub const SEQUENCE_FLAGS: u32 = 13;
    pub const COMPRESSED_PACKETS: u32 = 50;
    pub const TIMESTAMP_CLOCK_ID: u32 = 58;
    pub const TRACE_PACKET_DEFAULTS: u32 = 59;
    pub const TRACK_DESCRIPTOR: u32 = 60;
    pub const FIRST_PACKET_ON_SEQUENCE: u32 = 87;
}

/// `TrackEvent`'s fields.
pub mod track_event {
    pub const DEBUG_ANNOTATIONS: u32 = 4;
    /// `Type`: `proto::SLICE_BEGIN` and the rest.
    pub const TYPE: u32 = 9;
    pub const NAME_IID: u32 = 10;
    pub const TRACK_UUID: u32 = 11;
    pub const CATEGORIES: u32 = 22;
    pub const COUNTER_VALUE: u32 = 30;
    pub const DOUBLE_COUNTER_VALUE: u32 = 44;
    pub const FLOW_IDS: u32 = 47;
    pub const TERMINATING_FLOW_IDS: u32 = 48;
}

/// `DebugAnnotation`'s fields.
pub mod debug_annotation {
    pub const NAME_IID: u32 = 1;
    pub const UINT_VALUE: u32 = 3;
    pub const INT_VALUE: u32 = 4;
    pub const DICT_ENTRIES: u32 = 11;
    pub const ARRAY_VALUES: u32 = 12;
    pub const STRING_VALUE_IID: u32 = 17;
}

/// `InternedData`'s fields; each entry (`EventName`, `DebugAnnotationName`,
/// `InternedString`) is an iid (field [`IID`]) and its text (field [`TEXT`]).
pub mod interned {
    pub const EVENT_NAMES: u32 = 2;
    pub const DEBUG_ANNOTATION_NAMES: u32 = 3;
    pub const DEBUG_ANNOTATION_STRING_VALUES: u32 = 29;
    pub const IID: u32 = 1;
    pub const TEXT: u32 = 2;
}

const VARINT: u32 = 0;
const FIXED64: u32 = 1;
const LENGTH_DELIMITED: u32 = 2;

/// `v`'s bytes as a varint, each to `push`.
#[inline(always)]
fn varint_each(mut v: u64, mut push: impl FnMut(u8)) {
    while v >= 0x80 {
        push(v as u8 | 0x80);
        v >>= 7;
    }
    push(v as u8);
}

#[inline(always)]
fn varint(out: &mut Vec<u8>, v: u64) {
    varint_each(v, |b| out.push(b));
}

/// The bytes [`varint`] writes for `v` (the first [`varint_len`] of them).
fn varint_bytes(v: u64) -> [u8; 10] {
    let (mut bytes, mut i) = ([0; 10], 0);
    varint_each(v, |b| {
        bytes[i] = b;
        i += 1;
    });
    bytes
}

/// The bytes [`varint`] writes for `v`.
fn varint_len(v: u64) -> usize {
    (64 - (v | 1).leading_zeros() as usize).div_ceil(7)
}

/// A message's fields, appended to a buffer.
pub struct Fields<'a>(pub &'a mut Vec<u8>);

impl Fields<'_> {
    #[inline(always)]
    fn key(&mut self, field: u32, wire_type: u32) {
        varint(self.0, u64::from(field << 3 | wire_type));
    }

    /// A `uint32`/`uint64`/`bool` field (and `int32`/`int64`, as their two's
    /// complement, which is how protobuf encodes them).
    #[inline(always)]
    pub fn uint(&mut self, field: u32, v: u64) {
        self.key(field, VARINT);
        varint(self.0, v);
    }

    /// A `fixed64` or `double` (its bits) field.
    pub fn fixed64(&mut self, field: u32, v: u64) {
        self.key(field, FIXED64);
        self.0.extend_from_slice(&v.to_le_bytes());
    }

    /// A `bytes` or `string` field.
    #[inline(always)]
    pub fn bytes(&mut self, field: u32, b: &[u8]) {
        self.key(field, LENGTH_DELIMITED);
        varint(self.0, b.len() as u64);
        self.0.extend_from_slice(b);
    }

    /// A message field whose fields `body` appends. Returns the body's length.
    #[inline(always)]
    pub fn message(&mut self, field: u32, body: impl FnOnce(&mut Fields)) -> usize {
        self.key(field, LENGTH_DELIMITED);
        // One byte for the length, widened afterwards if the body is longer.
        let at = self.0.len();
        self.0.push(0);
        body(&mut Fields(self.0));
        let len = self.0.len() - at - 1;
        if len < 0x80 {
            self.0[at] = len as u8;
        } else {
            // The body moved up by the length's extra bytes, in place.
            let n = varint_len(len as u64);
            let end = self.0.len();
            self.0.resize(end + n - 1, 0);
            self.0.copy_within(at + 1..end, at + n);
            self.0[at..at + n].copy_from_slice(&varint_bytes(len as u64)[..n]);
        }
        len
    }

    /// A message field left out when `body` appends nothing.
    #[inline(always)]
    pub fn message_if_any(&mut self, field: u32, body: impl FnOnce(&mut Fields)) {
        let start = self.0.len();
        if self.message(field, body) == 0 {
            self.0.truncate(start);
        }
    }

    /// A message field from a prost message.
    pub fn encoded(&mut self, field: u32, m: &impl prost::Message) {
        prost::encoding::message::encode(field, m, self.0);
    }

    /// An `InternedData` entry: `iid` stands for `text`.
    #[inline(always)]
    pub fn interned(&mut self, field: u32, iid: u64, text: &[u8]) {
        // Its length known up front (one key byte per field): no length to
        // patch afterwards.
        let len = 1 + varint_len(iid) + 1 + varint_len(text.len() as u64) + text.len();
        self.key(field, LENGTH_DELIMITED);
        varint(self.0, len as u64);
        self.uint(interned::IID, iid);
        self.bytes(interned::TEXT, text);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lengths_past_one_byte_are_widened_in_place() {
        for n in [0usize, 1, 127, 128, 300, 20000] {
            let mut out = vec![0xAA];
            let body = vec![7u8; n];
            Fields(&mut out).message(5, |f| f.0.extend_from_slice(&body));
            let mut want = vec![0xAA, 5 << 3 | 2];
            varint(&mut want, n as u64);
            want.extend_from_slice(&body);
            assert_eq!(out, want, "{n}");
        }
    }

    #[test]
    fn an_interned_entry_is_the_message_it_stands_for() {
        for (iid, len) in [
            (1u64, 0usize),
            (127, 5),
            (128, 127),
            (300_000, 128),
            (u64::MAX, 20000),
        ] {
            let text = vec![b'x'; len];
            let mut direct = Vec::new();
            Fields(&mut direct).interned(2, iid, &text);
            let mut nested = Vec::new();
            Fields(&mut nested).message(2, |e| {
                e.uint(interned::IID, iid);
                e.bytes(interned::TEXT, &text);
            });
            assert_eq!(direct, nested, "{iid} {len}");
            let mut v = Vec::new();
            varint(&mut v, iid);
            assert_eq!(varint_len(iid), v.len());
        }
    }

    #[test]
    fn an_empty_optional_message_leaves_nothing() {
        let mut out = vec![1];
        Fields(&mut out).message_if_any(3, |_| {});
        assert_eq!(out, [1]);
        Fields(&mut out).message_if_any(3, |f| f.uint(1, 300));
        assert_eq!(out, [1, 3 << 3 | 2, 3, 1 << 3, 0xAC, 0x02]);
    }
}
