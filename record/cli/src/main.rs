//! `nvtxr`: see any program's NVTX annotations without Nsight.
//!
//! ```text
//! nvtxr record [OPTIONS] -- COMMAND [ARGS...]   run COMMAND (and its children) with the recording tool
//! nvtxr report [OPTIONS] DIR...                 turn recording directories (NVTXR_RECORD_DIR, --keep)
//!                                               into outputs; several are merged on the wall clock
//! nvtxr view [--port N] DIR...                  serve their timeline to a browser on 127.0.0.1
//!
//! OPTIONS
//!   -o, --output FILE   the trace (default nvtxr-trace.pftrace, Perfetto's format; FILE.json: Chrome's
//!                       JSON); drag it into https://ui.perfetto.dev
//!   --format FORMAT     perfetto or json, whatever FILE's extension
//!   --html              also write a self-contained HTML timeline next to the trace (FILE with .html)
//!   --csv FILE          the summary as CSV
//!   --json FILE         the summary as JSON
//!   -q, --quiet         no progress line and no summary table on the terminal
//! ```

mod chrome;
mod demangle;
mod html;
mod model;
mod output;
mod perfetto;
mod progress;
mod ranks;
mod record;
mod signals;
mod sqlite;
mod summary;
mod temporary;
mod view;

use clap::{Parser, Subcommand};
use std::ffi::OsString;
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Conversions make and free many small strings (names, args): mimalloc
/// does that in a fraction of glibc's time.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// See any program's NVTX annotations without Nsight.
#[derive(Debug, Parser)]
#[command(
    name = "nvtxr",
    version,
    about = "See any program's NVTX annotations without Nsight: `nvtxr record -- COMMAND` records them \
             (a Perfetto trace, Chrome JSON, Nsight's SQLite tables, an HTML timeline, an nvtx_sum-style \
             summary); `nvtxr report` converts and merges recordings (one per rank); `nvtxr view` serves \
             a recording's timeline to a browser, whatever its length",
    long_about = None
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run COMMAND (and every process it starts) with the recording tool
    /// attached, then write the trace and the summary.
    Record {
        #[command(flatten)]
        outputs: Outputs,
        /// Wait for every process COMMAND started (`all`), or only for
        /// COMMAND itself (`primary`) before writing the outputs.
        #[arg(long, value_enum, default_value_t = Wait::All)]
        wait: Wait,
        /// Keep the raw recording in DIR (a new or empty directory; %q{VAR},
        /// %h and %p expanded), for `nvtxr report` to merge with others.
        #[arg(long, value_name = "DIR")]
        keep: Option<PathBuf>,
        /// Record GPU activity through CUPTI (kernels, copies, sets,
        /// synchronizations, each under the NVTX range that launched it):
        /// `auto` when the program uses CUDA and libcupti is found (else one
        /// warning line), `on` to make a missing libcupti an error before the
        /// program runs, `off` not to.
        #[arg(long, value_enum, default_value_t = record::Gpu::Auto)]
        gpu: record::Gpu,
        /// The command to run, after `--` (an unknown option before it is an
        /// error, not the command).
        #[arg(required = true, trailing_var_arg = true)]
        command: Vec<OsString>,
    },
    /// Turn recording directories (NVTXR_RECORD_DIR, or what `nvtxr record
    /// --keep` kept) into the outputs. Several (one per rank of a job) are
    /// merged into one trace, placed on the wall clock.
    Report {
        #[command(flatten)]
        outputs: Outputs,
        /// Align the recordings on the end of the range (or the mark) of
        /// this name that every rank passes together, a barrier, instead
        /// of trusting the hosts' clocks; prints each one's estimated offset.
        #[arg(long, value_name = "NAME")]
        align_on: Option<String>,
        /// Print each instance's duration of the range NAME per rank, the
        /// slowest rank and the spread.
        #[arg(long, value_name = "NAME")]
        per_rank: Option<String>,
        /// The recording directories.
        #[arg(required = true)]
        dirs: Vec<PathBuf>,
    },
    /// Serve the timeline of recording directories to a browser on this
    /// machine: any length opens at once, zoomed out to bars per pixel,
    /// zoomed in to every event.
    ///
    /// The index is kept in an unlinked temporary file in TMPDIR (about 17
    /// bytes per event), gone when nvtxr exits.
    View {
        #[command(flatten)]
        options: view::Options,
        /// The recording directories.
        #[arg(required = true)]
        dirs: Vec<PathBuf>,
    },
}

