//! Reading GPU files: times on the recording clock's line placed through
//! the anchors; several files' activities read back in start order.

use super::*;
use nvtxr_record_format::gpu::GPU_MAGIC;
use nvtxr_record_format::time::{Anchor, Calibration, Clock};

/// An image's clock on CLOCK_MONOTONIC itself.
fn monotonic() -> Arc<Converter> {
    let anchor = Anchor { ticks: 0, ns: 0 };
    let calibration = Calibration {
        kind: Clock::Monotonic,
        ticks_per_second: 1e9,
        anchor,
    };
    Arc::new(Converter::new(&calibration, vec![]))
}

/// A folder holding a GPU file of `records`, then `tail`'s bytes.
fn folder(records: &[GpuRecord], tail: &[u8]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let mut bytes = GPU_MAGIC.to_vec();
    for r in records {
        r.encode(&mut bytes);
    }
    bytes.extend_from_slice(tail);
    std::fs::write(dir.path().join(GPU_FILE), bytes).unwrap();
    dir
}

/// A kernel of 10 ns whose grid's x is its correlation id.
fn kernel(start: u64, correlation: u32) -> GpuRecord<'static> {
    GpuRecord::Activity(Activity {
        tag: Tag::Kernel as u8,
        start,
        end: start + 10,
        correlation,
        grid: [correlation as i32, 1, 1],
        ..Default::default()
    })
}

#[test]
fn cuptis_times_on_the_recording_clocks_line_are_placed_as_the_nvtx_events_are() {
    // A counter at a tick per ns by the calibration, which the anchors
    // then bend: 2,000 ticks on, CLOCK_MONOTONIC had gone 2,100 ns.
    let calibration = Calibration {
        kind: Clock::Tsc,
        ticks_per_second: 1e9,
        anchor: Anchor {
            ticks: 1000,
            ns: 1000,
        },
    };
    let bent = Anchor {
        ticks: 3000,
        ns: 3100,
    };
    let clock = Arc::new(Converter::new(&calibration, vec![bent]));
    // A launch that CUPTI timed at counter reading 2,000, ten ticks
    // after a push's reading, and its kernel at 2,500.
    let call = GpuRecord::Api(ApiCall {
        api: 1,
        tid: 7,
        start: calibration.line_ns(2000),
        end: calibration.line_ns(2020),
        correlation: 1,
    });
    let kernel = kernel(calibration.line_ns(2500), 1);
    let dir = folder(
        &[GpuRecord::Clock(GpuClock::RecordingClock), call, kernel],
        &[],
    );
    let mut gpu = Gpu::new(true);
    gpu.read(dir.path(), None, &clock).unwrap();
    gpu.seal();
    let push = clock.ns(1990);
    assert_eq!(gpu.calls[0].start, clock.ns(2000));
    assert!(gpu.calls[0].start > push);
    // Taken for CLOCK_MONOTONIC, the launch would come before the push.
    assert!(calibration.line_ns(2000) < push);
    assert_eq!(gpu.activity(0).start, clock.ns(2500));
}

#[test]
fn activities_of_several_files_are_read_back_from_their_records_in_start_order() {
    // A process's two images (it called exec): the second's GPU times
    // on CUPTI's own clock, its file cut short by a crash, its
    // correlation ids starting over (1 again, as the first's).
    let sync = GpuRecord::Activity(Activity {
        tag: Tag::Sync as u8,
        start: 60,
        end: 70,
        context: 5,
        correlation: 2,
        ..Default::default()
    });
    let first = folder(&[kernel(300, 1), kernel(100, 2)], &[]);
    let clock = GpuRecord::Clock(GpuClock::Offset(1000));
    let context = GpuRecord::Context {
        context: 5,
        device: 2,
    };
    let second = folder(&[clock, context, kernel(50, 1), sync], &[Tag::Kernel as u8]);
    let mut whole = Gpu::new(true);
    let mut survey = Gpu::new(false);
    let on = monotonic();
    for gpu in [&mut whole, &mut survey] {
        assert_eq!(gpu.read(first.path(), None, &on), Ok(Some(0)));
        assert_eq!(gpu.read(second.path(), None, &on), Ok(Some(1)));
        assert_eq!(gpu.read(&first.path().join("none"), None, &on), Ok(None));
    }
    whole.seal();
    // The survey keeps no activity; it knows their span.
    assert_eq!(survey.activity_count(), 0);
    assert_eq!(survey.span(), Some((100, 1070)));
    // Loaded, it reads as far as the survey did: not a record appended since.
    let mut grown = std::fs::read(first.path().join(GPU_FILE)).unwrap();
    kernel(5000, 3).encode(&mut grown);
    std::fs::write(first.path().join(GPU_FILE), grown).unwrap();
    let loaded = survey.load().unwrap();
    let seen = |gpu: &Gpu| -> Vec<_> {
        (0..gpu.activity_count())
            .map(|i| gpu.activity(i))
            .map(|a| (a.start, a.end, a.correlation, a.grid[0], a.device))
            .collect()
    };
    assert_eq!(seen(&loaded), seen(&whole));
    let gpu = loaded;
    // The second image's ids follow the first's (1 and 2 read as 3 and 4).
    assert_eq!(
        seen(&gpu),
        [
            (100, 110, 2, 2, 0),
            (300, 310, 1, 1, 0),
            (1050, 1060, 3, 1, 0),
            // A synchronization's device is its context's.
            (1060, 1070, 4, 0, 2),
        ]
    );
    assert_eq!(gpu.caused_by(1).collect::<Vec<_>>(), [1]);
    assert_eq!(gpu.caused_by(3).collect::<Vec<_>>(), [2]);
    assert_eq!(gpu.span(), Some((100, 1070)));
}
