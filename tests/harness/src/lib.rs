//! Test helpers: nvtxr's artifacts as `xtask` builds them (the event-log
//! tool beside them), the C programs in `tests/c` and `bindings/c/examples` compiled,
//! NVIDIA's reference producers fetched from PyPI, programs run under the
//! event-log tool.
//!
//! Everything it builds goes under `target/harness/`.

pub use nvtx_protocol::INJECTION_PATH_VAR;
pub use xtask::artifacts::{
    artifacts, check, root, work_dir, Artifacts, COMPAT_LIBRARIES, STATIC_LINK_FLAGS,
};
pub use xtask::install;

mod cost;
mod cupti;
mod pypi;
pub use cost::{bytes_on_disk, measured, Cost};
pub use cupti::{cupti_include, cupti_library, fake_cupti, CUPTI_WHEELS};
pub use pypi::{
    nvidia, perfetto_protos, python, python_nvtx, Nvidia, NVIDIA_NVTX_WHEEL, PERFETTO_PROTOS,
    PYTHON_NVTX,
};

/// Runs test `name` of the current test binary again, as a child process
/// (one process per tool attachment), with the event-log tool attached when
/// `tool` is set; returns the lines the tool logged (its `init` line first).
/// In the child itself, runs `scenario` and exits: so a test calls this
/// first, with its own name.
pub fn in_child(name: &str, tool: bool, scenario: impl FnOnce()) -> Vec<String> {
    let binary = std::env::current_exe().unwrap();
    let stem = binary.file_stem().unwrap().to_string_lossy().into_owned();
    let out = work_dir().join(format!("{stem}-{name}-{}.log", std::process::id()));
    let _ = std::fs::remove_file(&out);
    run_child(name, scenario, |child| {
        child.env("NVTXR_EVENT_LOG_OUT", &out);
        if tool {
            child.env(INJECTION_PATH_VAR, &artifacts().event_log);
        }
    });
    let lines = std::fs::read_to_string(&out)
        .unwrap_or_default()
        .lines()
        .map(str::to_owned)
        .collect();
    let _ = std::fs::remove_file(&out);
    lines
}

/// As [`in_child`], with nvtxr's recording tool attached instead: returns
/// the recording's directory (for `nvtxr report`).
pub fn recorded_in_child(name: &str, scenario: impl FnOnce()) -> PathBuf {
    let dir = work_dir().join(format!("recorded-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    run_child(name, scenario, |child| {
        child
            .env(INJECTION_PATH_VAR, &artifacts().record_tool)
            .env(nvtxr_record_format::DIR_VAR, &dir);
    });
    dir
}

/// In the child: runs `scenario` and exits. In the test: runs the child,
/// set up by `configure`, and checks that it succeeded.
fn run_child(name: &str, scenario: impl FnOnce(), configure: impl FnOnce(&mut Command)) {
    const CHILD: &str = "NVTXR_TEST_CHILD";
    if std::env::var_os(CHILD).is_some() {
        scenario();
        std::process::exit(0);
    }
    let mut child = Command::new(std::env::current_exe().unwrap());
    child
        .args(["--exact", name, "--nocapture", "--test-threads=1"])
        .env(CHILD, "1")
        .env_remove(INJECTION_PATH_VAR);
    configure(&mut child);
    let status = child.status().unwrap();
    assert!(status.success(), "{name} in a child: {status}");
}

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};

/// How a C program gets its NVTX producer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Producer {
    /// nvtxr's shared library.
    NvtxrShared,
    /// nvtxr's static library.
    NvtxrStatic,
    /// NVIDIA's header-only NVTX3 (compiled in, `-DUSE_NVIDIA`).
    NvidiaHeader,
    /// NVIDIA's `libnvtx3interop.so.1` (`-DUSE_NVIDIA -DNVTX_NO_IMPL`).
    NvidiaInterop,
    /// NVIDIA's headers (`-DUSE_NVIDIA -DNVTX_NO_IMPL`) linked to nvtxr's drop-in `libnvToolsExt.so.1`.
    NvtxrCompat,
}

impl Producer {
    pub fn label(self) -> &'static str {
        match self {
            Producer::NvtxrShared => "nvtxr shared",
            Producer::NvtxrStatic => "nvtxr static",
            Producer::NvidiaHeader => "NVIDIA header",
            Producer::NvidiaInterop => "NVIDIA interop",
            Producer::NvtxrCompat => "nvtxr libnvToolsExt",
        }
    }
}

static UNIQUE: AtomicU32 = AtomicU32::new(0);