/// Which processes `nvtxr record` waits for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Wait {
    All,
    Primary,
}

/// The trace's formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum TraceFormat {
    /// Perfetto's protobuf trace (`.pftrace`): compact, streamed, for any size.
    Perfetto,
    /// The Chrome Trace Event JSON format.
    Json,
    /// Nsight Systems' SQLite export's NVTX tables (as `--sqlite`).
    Sqlite,
}

/// What to write, for both subcommands.
#[derive(Debug, Clone, clap::Args)]
pub struct Outputs {
    /// The trace: Perfetto's format (`.pftrace`), or Chrome's JSON for a
    /// FILE ending in `.json`; open it in ui.perfetto.dev.
    #[arg(
        short = 'o',
        long = "output",
        value_name = "FILE",
        default_value = "nvtxr-trace.pftrace"
    )]
    pub trace: PathBuf,
    /// The trace's format; by default chosen by FILE's extension (`.json`:
    /// JSON, anything else: Perfetto).
    #[arg(long, value_enum)]
    pub format: Option<TraceFormat>,
    /// Also write a self-contained HTML timeline next to the trace (FILE with .html).
    #[arg(long)]
    pub html: bool,
    /// The summary as CSV.
    #[arg(long, value_name = "FILE")]
    pub csv: Option<PathBuf>,
    /// The summary as JSON.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// The NVTX tables of Nsight Systems' SQLite export (`nsys export
    /// --type sqlite`): SQL written against one runs on this file.
    #[arg(long, value_name = "FILE")]
    pub sqlite: Option<PathBuf>,
    /// No progress line and no summary table on the terminal (nor, unless
    /// `--csv`, `--json` or `--html` wants it, a summary computed).
    #[arg(short, long)]
    pub quiet: bool,
    /// The summary's time unit (table and CSV).
    #[arg(long, value_enum, default_value_t = summary::Unit::Ns)]
    pub time_unit: summary::Unit,
    /// Split the summary's ranges by a decoded payload field's value
    /// (NVTX payload schemas, e.g. NCCL's message size): `name [FIELD=value]`.
    #[arg(long, value_name = "FIELD")]
    pub group_by: Option<String>,
    /// Thousands separators in the summary's numbers (table and CSV).
    #[arg(long)]
    pub separators: bool,
    /// The summary table's rows on the terminal, largest total first (0:
    /// every one); the CSV and JSON have every row.
    #[arg(long, value_name = "N", default_value_t = 100)]
    pub rows: usize,
    #[command(flatten)]
    pub selection: model::Selection,
}

/// An output name with `%q{VAR}` (an environment variable of `nvtxr`'s own,
/// as a launcher sets it: `OMPI_COMM_WORLD_RANK`, `SLURM_PROCID`, `RANK`),
/// `%h` (the host name), `%p` (`nvtxr`'s pid) and `%%` expanded, as Nsight
/// Systems expands them.
pub fn expand(name: &Path) -> Result<PathBuf, String> {
    let text = name.to_string_lossy();
    let mut out = String::new();
    let mut rest = text.as_ref();
    while let Some(i) = rest.find('%') {
        out.push_str(&rest[..i]);
        rest = &rest[i + 1..];
        if let Some(after) = rest.strip_prefix("q{") {
            let end = after
                .find('}')
                .ok_or_else(|| format!("{text}: `%q{{` without its `}}`"))?;
            let var = &after[..end];
            let value = std::env::var(var).map_err(|_| {
                format!("{text}: the environment variable {var} (for %q{{{var}}}) is not set")
            })?;
            out.push_str(&value);
            rest = &after[end + 1..];
        } else if let Some(after) = rest.strip_prefix('h') {
            out.push_str(&nvtxr_record_format::host_name());
            rest = after;
        } else if let Some(after) = rest.strip_prefix('p') {
            out.push_str(&std::process::id().to_string());
            rest = after;
        } else if let Some(after) = rest.strip_prefix('%') {
            out.push('%');
            rest = after;
        } else {
            return Err(format!(
                "{text}: unknown %-sequence (use %q{{VAR}}, %h, %p or %%)"
            ));
        }
    }
    out.push_str(rest);
    Ok(out.into())
}

