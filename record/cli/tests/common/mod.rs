//! Helpers the end-to-end tests of `nvtxr` share: scratch directories,
//! running `nvtxr`, reading its JSON trace back, headless Chromium.
#![allow(dead_code)] // each test file uses its own part

pub mod cuda;
pub mod ranks;
pub mod traces;
pub mod view;

use nvtxr_harness::{artifacts, compile_c, Producer};
use serde_json::Value;
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// A new empty directory for test NAME of the test file PREFIX, under
/// `target/harness`: removed when the test passes, kept to look at when
/// it fails (a panic).
pub fn scratch_in(prefix: &str, name: &str) -> Scratch {
    let dir = nvtxr_harness::work_dir().join(format!("{prefix}-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    Scratch(dir)
}

/// A test's scratch directory (see [`scratch_in`]).
pub struct Scratch(PathBuf);

impl std::ops::Deref for Scratch {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.0
    }
}

impl AsRef<Path> for Scratch {
    fn as_ref(&self) -> &Path {
        &self.0
    }
}

impl AsRef<std::ffi::OsStr> for Scratch {
    fn as_ref(&self) -> &std::ffi::OsStr {
        self.0.as_os_str()
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}

/// `nvtxr record -o DIR/trace.json --json DIR/summary.json --exact-names
/// [extra] -- command` (the summary by exact names, as [`check_summary`]
/// compares it with the trace).
pub fn record(dir: &Path, extra: &[&str], command: &[&str], env: &[(&str, &str)]) -> Output {
    record_command(dir, extra, command)
        .envs(env.iter().copied())
        .output()
        .unwrap()
}

pub fn record_command(dir: &Path, extra: &[&str], command: &[&str]) -> Command {
    let mut c = Command::new(&artifacts().nvtxr);
    c.arg("record")
        .arg("-o")
        .arg(dir.join("trace.json"))
        .arg("--json")
        .arg(dir.join("summary.json"))
        .arg("--exact-names")
        .args(extra)
        .arg("--")
        .args(command)
        .env_remove(nvtxr_harness::INJECTION_PATH_VAR);
    c
}

pub fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

pub fn load(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).expect("valid JSON")
}

/// Microseconds with three decimals (as the trace writes them) back to ns.
fn ns(v: &Value) -> i64 {
    (v.as_f64().unwrap() * 1000.0).round() as i64
}

/// A range or mark as the trace shows it.
#[derive(Debug, Clone)]
pub struct Event {
    pub ph: String,
    pub name: String,
    pub cat: String,
    pub pid: u64,
    pub tid: u64,
    pub start: i64,
    pub end: i64,
    pub args: Value,
}

/// The trace's events (metadata aside), with b/e pairs joined into one; checks
/// that complete events nest properly per thread and every b has one e.
pub fn events(trace: &Value) -> Vec<Event> {
    let mut out = Vec::new();
    let mut open: HashMap<String, Event> = HashMap::new();
    for e in trace["traceEvents"].as_array().unwrap() {
        let ph = e["ph"].as_str().unwrap().to_string();
        if ph == "M" {
            continue;
        }
        let ev = Event {
            ph: ph.clone(),
            name: e["name"].as_str().unwrap().into(),
            cat: e["cat"].as_str().unwrap().into(),
            pid: e["pid"].as_u64().unwrap(),
            tid: e["tid"].as_u64().unwrap(),
            start: ns(&e["ts"]),
            end: ns(&e["ts"]) + e.get("dur").map_or(0, ns),
            args: e["args"].clone(),
        };
        match ph.as_str() {
            // Async ids are unique across the whole trace, not per process.
            "b" => assert!(
                open.insert(e["id"].as_str().unwrap().into(), ev).is_none(),
                "duplicate async id"
            ),
            "e" => {
                let mut begin = open.remove(e["id"].as_str().unwrap()).expect("e without b");
                assert!(ev.start >= begin.start);
                begin.end = ev.start;
                out.push(begin);
            }
            // Complete slices, instants and counter values ("C").
            "X" | "i" | "C" => out.push(ev),
            other => panic!("unexpected phase {other}"),
        }
    }
    assert!(open.is_empty(), "async slices never ended: {open:?}");
    // The trace lists events as the converter finished them; tests read them by start.
    out.sort_by_key(|e| (e.start, -e.end));
    // Complete events on one thread nest: each lies inside the one enclosing it.
    let mut by_thread: BTreeMap<(u64, u64), Vec<&Event>> = BTreeMap::new();
    for e in out.iter().filter(|e| e.ph == "X") {
        by_thread.entry((e.pid, e.tid)).or_default().push(e);
    }
    for (thread, mut list) in by_thread {
        list.sort_by_key(|e| (e.start, -e.end));
        let mut stack: Vec<&Event> = Vec::new();
        for e in list {
            while stack.last().is_some_and(|top| top.end <= e.start) {
                stack.pop();
            }
            if let Some(top) = stack.last() {
                assert!(e.end <= top.end, "{thread:?}: {e:?} crosses {top:?}");
            }
            stack.push(e);
        }
    }
    out
}

pub fn count(events: &[Event], ph: &str, name: &str) -> usize {
    events
        .iter()
        .filter(|e| e.ph == ph && e.name == name)
        .count()
}

/// `nvtxr ARGS...` with TMPDIR on a tmpfs of `size` (as `mount -o size=`
/// takes it) mounted at `dir/small` in a private mount namespace (`unshare
/// -rm`: needs root or user namespaces), stopped after 60 s (a command that
/// ran on fails its test, not hangs it); with that folder. `None` when no
/// tmpfs can be mounted here: the test says it is skipped (and fails under
/// NVTXR_REQUIRE_TOOLS).
pub fn nvtxr_with_small_tmpdir(dir: &Path, size: &str, args: &[&str]) -> Option<(Output, PathBuf)> {
    let probe = Command::new("unshare")
        .args(["-rm", "sh", "-c", "mount -t tmpfs -o size=64k tmpfs /mnt"])
        .output();
    if !probe.as_ref().is_ok_and(|o| o.status.success()) {
        assert!(
            std::env::var_os("NVTXR_REQUIRE_TOOLS").is_none(),
            "cannot mount a small tmpfs: {probe:?}"
        );
        eprintln!("skipped: cannot mount a small tmpfs here ({probe:?})");
        return None;
    }
    let small = dir.join("small");
    std::fs::create_dir(&small).unwrap();
    let out = Command::new("unshare")
        .args(["-rm", "sh", "-c"])
        .arg(format!(
            "mount -t tmpfs -o size={size} tmpfs \"$0\" && TMPDIR=\"$0\" exec timeout 60 \"$@\""
        ))
        .arg(&small)
        .arg(&artifacts().nvtxr)
        .args(args)
        .output()
        .unwrap();
    Some((out, small))
}

pub fn scenarios() -> PathBuf {
    compile_c("record_scenarios.c", Producer::NvtxrShared, &[])
}

/// The page at `url` as headless Chromium leaves it after its scripts ran
/// (and their requests were answered), in a 1200×800 window.
pub fn dump_dom(dir: &Path, url: &str) -> String {
    let out = Command::new("chromium")
        .args(nvtxr_harness::CHROMIUM_FLAGS)
        .arg(format!(
            "--user-data-dir={}",
            dir.join("chromium").display()
        ))
        .arg("--window-size=1200,800")
        .arg("--virtual-time-budget=10000")
        .arg("--dump-dom")
        .arg(url)
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// `nvtxr ARGS...` with the worker scenario after `--` when `run` is set.
pub fn nvtxr(args: &[&str], env: &[(&str, &str)]) -> Output {
    Command::new(&artifacts().nvtxr)
        .args(args)
        .env_remove(nvtxr_harness::INJECTION_PATH_VAR)
        .envs(env.iter().copied())
        .output()
        .unwrap()
}

/// `nvtxr record -q --keep DIR/rec OUTPUTS -- COMMAND`, successful; the recording.
pub fn kept(dir: &Path, outputs: &[&str], command: &[&str]) -> PathBuf {
    let rec = dir.join("rec");
    let args = [
        &["record", "-q", "--keep", rec.to_str().unwrap()][..],
        outputs,
        &["--"],
        command,
    ]
    .concat();
    let out = nvtxr(&args, &[]);
    assert!(out.status.success(), "{args:?}: {}", text(&out));
    rec
}

/// A timeline page (the HTML file or `nvtxr view`'s) of the C example, as
/// headless Chromium drew it: every name of the example, its four
/// "forward" ranges, and rows named after its threads.
pub fn assert_draws_the_example(dom: &str) {
    for name in [
        "epoch",
        "forward",
        "backward",
        "load data",
        "prefetch done",
        "loss",
    ] {
        assert!(
            dom.contains(&format!("data-name=\"{name}\"")),
            "{name} not rendered:\n{dom}"
        );
    }
    assert_eq!(dom.matches("data-name=\"forward\"").count(), 4);
    assert!(
        dom.contains("trainer (") && dom.contains("prefetcher ("),
        "thread rows named after the threads"
    );
}

/// The summary (`--json`) agrees with the trace's durations, range by range.
pub fn check_summary(dir: &Path, events: &[Event]) {
    let mut totals: BTreeMap<(String, String), (i64, usize)> = BTreeMap::new();
    for e in events.iter().filter(|e| e.ph != "i") {
        let style = if e.ph == "X" { "PushPop" } else { "StartEnd" };
        let range = if e.cat == "nvtx" {
            format!(":{}", e.name)
        } else {
            format!("{}:{}", e.cat, e.name)
        };
        let t = totals.entry((style.into(), range)).or_default();
        t.0 += e.end - e.start;
        t.1 += 1;
    }
    let summary = load(&dir.join("summary.json"));
    let rows = summary.as_array().unwrap();
    assert_eq!(rows.len(), totals.len(), "{summary}");
    let grand: i64 = totals.values().map(|t| t.0).sum();
    for row in rows {
        let key = (
            row["style"].as_str().unwrap().to_string(),
            row["range"].as_str().unwrap().to_string(),
        );
        let (total, n) = totals[&key];
        assert_eq!(row["total_ns"].as_i64().unwrap(), total, "{key:?}");
        assert_eq!(row["instances"].as_u64().unwrap() as usize, n, "{key:?}");
        let percent = 100.0 * total as f64 / grand as f64;
        assert!(
            (row["time_percent"].as_f64().unwrap() - percent).abs() < 1e-6,
            "{key:?}"
        );
    }
}

/// The recording nvtxr said it kept: the last word of the `nvtxr report`
/// command it printed to convert it (`None` if it printed none).
pub fn kept_recording_in(said: &str) -> Option<&str> {
    said.lines()
        .find_map(|l| l.split("convert it with: nvtxr report ").nth(1))
        .and_then(|command| command.trim().rsplit(' ').next())
}

/// `GET path` from the server on 127.0.0.1:`port` with `host` as the Host
/// header and `headers` (lines, each ending in CRLF): the status, the head
/// and the body (HTTP/1.0: a body of any length comes whole, never chunked).
pub fn http_get(port: u16, host: &str, path: &str, headers: &str) -> (u16, String, String) {
    use std::io::{Read, Write};
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    write!(
        stream,
        "GET {path} HTTP/1.0\r\nHost: {host}\r\n{headers}Connection: close\r\n\r\n"
    )
    .unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    let (head, body) = answer.split_once("\r\n\r\n").unwrap();
    let status = head.split(' ').nth(1).unwrap().parse().unwrap();
    (status, head.to_string(), body.to_string())
}

// The `record`-family tests' shared helpers.
/// Compiles `tests/c/<source>` for `producer` and records it into scratch
/// folder `name`: the trace `t.json`, the recording kept in `rec`. Returns
/// the folder and what `nvtxr record` printed (the program's output
/// included); the recording succeeded.
pub fn recorded_program(source: &str, producer: Producer, name: &str) -> (Scratch, Output) {
    recorded_program_with(source, producer, name, &[])
}

/// [`recorded_program`], compiled with `extra` arguments.
pub fn recorded_program_with(
    source: &str,
    producer: Producer,
    name: &str,
    extra: &[&str],
) -> (Scratch, Output) {
    let exe = compile_c(source, producer, extra);
    let dir = scratch_in("record", name);
    let out = nvtxr(
        &[
            "record",
            "--keep",
            dir.join("rec").to_str().unwrap(),
            "-o",
            dir.join("t.json").to_str().unwrap(),
            "--",
            exe.to_str().unwrap(),
        ],
        &[],
    );
    assert!(
        out.status.success(),
        "{source} ({producer:?}): {}",
        text(&out)
    );
    let said = format!(
        "nvtxr: the recording is kept in {}",
        dir.join("rec").display()
    );
    assert!(text(&out).contains(&said), "{}", text(&out));
    (dir, out)
}

/// `nvtxr record -q [extra] -- record_scenarios NAME`, with its trace's events.
pub fn scenario(name: &str, extra: &[&str]) -> (Output, Vec<Event>, Scratch) {
    let dir = scratch_in("record", name);
    let mut args = vec!["-q"];
    args.extend(extra);
    let out = record(&dir, &args, &[scenarios().to_str().unwrap(), name], &[]);
    let ev = events(&load(&dir.join("trace.json")));
    (out, ev, dir)
}

/// `nvtxr report -q -o TRACE REC`.
pub fn report(trace: &Path, rec: &Path) -> Output {
    nvtxr(
        &[
            "report",
            "-q",
            "-o",
            trace.to_str().unwrap(),
            rec.to_str().unwrap(),
        ],
        &[],
    )
}

/// Every `.events` file of a recording.
pub fn chunk_files(rec: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(rec)
        .unwrap()
        .flat_map(|f| std::fs::read_dir(f.unwrap().path()).unwrap())
        .map(|f| f.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "events"))
        .collect();
    files.sort();
    files
}
