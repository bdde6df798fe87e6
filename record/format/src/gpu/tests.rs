//! The GPU file's records written and read back: every kind, each
//! version, cut short or damaged.

use super::*;

#[test]
fn gpu_records_round_trip_and_stop_at_a_cut() {
    let kernel = Activity {
        tag: Tag::Kernel as u8,
        start: 1_000_000_000_123,
        end: 1_000_000_004_000,
        device: 1,
        context: 3,
        stream: 13,
        correlation: 77,
        name: 2,
        grid: [128, 1, -1],
        block: [256, 1, 1],
        registers: 32,
        static_shared: 1024,
        dynamic_shared: 0,
        local_per_thread: 16,
        local_total: 1 << 22,
        grid_id: 1 << 40,
        shared_executed: 102_400,
        launch_type: Some(1),
        shared_limit: Some(1),
        ..Activity::default()
    };
    let node = Activity {
        graph_node: 1 << 33,
        graph: 7,
        // As read from an older file: unknown.
        launch_type: None,
        shared_limit: None,
        ..kernel
    };
    let copy = Activity {
        tag: Tag::Memcpy as u8,
        start: 5,
        end: 9,
        bytes: 1 << 40,
        copy_kind: 1,
        src_kind: 1,
        dst_kind: 3,
        ..Activity::default()
    };
    let peer = Activity {
        copy_kind: crate::cupti::PEER_TO_PEER,
        peer: Peer {
            src_device: 1,
            src_context: 2,
            dst_device: 0,
            dst_context: 1,
        },
        ..copy
    };
    let sync = Activity {
        tag: Tag::Sync as u8,
        start: 9,
        end: 19,
        sync_type: 3,
        event: 4,
        ..Activity::default()
    };
    let records = vec![
        GpuRecord::Clock(GpuClock::Offset(-42)),
        GpuRecord::Clock(GpuClock::RecordingClock),
        GpuRecord::Clock(GpuClock::Monotonic),
        GpuRecord::KernelName(2, "_Z6kernelPfi".into()),
        GpuRecord::ApiName(2 << 32 | 211, "cudaLaunchKernel_v7000".into()),
        GpuRecord::Context {
            context: 3,
            device: 1,
        },
        GpuRecord::Activity(kernel),
        GpuRecord::Activity(node),
        GpuRecord::Activity(copy),
        GpuRecord::Activity(peer),
        GpuRecord::Activity(sync),
        GpuRecord::Api(ApiCall {
            api: 2 << 32 | 211,
            tid: 4242,
            start: 1_000_000_000_000,
            end: 1_000_000_000_900,
            correlation: 77,
        }),
        GpuRecord::ThreadName(4242, "pt_autograd_0".into()),
        GpuRecord::Exited,
        GpuRecord::Dropped(12),
        GpuRecord::Device(Device {
            id: 1,
            name: "NVIDIA H200".into(),
            compute_major: 9,
            compute_minor: 0,
            memory: 150_000_000_000,
            multiprocessors: 132,
            limits: Limits::from_values(std::array::from_fn(|i| 1 << i)),
            uuid: uuid_text(&[0xd5; 16]).into(),
            bus: "0000:19:00.0".into(),
            bandwidth_kbs: 4_800_000_000,
        }),
    ];
    let mut bytes = GPU_MAGIC.to_vec();
    for r in &records {
        r.encode(&mut bytes);
    }
    let decoded: Vec<_> = decode_gpu(&bytes).unwrap().collect();
    assert_eq!(decoded, records);
    // Each record read again at its position.
    let mut it = decode_gpu(&bytes).unwrap();
    for r in &records {
        let position = it.position();
        assert_eq!(it.next().as_ref(), Some(r));
        assert_eq!(it.record_at(position).as_ref(), Some(r));
    }
    assert_eq!(it.record_at(it.position()), None);
    for cut in GPU_MAGIC.len()..bytes.len() {
        let mut it = decode_gpu(&bytes[..cut]).unwrap();
        let n = it.by_ref().count();
        assert!(n < records.len(), "cut at {cut}");
        assert_eq!(
            decode_gpu(&bytes[..cut]).unwrap().collect::<Vec<_>>(),
            records[..n]
        );
    }
    assert!(decode_gpu(b"NVTXRCK2").is_err());
}