impl Outputs {
    /// The same outputs with their names expanded (see [`expand`]).
    pub fn expanded(&self) -> Result<Outputs, String> {
        let optional = |p: &Option<PathBuf>| p.as_deref().map(expand).transpose();
        Ok(Outputs {
            trace: expand(&self.trace)?,
            csv: optional(&self.csv)?,
            json: optional(&self.json)?,
            sqlite: optional(&self.sqlite)?,
            ..self.clone()
        })
    }

    /// The trace's format: `--format`, else by the extension: JSON for
    /// `.json`, Perfetto's for anything else (`.pftrace`, `.perfetto-trace`).
    pub fn trace_format(&self) -> TraceFormat {
        self.format
            .unwrap_or_else(|| match self.trace.extension().and_then(|e| e.to_str()) {
                Some("json") => TraceFormat::Json,
                Some("sqlite" | "db") => TraceFormat::Sqlite,
                _ => TraceFormat::Perfetto,
            })
    }

    /// Whether progress lines are shown: on a terminal, without `-q`.
    pub fn shows_progress(&self) -> bool {
        !self.quiet && std::io::stderr().is_terminal()
    }

    /// Whether the summary is shown or written (the table, CSV, JSON, or
    /// the HTML page's legend): if not, it is not computed.
    pub fn wants_summary(&self) -> bool {
        !self.quiet || self.html || self.csv.is_some() || self.json.is_some()
    }

    /// The summary's rows needed: only the terminal table's (`--rows`),
    /// unless a file wants every one.
    pub fn rows_kept(&self) -> Option<usize> {
        let every = self.rows == 0 || self.html || self.csv.is_some() || self.json.is_some();
        (!every).then_some(self.rows)
    }

    pub fn html_path(&self) -> PathBuf {
        self.trace.with_extension("html")
    }

    /// Every file this run would write, checked before anything runs (see
    /// `output::Target::check`); two outputs that are one file are refused.
    /// Returns whether one of them is this process's standard output.
    pub fn check(&self) -> Result<bool, String> {
        let mut files: Vec<(PathBuf, output::Target)> = Vec::new();
        let html = self.html.then(|| self.html_path());
        for path in [
            Some(&self.trace),
            html.as_ref(),
            self.csv.as_ref(),
            self.json.as_ref(),
            self.sqlite.as_ref(),
        ]
        .into_iter()
        .flatten()
        {
            let target = output::Target::check(path)?;
            if let Some((other, _)) = files
                .iter()
                .find(|(_, t)| *t == target && matches!(t, output::Target::File(_)))
            {
                return Err(format!(
                    "{} and {} are the same file: name a file for each output",
                    other.display(),
                    path.display()
                ));
            }
            files.push((path.clone(), target));
        }
        Ok(files
            .iter()
            .any(|(_, t)| *t == output::Target::Descriptor(libc::STDOUT_FILENO)))
    }

    fn format(&self) -> summary::Format {
        summary::Format {
            unit: self.time_unit,
            separators: self.separators,
        }
    }
}

/// What `nvtxr report` does for many ranks.
#[derive(Debug, Clone, Default)]
pub struct RankOptions {
    /// `--align-on NAME`.
    pub align_on: Option<String>,
    /// `--per-rank NAME`.
    pub per_rank: Option<String>,
}

/// Writes one output whole or not at all, only where `path` leads (see
/// `output`), with a progress line for a long one.
fn write_output(
    path: &Path,
    contents: &dyn Fn(&mut dyn Write) -> std::io::Result<()>,
    events: u64,
) -> Result<(), String> {
    progress::begin(format!("writing {}", path.display()), events);
    let written = output::Target::check(path)?.write(path, contents);
    progress::end();
    written
}