fn unique(stem: &str) -> PathBuf {
    let dir = work_dir().join("bin");
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(format!(
        "{stem}-{}-{}",
        std::process::id(),
        UNIQUE.fetch_add(1, Ordering::Relaxed)
    ))
}

/// Where a C or C++ program is: `tests/c` (test programs) or `bindings/c/examples`
/// (what users read); an absolute path as it is.
fn c_source(source: &str) -> PathBuf {
    let test = root().join("tests/c").join(source);
    if test.exists() {
        test
    } else {
        root().join("bindings/c/examples").join(source)
    }
}

/// Compiles `<source>` from `tests/c`, else `bindings/c/examples` (an absolute path as
/// it is) (C11, or C++17 for `.cpp`; a later `-std=`
/// in `extra` wins) with `-Wall -Wextra -Werror` against the given producer;
/// returns the executable.
pub fn compile_c(source: &str, producer: Producer, extra: &[&str]) -> PathBuf {
    let a = artifacts();
    let stem = Path::new(source).file_stem().unwrap().to_str().unwrap();
    let exe = unique(&format!("{stem}-{producer:?}"));
    let cpp = source.ends_with(".cpp");
    let (compiler, std) = if cpp {
        ("CXX", ("g++", "-std=c++17"))
    } else {
        ("CC", ("gcc", "-std=c11"))
    };
    let mut cc = Command::new(std::env::var(compiler).unwrap_or_else(|_| std.0.into()));
    cc.arg(std.1)
        .args(["-O2", "-g", "-Wall", "-Wextra", "-Werror", "-pthread"])
        .args(if cpp {
            &["-pedantic"][..]
        } else {
            &["-D_GNU_SOURCE"][..]
        })
        .arg("-I")
        .arg(root().join("include"))
        .arg(c_source(source))
        .args(extra)
        .arg("-o")
        .arg(&exe);
    match producer {
        Producer::NvtxrShared => {
            cc.arg("-L")
                .arg(&a.lib_dir)
                .arg("-lnvtxr")
                .arg(format!("-Wl,-rpath,{}", a.lib_dir.display()));
        }
        Producer::NvtxrStatic => {
            cc.arg(&a.static_lib).args(STATIC_LINK_FLAGS);
        }
        Producer::NvidiaHeader | Producer::NvidiaInterop | Producer::NvtxrCompat => {
            let n = nvidia();
            cc.arg("-DUSE_NVIDIA")
                .arg("-I")
                .arg(&n.include_dir)
                .arg("-ldl");
            let library = match producer {
                Producer::NvidiaInterop => {
                    Some((n.lib_dir.join("libnvtx3interop.so.1"), &n.lib_dir))
                }
                Producer::NvtxrCompat => {
                    Some((a.compat_dir.join("libnvToolsExt.so.1"), &a.compat_dir))
                }
                _ => None,
            };
            if let Some((lib, dir)) = library {
                cc.arg("-DNVTX_NO_IMPL")
                    .arg(lib)
                    .arg(format!("-Wl,-rpath,{}", dir.display()));
            }
        }
    }
    check(&format!("compiling {source}"), cc.output().unwrap());
    exe
}