/// Damaged files of any version: read up to the damage, never a
/// panic (random bytes after the magic, each record read again at its
/// position).
#[test]
fn damaged_files_are_read_without_a_panic() {
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    for round in 0..20_000 {
        let magic = [
            GPU_MAGIC,
            GPU_MAGIC_V5,
            GPU_MAGIC_V4,
            GPU_MAGIC_V3,
            GPU_MAGIC_V2,
            GPU_MAGIC_V1,
        ][round % 6];
        let mut bytes = magic.to_vec();
        let len = next() % 64;
        for _ in 0..len {
            // Mostly tags and small varints, as a file's bytes are.
            let b = next();
            bytes.push(if b % 3 == 0 {
                (b >> 8) as u8 % 14
            } else {
                (b >> 8) as u8
            });
        }
        let mut records = decode_gpu(&bytes).unwrap();
        let mut positions = Vec::new();
        loop {
            let at = records.position();
            if records.next().is_none() {
                break;
            }
            positions.push(at);
        }
        assert!(records.unread() <= bytes.len() - GPU_MAGIC.len());
        for at in positions {
            assert!(records.record_at(at).is_some());
        }
    }
}

/// Only files of the fourth version on say, by a missing exit marker,
/// that their image ended without its exit handlers.
#[test]
fn only_the_fourth_version_marks_exits() {
    let marks = |magic: [u8; 8]| decode_gpu(&magic).unwrap().marks_exit();
    assert!(marks(GPU_MAGIC) && marks(GPU_MAGIC_V5) && marks(GPU_MAGIC_V4));
    assert!(![GPU_MAGIC_V3, GPU_MAGIC_V2, GPU_MAGIC_V1]
        .into_iter()
        .any(marks));
}

/// A kernel of the second version (no launch type, no shared memory
/// limit) is read with both unknown.
#[test]
fn a_second_version_kernel_is_read_with_its_launch_type_unknown() {
    let kernel = Activity {
        tag: Tag::Kernel as u8,
        start: 5,
        end: 9,
        correlation: 3,
        name: 1,
        ..Activity::default()
    };
    let record = GpuRecord::Activity(kernel);
    // The same record without its last two fields.
    assert_read_as_older(GPU_MAGIC_V2, record, 2);
}

/// A file of an older version (`magic`) holding `record`, written as
/// today's without its last `cut` bytes, then another record: both are
/// read as written (what the older version lacks unknown in `record`).
fn assert_read_as_older(magic: [u8; 8], record: GpuRecord, cut: usize) {
    let mut now = Vec::new();
    record.encode(&mut now);
    let mut older = magic.to_vec();
    older.extend(&now[..now.len() - cut]);
    GpuRecord::Dropped(2).encode(&mut older);
    let decoded: Vec<_> = decode_gpu(&older).unwrap().collect();
    assert_eq!(decoded, [record, GpuRecord::Dropped(2)]);
}

/// A file of the first version (no graph nodes) is read as written.
#[test]
fn a_first_version_file_is_read() {
    let copy = Activity {
        tag: Tag::Memcpy as u8,
        start: 5,
        end: 9,
        correlation: 3,
        bytes: 4096,
        copy_kind: 1,
        ..Activity::default()
    };
    let mut v1 = GPU_MAGIC_V1.to_vec();
    v1.push(Tag::Memcpy as u8);
    // start, duration, device, context, stream, correlation; bytes
    // (4096: two bytes), kind, source and destination kinds.
    v1.extend([5, 4, 0, 0, 0, 3, 0x80, 0x20, 1, 0, 0]);
    GpuRecord::Dropped(2).encode(&mut v1);
    let decoded: Vec<_> = decode_gpu(&v1).unwrap().collect();
    assert_eq!(decoded, [GpuRecord::Activity(copy), GpuRecord::Dropped(2)]);
}

/// A device of the fourth version (ten limits, no UUID, bus location or
/// bandwidth) is read with those unknown.
#[test]
fn a_fourth_version_device_is_read_with_its_uuid_unknown() {
    let device = Device {
        id: 1,
        name: "NVIDIA H100".into(),
        compute_major: 9,
        memory: 80 << 30,
        multiprocessors: 132,
        limits: Limits::from_values(std::array::from_fn(|i| if i < LIMITS_V2 { 7 } else { 0 })),
        ..Device::default()
    };
    let record = GpuRecord::Device(device);
    // The same record without the nine limits after the tenth (zero, one
    // byte each), the UUID and bus location (empty) and the bandwidth (0).
    let cut = (LIMITS - LIMITS_V2) + 3;
    assert_read_as_older(GPU_MAGIC_V4, record, cut);
}

#[test]
fn a_uuid_is_written_as_nvidia_smi_writes_it() {
    let bytes: [u8; 16] = std::array::from_fn(|i| (i as u8) * 17);
    assert_eq!(uuid_text(&bytes), "00112233-4455-6677-8899-aabbccddeeff");
    assert_eq!(uuid_text(&[0; 16]), "");
}