/// How an error reading the recordings in `dirs` is told (or one of
/// nvtxr's own temporary files, while it reads them).
pub fn unreadable(dirs: &[PathBuf]) -> impl Fn(std::io::Error) -> String {
    let shown: Vec<String> = dirs.iter().map(|d| d.display().to_string()).collect();
    move |e: std::io::Error| {
        if let Some(message) = temporary::message(&e) {
            return message;
        }
        match e.kind() {
            std::io::ErrorKind::InvalidData | std::io::ErrorKind::InvalidInput => e.to_string(),
            _ => format!("cannot read the recording in {}: {e}", shown.join(", ")),
        }
    }
}

/// The first pass over recording directories (see `model::scan`), its
/// warnings printed.
pub fn open(dirs: &[PathBuf]) -> Result<model::Scan, String> {
    let scan = model::scan(dirs).map_err(unreadable(dirs))?;
    for warning in &scan.warnings {
        eprintln!("nvtxr: warning: {warning}");
    }
    Ok(scan)
}

/// Writes every requested output from recording directories; prints the
/// summary. Fails, saying why, when nothing can be written (no recorded
/// process, nothing selected) or, after writing everything else, when part
/// of a recording could not be read or the tool had to drop events.
///
/// The recording is read in passes, one chunk at a time (see `model`): one
/// for the summary, one per output file.
pub fn report(dirs: &[PathBuf], outputs: &Outputs, ranks: &RankOptions) -> Result<(), String> {
    // Lines for people go where no output goes.
    let to_stdout = outputs.check()?;
    let mut term: Box<dyn Write> = if to_stdout {
        Box::new(std::io::stderr())
    } else {
        Box::new(std::io::stdout())
    };
    let shown: Vec<String> = dirs.iter().map(|d| d.display().to_string()).collect();
    let unreadable = unreadable(dirs);
    let mut scan = open(dirs)?;
    let say = |term: &mut Box<dyn Write>, text: String| {
        let _ = term.write_all(text.as_bytes());
    };
    if let Some(name) = &ranks.align_on {
        // Printed even with -q: the estimates are what --align-on is asked for.
        for shift in ranks::align_on(&mut scan, name)? {
            say(
                &mut term,
                format!(
                    "aligned on {name}: {} shifted by {:+.3} us (median of {})\n",
                    shown[shift.recording],
                    shift.ns as f64 / 1e3,
                    summary::count(shift.instances as u64, "instance", "instances")
                ),
            );
        }
    }
    let filter = model::Filter::new(&outputs.selection, &scan).map_err(&unreadable)?;
    if outputs.shows_progress() {
        progress::enable();
    }
    // Asked for by name: computed (and its errors reported) even with -q.
    let per_rank = match &ranks.per_rank {
        Some(name) => Some(ranks::per_rank(&scan, &filter, name, &outputs.format())?),
        None => None,
    };
    // The summary (when it is wanted) is replayed on a core of its own while
    // the trace is written; nothing is written when the replay selects no
    // event.
    let events = std::cell::Cell::new(None);
    let (written, summary) = std::thread::scope(|threads| {
        let summary = outputs.wants_summary().then(|| {
            summary::beside(threads, || {
                let mut collector = summary::Collector::grouped_by(outputs.group_by.clone());
                scan.replay(&filter, &mut collector)?;
                let marks = std::mem::take(&mut collector.marks);
                let gpu = std::mem::take(&mut collector.gpu);
                Ok::<_, std::io::Error>((collector.rows(outputs.rows_kept())?, marks, gpu))
            })
        });
        let written = write_output(
            &outputs.trace,
            &|out| {
                let n = match outputs.trace_format() {
                    TraceFormat::Json => {
                        let mut trace = chrome::Writer::new(out, scan.origin)?;
                        let n = scan.replay(&filter, &mut trace)?;
                        trace.finish()?;
                        n
                    }
                    TraceFormat::Perfetto => {
                        let mut trace =
                            perfetto::Writer::new(out, scan.origin, scan.on_wall_clock())?;
                        let n = scan.replay(&filter, &mut trace)?;
                        trace.finish()?;
                        n
                    }
                    TraceFormat::Sqlite => sqlite::write(&scan, &filter, out)?,
                };
                events.set(Some(n));
                match n {
                    0 => Err(std::io::Error::other("no event selected")),
                    _ => Ok(()),
                }
            },
            scan.records,
        );
        let summary = summary.map(|thread| {
            thread
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
        });
        (written, summary)
    });
    let replayed = events.get();
    if replayed == Some(0) {
        let why = nothing_selected(&scan, &outputs.selection).map_err(&unreadable)?;
        return Err(match dropped(&scan) {
            Some(dropped) => format!("{dropped}\nnvtxr: {why}"),
            None => why,
        });
    }
    written?;
    let events = replayed.expect("the trace was written, so replayed");
    let (rows, marks, gpu) = match summary {
        Some(summary) => summary.map_err(&unreadable)?,
        None => (
            summary::Collector::default()
                .rows(None)
                .map_err(&unreadable)?,
            Default::default(),
            Default::default(),
        ),
    };
    if let Some(path) = &outputs.sqlite {
        write_output(
            path,
            &|out| sqlite::write(&scan, &filter, out).map(drop),
            scan.records,
        )?;
    }
    if outputs.html {
        let title = scan
            .processes
            .first()
            .map(|p| p.command.clone())
            .unwrap_or_default();
        write_output(
            &outputs.html_path(),
            &|out| {
                let mut page =
                    html::Page::new(out, &title, scan.origin, (events as u64, scan.end))?;
                scan.replay(&filter, &mut page)?;
                page.finish(&scan, &rows, &marks)
            },
            scan.records,
        )?;
    }
    if let Some(path) = &outputs.csv {
        write_output(path, &|out| summary::csv(&rows, &outputs.format(), out), 0)?;
    }
    if let Some(path) = &outputs.json {
        write_output(path, &|out| summary::json(&rows, out), 0)?;
    }
    if !outputs.quiet {
        say(
            &mut term,
            format!(
                "\nNVTX range summary ({}, {}):\n\n",
                summary::count(events as u64, "event", "events"),
                summary::count(scan.processes.len() as u64, "process", "processes"),
            ),
        );
        summary::table(&rows, &outputs.format(), outputs.rows, &mut term).map_err(&unreadable)?;
        if !gpu.is_empty() {
            say(&mut term, gpu.text(&outputs.format(), outputs.rows));
        }
    }
    if let Some(table) = per_rank {
        say(&mut term, table);
    }
    if !outputs.quiet {
        say(
            &mut term,
            format!(
                "\ntrace: {} ({})\n",
                outputs.trace.display(),
                match outputs.trace_format() {
                    TraceFormat::Perfetto => "drag it into https://ui.perfetto.dev",
                    TraceFormat::Json => {
                        "drag it into https://ui.perfetto.dev, or open it in chrome://tracing"
                    }
                    TraceFormat::Sqlite => "Nsight Systems' SQLite tables: query it with sqlite3",
                }
            ),
        );
        if outputs.html {
            say(
                &mut term,
                format!("timeline: {}\n", outputs.html_path().display()),
            );
        }
    }
    let _ = term.flush();
    let mut failures = Vec::new();
    if !scan.skipped.is_empty() {
        failures.push(format!(
            "part of the recording could not be read and is left out of the outputs (everything else is in them):\n  {}",
            scan.skipped.join("\n  ")
        ));
    }
    failures.extend(dropped(&scan));
    match failures.is_empty() {
        true => Ok(()),
        false => Err(failures.join("\nnvtxr: ")),
    }
}