/// Which tool a run gets.
#[derive(Debug, Clone, Copy)]
pub enum Tool<'a> {
    /// `NVTX_INJECTION64_PATH` unset.
    None,
    /// The event-log tool, in a `NVTXR_EVENT_LOG_MODE` ("record", "slow", ...).
    EventLog(&'a str),
    /// `NVTX_INJECTION64_PATH` set to this value.
    Path(&'a str),
}

/// What a run printed and what the tool received.
#[derive(Debug)]
pub struct Run {
    pub success: bool,
    pub stdout: String,
    pub stderr: String,
    /// The event-log tool's lines, in order.
    pub events: Vec<String>,
}

impl Run {
    /// The events without the `init ...` line.
    pub fn calls(&self) -> Vec<&str> {
        self.events
            .iter()
            .map(String::as_str)
            .filter(|l| !l.starts_with("init "))
            .collect()
    }

    /// The stdout lines.
    pub fn lines(&self) -> Vec<&str> {
        self.stdout.lines().collect()
    }
}

/// Runs `exe args` with `tool` attached; `env` adds variables.
pub fn run(exe: &Path, args: &[&str], tool: Tool, env: &[(&str, &str)]) -> Run {
    run_under(&[], exe, args, tool, env)
}

/// As [`run`], with `exe` started by a wrapper command (e.g. valgrind).
pub fn run_under(
    wrapper: &[&str],
    exe: &Path,
    args: &[&str],
    tool: Tool,
    env: &[(&str, &str)],
) -> Run {
    let out = unique("events").with_extension("log");
    let mut cmd = match wrapper.split_first() {
        Some((program, rest)) => {
            let mut c = Command::new(program);
            c.args(rest).arg(exe);
            c
        }
        None => Command::new(exe),
    };
    cmd.args(args)
        .env_remove(INJECTION_PATH_VAR)
        .env_remove("NVTXR_QUIET")
        .env("NVTXR_EVENT_LOG_OUT", &out)
        .stdin(Stdio::null());
    match tool {
        Tool::None => {}
        Tool::EventLog(mode) => {
            cmd.env(INJECTION_PATH_VAR, &artifacts().event_log)
                .env("NVTXR_EVENT_LOG_MODE", mode);
        }
        Tool::Path(p) => {
            cmd.env(INJECTION_PATH_VAR, p);
        }
    }
    cmd.envs(env.iter().copied());
    let output = cmd.output().unwrap();
    let events = std::fs::read_to_string(&out)
        .unwrap_or_default()
        .lines()
        .map(str::to_owned)
        .collect();
    let _ = std::fs::remove_file(&out);
    Run {
        success: output.status.success(),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        events,
    }
}

/// Whether an optional system tool (chromium, cmake...) is installed. When it
/// is not, tests that need it skip with a notice, unless `NVTXR_REQUIRE_TOOLS`
/// is set (`tests/run-all.sh` sets it, and installs them): then it is a failure.
pub fn have_tool(program: &str) -> bool {
    let found = Command::new("sh")
        .args(["-c", &format!("command -v {program}")])
        .output()
        .is_ok_and(|o| o.status.success());
    if !found {
        assert!(
            std::env::var_os("NVTXR_REQUIRE_TOOLS").is_none(),
            "{program} is required but not installed"
        );
        // Past the test harness's capture (which holds `eprintln!` output of
        // passing tests back), so tests/run-all.sh's closing line counts it.
        let _ = writeln!(
            std::io::stderr(),
            "\nSKIPPED: {program} is not installed; the test that needs it did not run (tests/run-all.sh installs it)"
        );
    }
    found
}

/// Whether GHC, cabal and pkg-config, which the Haskell package needs, are
/// installed (`bash bindings/haskell/test.sh` installs them). For the demo
/// and the benchmarks, which go on without Haskell.
pub fn have_haskell() -> bool {
    ["ghc", "cabal", "pkg-config"].iter().all(|p| {
        Command::new("sh")
            .args(["-c", &format!("command -v {p}")])
            .output()
            .is_ok_and(|o| o.status.success())
    })
}

/// Runs `cabal --offline -v0 ARGS` in the Haskell package against the
/// in-tree nvtxr (its pkg-config file and the project's cabal config, which
/// names no remote repository); `Err` with what cabal said.
pub fn cabal(args: &[&str]) -> Result<std::process::Output, String> {
    let dir = root().join("bindings/haskell");
    let out = Command::new("cabal")
        .args(["--offline", "-v0"])
        .args(args)
        .current_dir(&dir)
        .env("CABAL_CONFIG", dir.join("cabal.config"))
        .env("PKG_CONFIG_PATH", artifacts().lib_dir.join("pkgconfig"))
        .output()
        .map_err(|e| e.to_string())?;
    if out.status.success() {
        Ok(out)
    } else {
        Err(String::from_utf8_lossy(&out.stderr).trim().to_string())
    }
}

/// `command` with the do-nothing tool (the event-log tool in `null` mode)
/// when `tool`, else with no tool: the benchmarks' two settings.
pub fn with_do_nothing_tool(command: &mut Command, tool: bool) {
    command.env_remove(INJECTION_PATH_VAR);
    if tool {
        command
            .env(INJECTION_PATH_VAR, &artifacts().event_log)
            .env("NVTXR_EVENT_LOG_MODE", "null");
    }
}

/// The instruction total of a callgrind output file (or one of its dumps).
pub fn callgrind_total(path: &Path) -> f64 {
    let text = std::fs::read_to_string(path).unwrap();
    let total = text
        .lines()
        .find_map(|l| {
            l.strip_prefix("summary: ")
                .or_else(|| l.strip_prefix("totals: "))
        })
        .expect("a callgrind total");
    total.split_whitespace().next().unwrap().parse().unwrap()
}

/// Headless Chromium without the background services a closed network refuses.
pub const CHROMIUM_FLAGS: &[&str] = &[
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
];

/// The `init` line the event-log tool writes when the producer's tables are right.
pub const INIT_OK: &str =
    "init callbacks=16 versioninfo=24 version=3 sizes=16,9,15,7,16,7 tables=ok unknown_module=0 other_etids=null";
