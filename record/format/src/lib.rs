//! nvtxr's raw recording format: what the recording tool
//! (`libnvtxr_record.so`) writes and the `nvtxr` command reads.
//!
//! A recording directory ([`DIR_VAR`]) holds one folder per process image,
//! `<pid>.<n>` (`n` counts the images a pid ran: `exec` starts a new one),
//! holding
//!
//! - `process`: a [`PROCESS_SIZE`]-byte header (see [`ProcessHeader`]): pid,
//!   parent pid, the clock and its calibration, the count of events the tool
//!   had to drop, rank, world size, host and command line;
//! - `<n>.events`: chunks of one thread's events, each a [`CHUNK_HEADER`]-byte
//!   header (magic, committed length, thread id, the chunk's number `n`,
//!   which grows with each chunk the image makes, so it orders a thread's
//!   chunks) followed by records. A thread that ends hands the rest of its
//!   chunk to a new thread, which goes on after a [`Kind::Handoff`] record:
//!   so a chunk holds one thread's records, or several threads' one after
//!   the other ([`Chunk::skim`] splits them into [`Segment`]s).
//!
//! Both are shared mappings of their files: an event is in the file (the
//! kernel's page cache) as soon as the committed length covers it, so a
//! process that dies by `_exit`, SIGKILL or a crash loses at most the event
//! it was writing. Each record is
//!
//! | size | field | present when |
//! |---|---|---|
//! | 1 | kind ([`Kind`]), plus [`ABSOLUTE`] | always |
//! | 1 | flags (the `HAS_*` bits) | always |
//! | 1–10 | timestamp, in the process's clock (see [`time`]): a varint of the zigzagged difference from the chunk's previous relative record (0 before the first); 8 bytes as is with [`ABSOLUTE`] | always |
//! | 4 | color (ARGB) | `HAS_COLOR` |
//! | 1–5 | category, varint | `HAS_CATEGORY` |
//! | 1 + 8 | payload type (1 u64, 2 i64, 3 f64, 4 u32, 5 i32, 6 f32) and bits | `HAS_PAYLOAD` |
//! | 1–10 | domain id, varint (absent: the default domain, 0) | `HAS_DOMAIN` |
//! | 1–10 | value, varint: range id, string id, thread id, category id, counter id or ns, by kind | `HAS_VALUE` |
//! | 1–10 | id of the registered string that is the message, varint | `HAS_STRING` |
//! | 1–5 + n | UTF-8 text, its length a varint: the message or name | `HAS_TEXT` |
//! | 1–5 + n | the event's extended payloads, decoded: a JSON object's UTF-8 text, its length a varint | `HAS_FIELDS` |
//!
//! Varints are LEB128 (7 bits a byte, low first). A pop in the default
//! domain takes 3 or 4 bytes; a push with a 5-byte message 9 or 10.

#![deny(unsafe_op_in_unsafe_fn)]
#![deny(clippy::undocumented_unsafe_blocks)]

mod chunk;
pub mod cupti;
mod decode;
mod encode;
pub mod gpu;
mod layout;
mod process;
mod record;
pub mod time;
mod varint;

