//! Scale: `cargo xtask bench-scale`.
//!
//! Records the fine-grained loop of `tests/c/scale_loop.c` (push "step N",
//! push "inner", pop, pop: 10^7 and 10^8 events; 10^5 with `--quick`) with
//! `nvtxr record`, each call timed (p50, p99.99, maximum, and how many took
//! over 100 µs beside the same program with no tool), then converts the
//! recording to each format, measuring its size per event, the conversion's
//! wall and CPU time and its peak memory (from `wait4`), the summary
//! included as a user gets it (and once more without, `-q`). JSON and HTML are
//! left out at 10^8 events (6 GB of JSON is past what any viewer opens).

use nvtxr_harness::{
    artifacts, bytes_on_disk, compile_c, have_tool, measured, work_dir, Producer, CHROMIUM_FLAGS,
};
use std::path::Path;
use std::process::Command;
use std::time::Instant;

/// Iterations (4 events each): (full, `--quick`).
const SIZES: (&[u64], &[u64]) = (&[2_500_000, 25_000_000], &[25_000]);

/// `nvtxr view` of a recording: the time until it serves, its peak memory
/// then, and the time headless Chromium takes to draw the page (whole
/// trace, then a 1 µs window in the middle) beyond its time for an empty page
/// (each the fastest of three).
struct Viewer {
    index: f64,
    rss_mb: f64,
    first_paint: Option<f64>,
    zoomed: Option<f64>,
}

fn viewer(nvtxr: &Path, rec: &Path, dir: &Path) -> Viewer {
    use std::io::BufRead;
    let started = Instant::now();
    let mut child = Command::new(nvtxr)
        .args(["view", "-q", "--no-token"])
        .arg(rec)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let index = started.elapsed().as_secs_f64();
    let status = std::fs::read_to_string(format!("/proc/{}/status", child.id())).unwrap();
    let rss_kb: f64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .unwrap_or(0.0);
    let url = line
        .split_whitespace()
        .find(|w| w.starts_with("http://"))
        .expect("the address")
        .to_string();
    let chromium = have_tool("chromium");
    let paint = |url: &str, wanted: &str| {
        let started = Instant::now();
        let out = Command::new("chromium")
            .args(CHROMIUM_FLAGS)
            .arg(format!(
                "--user-data-dir={}",
                dir.join("chromium").display()
            ))
            .args([
                "--window-size=1200,800",
                "--virtual-time-budget=60000",
                "--dump-dom",
                url,
            ])
            .output()
            .unwrap();
        let dom = String::from_utf8_lossy(&out.stdout);
        assert!(dom.contains(wanted), "{url}: {wanted} not drawn");
        started.elapsed().as_secs_f64()
    };
    let (first_paint, zoomed) = if chromium {
        // Each the fastest of three: Chromium's own start varies by tenths of a second.
        let paint = |url: &str, wanted: &str| {
            (0..3)
                .map(|_| paint(url, wanted))
                .fold(f64::INFINITY, f64::min)
        };
        let blank = paint("data:text/html,<p>blank", "blank");
        let whole = paint(&url, "data-name=\"inner\"");
        // 1 µs in the middle of the trace.
        let meta = get(&url, "meta");
        let end: u64 = meta
            .split("\"end\":")
            .nth(1)
            .and_then(|v| v.split([',', '}']).next())
            .and_then(|v| v.parse().ok())
            .expect("the trace's end");
        let window = format!("{url}#t0={}&t1={}", end / 2, end / 2 + 1000);
        let zoomed = paint(&window, "data-painted");
        (Some(whole - blank), Some(zoomed - blank))
    } else {
        (None, None)
    };
    let _ = child.kill();
    let _ = child.wait();
    Viewer {
        index,
        rss_mb: rss_kb / 1024.0,
        first_paint,
        zoomed,
    }
}