/// The events the tool had to drop, if it did, per process.
fn dropped(scan: &model::Scan) -> Option<String> {
    let dropped: Vec<String> = scan
        .processes
        .iter()
        .filter(|p| p.dropped > 0)
        .map(|p| format!("{} in process {} ({})", p.dropped, p.pid, p.command))
        .collect();
    (!dropped.is_empty()).then(|| {
        format!(
            "the recording is incomplete: events dropped: {} (the process's stderr says why)",
            dropped.join(", ")
        )
    })
}

/// Why a report kept no event: the recording has none, or the selection
/// matched none (then what there is to select).
pub fn nothing_selected(
    scan: &model::Scan,
    selection: &model::Selection,
) -> std::io::Result<String> {
    #[derive(Default)]
    struct Names {
        ranges: std::collections::BTreeSet<String>,
        domains: std::collections::BTreeSet<String>,
    }
    impl model::Sink for Names {
        fn range(&mut self, _: &model::Process, r: &model::Range) -> std::io::Result<()> {
            self.see(&r.details);
            self.ranges.insert(r.details.name.to_string());
            Ok(())
        }
        fn mark(&mut self, _: &model::Process, m: &model::Mark) -> std::io::Result<()> {
            self.see(&m.details);
            Ok(())
        }
    }
    impl Names {
        fn see(&mut self, d: &model::Details) {
            let domain = if d.domain.is_empty() {
                "default"
            } else {
                &d.domain
            };
            self.domains.insert(domain.to_string());
        }
    }
    let mut names = Names::default();
    if scan.replay(&model::Filter::all(), &mut names)? == 0 {
        return Ok(format!(
            "no NVTX range or mark was recorded ({} loaded the tool); nothing written",
            summary::count(scan.processes.len() as u64, "process", "processes")
        ));
    }
    const SHOWN: usize = 20;
    let list = |set: &std::collections::BTreeSet<String>| {
        let mut shown: Vec<&str> = set.iter().take(SHOWN).map(String::as_str).collect();
        if set.len() > SHOWN {
            shown.push("...");
        }
        shown.join(", ")
    };
    let mut asked = Vec::new();
    if let Some(range) = &selection.capture_range {
        asked.push(format!("--capture-range {range}"));
    }
    if !selection.include.is_empty() {
        asked.push(format!(
            "--nvtx-domain-include {}",
            selection.include.join(",")
        ));
    }
    if !selection.exclude.is_empty() {
        asked.push(format!(
            "--nvtx-domain-exclude {}",
            selection.exclude.join(",")
        ));
    }
    Ok(format!(
        "{} selected no range or mark; nothing written. The recording has the domains: {}; and the ranges: {}",
        asked.join(" "),
        list(&names.domains),
        list(&names.ranges)
    ))
}