pub use chunk::{Chunk, Segment, Skim};
pub use decode::{decode, skim, text, Records, Skimmed};
pub use encode::{encode, encode_simple, max_len};
pub use layout::*;
pub use process::{host_name, ProcessHeader};
pub use record::{Kind, Record, Stamp, Text};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::{Anchor, Calibration, Clock, WallPair};

    #[test]
    fn a_process_header_round_trips() {
        let header = ProcessHeader {
            pid: 42,
            parent: 7,
            dropped: 3,
            calibration: Calibration {
                kind: Clock::Tsc,
                ticks_per_second: 2.5e9,
                anchor: Anchor { ticks: 11, ns: 22 },
            },
            rank: Some(3),
            world: Some(8),
            host: "node-17".into(),
            wall: WallPair {
                monotonic: 5,
                wall: 1_700_000_000_000_000_000,
            },
            command: b"python\0train.py\0".to_vec(),
        };
        assert_eq!(ProcessHeader::decode(&header.encode()), Ok(header.clone()));
        let alone = ProcessHeader {
            rank: None,
            world: None,
            ..header
        };
        assert_eq!(ProcessHeader::decode(&alone.encode()), Ok(alone));
    }

    #[test]
    fn a_chunk_stops_at_its_committed_length() {
        let mut b = vec![0u8; CHUNK_HEADER + 64];
        b[..8].copy_from_slice(&CHUNK_MAGIC);
        b[CHUNK_TID..CHUNK_TID + 4].copy_from_slice(&9u32.to_le_bytes());
        // One 10-byte absolute pop record, committed; garbage after it, not committed.
        b[CHUNK_HEADER] = Kind::Pop as u8 | ABSOLUTE;
        b[CHUNK_HEADER + 2..CHUNK_HEADER + 10].copy_from_slice(&77u64.to_le_bytes());
        b[CHUNK_HEADER + 10] = Kind::Mark as u8;
        b[CHUNK_COMMITTED..CHUNK_COMMITTED + 8].copy_from_slice(&10u64.to_le_bytes());
        // The records, and the committed bytes left unread after them.
        fn read(b: &[u8]) -> (u32, Vec<Record<std::borrow::Cow<'_, str>>>, u64) {
            let chunk = Chunk::parse(b).unwrap();
            let mut records = chunk.records();
            let all: Vec<_> = records.by_ref().collect();
            (chunk.tid, all, records.unread() as u64 + chunk.missing)
        }
        let (tid, records, unread) = read(&b);
        assert_eq!((tid, records.len(), unread), (9, 1, 0));
        assert_eq!((records[0].kind, records[0].timestamp), (Kind::Pop, 77));
        assert!(Chunk::parse(&b[..8]).is_err(), "too short");
        // Cut inside the committed record, or past it: what is missing is counted.
        assert_eq!(read(&b[..CHUNK_HEADER + 4]).2, 10);
        b[CHUNK_HEADER + 10] = 0;
        b[CHUNK_COMMITTED..CHUNK_COMMITTED + 8].copy_from_slice(&1000u64.to_le_bytes());
        let (_, past, unread) = read(&b);
        assert_eq!((past.len(), unread), (1, 990));
    }

    use std::borrow::Cow;

    fn full(timestamp: u64) -> Record<Cow<'static, str>> {
        Record {
            kind: Kind::Push,
            timestamp,
            color: Some(0xff00_ff00),
            category: 70_000,
            payload: (3, 2.5f64.to_bits()),
            domain: 300,
            value: u64::MAX,
            string: Some(1),
            text: Some("étape 1".into()),
            fields: Some(r#"{"bytes":1024}"#.into()),
        }
    }

    /// Encodes `records` one after another, the `absolute` ones as a signal handler's are.
    fn encode_all(records: &[(Record<Cow<str>>, bool)]) -> Vec<u8> {
        let mut out = vec![0u8; 4096];
        let (mut at, mut previous) = (0, 0);
        for (r, absolute) in records {
            let stamp = if *absolute {
                Stamp::Absolute
            } else {
                Stamp::Relative(&mut previous)
            };
            at += encode(&mut out[at..], stamp, r);
            if r.kind == Kind::Handoff {
                previous = 0;
            }
        }
        out.truncate(at);
        out
    }

    #[test]
    fn simple_records_encode_as_encode_does() {
        let long = "x".repeat(SIMPLE_TEXT_MAX);
        let texts: [Option<&str>; 4] = [None, Some(""), Some("range"), Some(&long)];
        let kinds = [Kind::Push, Kind::Pop, Kind::Mark, Kind::Start, Kind::End];
        for (kind, text) in kinds
            .iter()
            .flat_map(|k| texts.iter().map(move |t| (*k, *t)))
        {
            for (domain, value, previous, timestamp) in [
                (0, 0, 0, 5),
                (3, 0, 1_000, 900),
                (300, 1 << 40, 7, u64::MAX),
            ] {
                let mut record = Record::simple(kind, domain, value, text.map(str::as_bytes));
                record.timestamp = timestamp;
                let mut expected = [0u8; MAX_FIXED + SIMPLE_TEXT_MAX];
                let mut p = previous;
                let n = encode(&mut expected, Stamp::Relative(&mut p), &record);
                let mut got = [0u8; MAX_FIXED + SIMPLE_TEXT_MAX];
                let mut q = previous;
                let c = text.map(|t| std::ffi::CString::new(t).unwrap());
                let c_ptr = c.as_ref().map_or(std::ptr::null(), |c| c.as_ptr());
                // SAFETY: room for MAX_FIXED + SIMPLE_TEXT_MAX; a C string or NULL.
                let m = unsafe {
                    encode_simple(
                        got.as_mut_ptr(),
                        &mut q,
                        timestamp,
                        kind,
                        domain,
                        value,
                        c_ptr,
                    )
                };
                assert_eq!(m, Some(n), "{kind:?} {text:?}");
                assert_eq!(got[..n], expected[..n], "{kind:?} {text:?}");
                assert_eq!(q, p);
            }
        }
        // One byte too long: refused, nothing changed.
        let too_long = std::ffi::CString::new("x".repeat(SIMPLE_TEXT_MAX + 1)).unwrap();
        let mut out = [0u8; MAX_FIXED + SIMPLE_TEXT_MAX];
        let mut previous = 11;
        // SAFETY: as above.
        let refused = unsafe {
            encode_simple(
                out.as_mut_ptr(),
                &mut previous,
                99,
                Kind::Mark,
                0,
                0,
                too_long.as_ptr(),
            )
        };
        assert_eq!((refused, previous), (None, 11));
    }

    #[test]
    fn records_round_trip() {
        let records = vec![
            (full(1_000_000_000_000), false),
            (Record::simple(Kind::Pop, 0, 0, None), false),
            // Out of order: the clock read by a handler, or a migrated thread's counter.
            (
                Record::simple(Kind::Mark, 0, 0, Some("from a handler".into())),
                true,
            ),
            (Record::simple(Kind::Mark, 7, 0, Some("".into())), false),
            (full(u64::MAX), false),
            (full(0), false),
        ];
        let mut stamped = records.clone();
        let times = [
            1_000_000_000_000,
            1_000_000_000_040,
            999,
            1_000_000_000_020,
            u64::MAX,
            0,
        ];
        for ((r, _), t) in stamped.iter_mut().zip(times) {
            r.timestamp = t;
        }
        let bytes = encode_all(&stamped);
        let decoded: Vec<_> = decode(&bytes).collect();
        let expected: Vec<_> = stamped.into_iter().map(|(r, _)| r).collect();
        assert_eq!(decoded, expected);
    }

    #[test]
    fn a_skim_decodes_what_is_not_an_event_and_every_time() {
        let name = Record {
            kind: Kind::RegisterString,
            ..full(7)
        };
        let mark = Record::simple(Kind::Mark, 0, 0, Some("não ASCII".into()));
        let records = [(full(5), false), (name, false), (mark, true)];
        let bytes = encode_all(&records);
        let decoded: Vec<_> = decode(&bytes).collect();
        assert_eq!(decoded.len(), 3);
        assert!(decoded[0].kind.is_event() && decoded[2].kind.is_event());
        let (mut times, mut others) = (Vec::new(), Vec::new());
        let skimmed = skim(&bytes, |t| times.push(t), |r| others.push(r));
        assert_eq!((skimmed.records, skimmed.unread), (3, 0));
        let all_times: Vec<u64> = decoded.iter().map(|r| r.timestamp).collect();
        assert_eq!(times, all_times);
        assert_eq!(others, [decoded[1].clone()]);
        assert_eq!(others[0].text.as_deref(), Some("étape 1"));
        // Cut anywhere: as many records as decode reads, the same bytes left.
        for cut in 0..bytes.len() {
            let mut decoded = decode(&bytes[..cut]);
            let whole = decoded.by_ref().count();
            let skimmed = skim(&bytes[..cut], |_| {}, |_| {});
            let read = (skimmed.records, skimmed.unread);
            assert_eq!(read, (whole, decoded.unread()), "cut at {cut}");
        }
    }

    #[test]
    fn an_older_recordings_launch_records_are_read_past() {
        // As nvtxr wrote a launch before its GPU file held them: its
        // correlation id, its API's id and its entry time.
        let launch = Record {
            kind: Kind::Launch,
            timestamp: 2_000,
            value: 77,
            string: Some(2 << 32 | 211),
            payload: (8, 1_900),
            ..Record::simple(Kind::Launch, 0, 77, None)
        };
        let pop = Record {
            timestamp: 3_000,
            ..Record::simple(Kind::Pop, 0, 0, None)
        };
        let records = [(full(1_000), false), (launch, false), (pop, false)];
        let bytes = encode_all(&records);
        let kinds: Vec<Kind> = decode(&bytes).map(|r| r.kind).collect();
        assert_eq!(kinds, [Kind::Push, Kind::Launch, Kind::Pop]);
    }

    #[test]
    fn a_handed_off_chunk_splits_into_each_threads_records() {
        let at = |r: Record<Cow<'static, str>>, t| Record { timestamp: t, ..r };
        let pop = || Record::simple(Kind::Pop, 0, 0, None);
        let handoff = |tid| Record::simple(Kind::Handoff, 0, tid, None);
        let records = [
            (at(full(0), 5_000), false),
            (at(pop(), 5_100), false),
            (at(handoff(12), 6_000), true),
            (at(full(0), 6_001), false),
            (at(handoff(13), 7_000), true),
            (at(pop(), 7_050), false),
        ];
        let body = encode_all(&records);
        let mut b = vec![0u8; CHUNK_HEADER];
        b[..8].copy_from_slice(&CHUNK_MAGIC);
        b[CHUNK_TID..CHUNK_TID + 4].copy_from_slice(&11u32.to_le_bytes());
        b[CHUNK_COMMITTED..CHUNK_COMMITTED + 8].copy_from_slice(&(body.len() as u64).to_le_bytes());
        b.extend_from_slice(&body);
        let chunk = Chunk::parse(&b).unwrap();
        let mut times = Vec::new();
        let skim = chunk.skim(|t| times.push(t), |r| panic!("{r:?} is not an event"));
        assert_eq!((skim.records, skim.unread), (6, 0));
        assert_eq!(times, [5_000, 5_100, 6_000, 6_001, 7_000, 7_050]);
        // Each thread's records decode alone, with their own times.
        let threads: Vec<(u32, Vec<(Kind, u64)>)> = skim
            .segments
            .iter()
            .map(|s| {
                let records = decode(&b[s.offset..s.offset + s.len]);
                (s.tid, records.map(|r| (r.kind, r.timestamp)).collect())
            })
            .collect();
        assert_eq!(
            threads,
            [
                (11, vec![(Kind::Push, 5_000), (Kind::Pop, 5_100)]),
                (12, vec![(Kind::Push, 6_001)]),
                (13, vec![(Kind::Pop, 7_050)]),
            ]
        );
        // The whole chunk decodes too: relative times restart at each handoff.
        let all: Vec<u64> = chunk.records().map(|r| r.timestamp).collect();
        assert_eq!(all, times);
    }

    #[test]
    fn common_records_are_small() {
        let mut previous = 1_000;
        let mut out = [0u8; 256];
        let mut pop = Record::<&[u8]>::simple(Kind::Pop, 0, 0, None);
        pop.timestamp = 1_060;
        assert_eq!(encode(&mut out, Stamp::Relative(&mut previous), &pop), 3);
        let mut push = Record::simple(Kind::Push, 0, 0, Some(&b"range"[..]));
        push.timestamp = 1_200;
        assert_eq!(encode(&mut out, Stamp::Relative(&mut previous), &push), 10);
        assert_eq!(previous, 1_200);
    }

    #[test]
    fn a_truncated_record_ends_the_stream() {
        let records = [
            (full(5), false),
            (Record::simple(Kind::Pop, 0, 0, None), false),
        ];
        let bytes = encode_all(&records);
        for cut in 0..bytes.len() {
            let decoded: Vec<_> = decode(&bytes[..cut]).collect();
            assert!(decoded.len() < 2, "cut at {cut}");
            assert!(decoded.iter().all(|r| *r == records[0].0));
        }
        assert_eq!(decode(&bytes).count(), 2);
    }
}