/// The body of `GET {url}{path}` (HTTP/1.1, closed after).
fn get(url: &str, path: &str) -> String {
    use std::io::{Read, Write};
    let host = url.trim_start_matches("http://").trim_end_matches('/');
    let mut stream = std::net::TcpStream::connect(host).unwrap();
    write!(
        stream,
        "GET /{path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    answer
        .split_once("\r\n\r\n")
        .map(|(_, body)| body.to_string())
        .unwrap_or_default()
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let sizes = if quick { SIZES.1 } else { SIZES.0 };
    let exe = compile_c("scale_loop.c", Producer::NvtxrShared, &[]);
    let dir = work_dir().join(format!("bench-scale-{}", std::process::id()));
    let nvtxr = &artifacts().nvtxr;
    println!("| events | calls p50 / p99.99 / max (ns) | calls over 100 µs (no tool) | recording wall (s) |");
    println!("|---|---|---|---|");
    let mut formats = Vec::new();
    let mut viewers = Vec::new();
    for &n in sizes {
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let rec = dir.join("rec");
        let events = n * 4;
        let (_, bare) = measured(
            Command::new(&exe)
                .arg(n.to_string())
                .env_remove(nvtxr_harness::INJECTION_PATH_VAR),
        );
        let (recording, timed) = measured(
            Command::new(nvtxr)
                .args(["record", "-q", "--keep"])
                .arg(&rec)
                .args(["-o", "/dev/null", "--"])
                .arg(&exe)
                .arg(n.to_string()),
        );
        let f: Vec<&str> = timed.split_whitespace().collect();
        let over_bare = bare.split_whitespace().nth(3).unwrap_or("?").to_string();
        println!(
            "| {events} | {} / {} / {} | {} ({over_bare}) | {:.1} |",
            f[0], f[1], f[2], f[3], recording.wall
        );
        let raw = bytes_on_disk(&rec);
        formats.push((events, "raw recording", raw, None));
        for (format, file) in [
            ("Perfetto", "t.pftrace"),
            ("Perfetto, -q (no summary)", "q.pftrace"),
            ("SQLite", "t.sqlite"),
            ("Chrome JSON", "t.json"),
            ("HTML", "page.html"),
        ] {
            if events > 20_000_000 && (format == "Chrome JSON" || format == "HTML") {
                continue;
            }
            let out = dir.join(file);
            // As a user runs it: the summary computed and its table printed
            // (to the pipe `measured` reads), but for the `-q` row.
            let mut cmd = Command::new(nvtxr);
            cmd.arg("report");
            if file == "q.pftrace" {
                cmd.arg("-q");
            }
            match format {
                // The page is written beside the trace, under its name.
                "HTML" => cmd
                    .args(["--html", "-o"])
                    .arg(out.with_extension("pftrace")),
                _ => cmd.arg("-o").arg(&out),
            };
            let (cost, _) = measured(cmd.arg(&rec));
            formats.push((events, format, bytes_on_disk(&out), Some(cost)));
            let _ = std::fs::remove_file(&out);
        }
        viewers.push((events, viewer(nvtxr, &rec, &dir)));
        let _ = std::fs::remove_dir_all(&dir);
    }
    println!();
    println!(
        "| events | view: index (s) | index peak RSS (MB) | first paint (s) | a 1 µs window (s) |"
    );
    println!("|---|---|---|---|---|");
    for (events, v) in viewers {
        let paint = |t: Option<f64>| t.map_or("– (no chromium)".into(), |t| format!("{t:.2}"));
        println!(
            "| {events} | {:.1} | {:.0} | {} | {} |",
            v.index,
            v.rss_mb,
            paint(v.first_paint),
            paint(v.zoomed)
        );
    }
    println!();
    println!("| events | format | bytes | bytes/event | conversion wall (s) | CPU (s) | events per CPU-s | peak RSS (MB) |");
    println!("|---|---|---|---|---|---|---|---|");
    for (events, format, bytes, cost) in formats {
        let per_event = bytes as f64 / events as f64;
        match cost {
            Some(c) => println!(
                "| {events} | {format} | {bytes} | {per_event:.2} | {:.2} | {:.2} | {:.2e} | {:.0} |",
                c.wall,
                c.cpu,
                events as f64 / c.cpu.max(1e-3),
                c.rss_mb
            ),
            None => println!("| {events} | {format} | {bytes} | {per_event:.2} | – | – | – | – |"),
        }
    }
}