/// An error's exit: said on stderr, with `code`.
fn failed(e: &str, code: u8) -> ExitCode {
    eprintln!("nvtxr: {e}");
    ExitCode::from(code)
}

fn main() -> ExitCode {
    match Cli::parse().command {
        Command::Record {
            outputs,
            wait,
            command,
            keep,
            gpu,
        } => {
            let keep = keep.as_deref().map(expand).transpose();
            match (outputs.expanded(), keep) {
                (Ok(outputs), Ok(keep)) => {
                    record::run(&command, &outputs, wait, keep.as_deref(), gpu)
                }
                (Err(e), _) | (_, Err(e)) => failed(&e, 2),
            }
        }
        Command::Report {
            outputs,
            dirs,
            align_on,
            per_rank,
        } => {
            let outputs = match outputs.expanded() {
                Ok(outputs) => outputs,
                Err(e) => return failed(&e, 2),
            };
            signals::install();
            signals::converting();
            match report(&dirs, &outputs, &RankOptions { align_on, per_rank }) {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => match signals::stopped_by() {
                    Some(signal) => failed(
                        &format!("stopped by signal {signal}; no output was left half-written, and the recording is as it was"),
                        128 + signal as u8,
                    ),
                    None => failed(&e, 1),
                },
            }
        }
        Command::View { dirs, options } => match view::run(&dirs, &options) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => failed(&e, 1),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<Cli, clap::Error> {
        Cli::try_parse_from(std::iter::once("nvtxr").chain(args.iter().copied()))
    }

    #[test]
    fn options_before_or_after_the_recording_directory() {
        for args in [
            &["report", "rec", "--html", "-o", "t.json"][..],
            &["report", "--html", "--output=t.json", "rec"][..],
        ] {
            let Command::Report { outputs, dirs, .. } = parse(args).unwrap().command else {
                panic!("not report")
            };
            assert_eq!(
                (dirs, outputs.trace, outputs.html),
                (vec!["rec".into()], "t.json".into(), true)
            );
        }
    }

    #[test]
    fn several_recordings_and_the_rank_options() {
        let args = &[
            "report",
            "r0",
            "r1",
            "--align-on",
            "barrier",
            "r2",
            "--per-rank",
            "step",
        ];
        let Command::Report {
            dirs,
            align_on,
            per_rank,
            ..
        } = parse(args).unwrap().command
        else {
            panic!("not report")
        };
        assert_eq!(dirs, ["r0", "r1", "r2"].map(PathBuf::from));
        assert_eq!(
            (align_on.as_deref(), per_rank.as_deref()),
            (Some("barrier"), Some("step"))
        );
        assert!(parse(&["report"]).is_err(), "a directory is required");
    }

    #[test]
    fn the_command_keeps_its_own_options() {
        let Command::Record {
            command,
            wait,
            outputs,
            keep,
            ..
        } = parse(&[
            "record", "-q", "--wait", "primary", "--keep", "rec", "--", "python", "-m", "x",
            "--html",
        ])
        .unwrap()
        .command
        else {
            panic!("not record")
        };
        assert_eq!(command, ["python", "-m", "x", "--html"]);
        assert_eq!(wait, Wait::Primary);
        assert_eq!(keep, Some(PathBuf::from("rec")));
        assert!(outputs.quiet && !outputs.html);
    }

    #[test]
    fn output_names_expand_as_nsight_systems_expands_them() {
        std::env::set_var("NVTXR_TEST_RANK", "3");
        let pid = std::process::id();
        assert_eq!(
            expand(Path::new("run.%q{NVTXR_TEST_RANK}.%p.100%%.json")).unwrap(),
            PathBuf::from(format!("run.3.{pid}.100%.json"))
        );
        assert!(!expand(Path::new("%h"))
            .unwrap()
            .to_string_lossy()
            .is_empty());
        assert!(expand(Path::new("r.%q{NVTXR_TEST_UNSET_VARIABLE}"))
            .unwrap_err()
            .contains("NVTXR_TEST_UNSET_VARIABLE"));
        assert!(expand(Path::new("r.%x")).is_err());
        assert!(expand(Path::new("r.%q{RANK")).is_err());
    }

    #[test]
    fn the_help_says_what_nvtxr_does() {
        use clap::CommandFactory;
        let help = Cli::command().render_help().to_string();
        assert!(
            help.starts_with("See any program's NVTX annotations without Nsight: `nvtxr record"),
            "{help}"
        );
    }

    #[test]
    fn an_unknown_option_before_the_command_is_an_error() {
        let err = parse(&["record", "--bogus", "--", "./app"]).unwrap_err();
        assert_eq!(err.kind(), clap::error::ErrorKind::UnknownArgument);
        assert!(parse(&["record", "--bogus", "./app"]).is_err());
        // The command's own options, with or without `--`.
        for args in [
            &["record", "--", "./app", "--bogus", "-q"][..],
            &["record", "./app", "--bogus", "-q"][..],
        ] {
            let Command::Record {
                command, outputs, ..
            } = parse(args).unwrap().command
            else {
                panic!("not record")
            };
            assert_eq!(command, ["./app", "--bogus", "-q"]);
            assert!(!outputs.quiet);
        }
    }

    #[test]
    fn lists_units_and_bad_input() {
        let Command::Report { outputs, .. } = parse(&[
            "report",
            "--nvtx-domain-include=default,io",
            "--time-unit",
            "us",
            "--capture-range",
            "step@io",
            "rec",
        ])
        .unwrap()
        .command
        else {
            panic!("not report")
        };
        assert_eq!(outputs.selection.include, ["default", "io"]);
        assert_eq!(outputs.time_unit, summary::Unit::Us);
        assert_eq!(outputs.selection.capture_range.as_deref(), Some("step@io"));
        assert!(parse(&["report"]).is_err(), "a directory is required");
        assert!(parse(&["record"]).is_err(), "a command is required");
        assert!(parse(&["report", "--time-unit", "weeks", "rec"]).is_err());
        assert_eq!(
            parse(&["--version"]).unwrap_err().kind(),
            clap::error::ErrorKind::DisplayVersion
        );
    }
}
