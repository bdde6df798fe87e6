//! `nvtxr report`: recording directories into every requested output, and
//! the summary on the terminal.

use crate::outputs::{write_output, Outputs, TraceFormat};
use crate::{chrome, html, model, parquet, perfetto, progress, ranks, sqlite, summary, temporary};
use std::io::Write;
use std::path::PathBuf;

/// What `nvtxr report` does for many ranks.
#[derive(Debug, Clone, Default)]
pub struct RankOptions {
    /// `--align-on NAME`.
    pub align_on: Option<String>,
    /// `--per-rank NAME`.
    pub per_rank: Option<String>,
    /// `--recipe RECIPE NAME`.
    pub recipe: Option<(String, String)>,
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
/// warnings printed. A file given instead (a trace) is refused, saying what
/// to give and where a trace opens.
pub fn open(dirs: &[PathBuf]) -> Result<model::Scan, String> {
    if let Some(file) = dirs.iter().find(|d| d.is_file()) {
        return Err(format!(
            "{}: a file; nvtxr reads recording directories (`nvtxr record --keep DIR`, \
             NVTXR_RECORD_DIR). A trace (.pftrace, .json) opens in https://ui.perfetto.dev",
            file.display()
        ));
    }
    let scan = model::scan(dirs).map_err(unreadable(dirs))?;
    for warning in &scan.warnings {
        eprintln!("nvtxr: warning: {warning}");
    }
    Ok(scan)
}

/// Why a report wrote nothing, or not everything.
#[derive(Debug)]
pub struct Failure {
    pub message: String,
    /// The recording has no range or mark, and the tool dropped none:
    /// nothing in it is worth keeping.
    pub empty: bool,
}

impl From<String> for Failure {
    fn from(message: String) -> Failure {
        Failure {
            message,
            empty: false,
        }
    }
}

/// Writes every requested output from recording directories; prints the
/// summary. Fails, saying why, when nothing can be written (no recorded
/// process, nothing selected) or, after writing everything else, when part
/// of a recording could not be read or the tool had to drop events.
///
/// The recording is read in passes, one chunk at a time (see `model`): one
/// for the summary, one per output file.
pub fn report(dirs: &[PathBuf], outputs: &Outputs, ranks: &RankOptions) -> Result<(), Failure> {
    // Lines for people go where no output goes (`--recipe` prints on stdout).
    let mut to_stdout = outputs.check()?;
    if ranks.recipe.is_some() {
        if to_stdout {
            return Err("--recipe prints its table on stdout, where an output already goes: name a file for it".to_string().into());
        }
        to_stdout = true;
    }
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
    if let Some((recipe, name)) = &ranks.recipe {
        // On stdout, for a pipe or a file; the rest goes on as asked.
        let csv = ranks::recipe(&scan, &filter, recipe, name)?;
        std::io::stdout()
            .write_all(csv.as_bytes())
            .map_err(|e| format!("--recipe: cannot write: {e}"))?;
    }
    // The summary (when it is wanted) is replayed on a core of its own while
    // the trace is written; nothing is written when the replay selects no
    // event. The Parquet tables are fed by the trace's replay.
    let events = std::cell::Cell::new(None);
    let tables = match &outputs.parquet {
        Some(dir) if outputs.trace_format() != TraceFormat::Sqlite => Some(
            parquet::Tables::create(&scan, dir).map_err(|e| format!("{}: {e}", dir.display()))?,
        ),
        _ => None,
    };
    let tables = std::cell::RefCell::new(tables);
    // The replay into `trace`, and into the tables when they are written.
    let replay = |trace: &mut dyn model::Sink| match tables.borrow_mut().as_mut() {
        Some(tables) => {
            let mut export = tables.exporter(&scan)?;
            let mut both = model::Tee {
                first: trace,
                second: &mut export,
            };
            scan.replay(&filter, &mut both)
        }
        None => scan.replay(&filter, trace),
    };
    let (written, summary) = std::thread::scope(|threads| {
        let summary = outputs.wants_summary().then(|| {
            summary::beside(threads, || {
                let mut collector = summary::Collector::grouped(outputs.grouping());
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
                        let n = replay(&mut trace)?;
                        trace.finish()?;
                        n
                    }
                    TraceFormat::Perfetto => {
                        let mut trace =
                            perfetto::Writer::new(out, scan.origin, scan.on_wall_clock())?;
                        let n = replay(&mut trace)?;
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
    // Tables fed by the trace's replay: in place if it wrote events, else removed.
    let tables = tables.into_inner().map(|tables| {
        tables.finish(match (&written, replayed) {
            (Ok(()), Some(n)) => Ok(n),
            (Err(e), _) => Err(std::io::Error::other(e.clone())),
            (Ok(()), None) => Ok(0),
        })
    });
    if replayed == Some(0) {
        let (why, empty) = nothing_selected(&scan, &outputs.selection).map_err(&unreadable)?;
        let dropped = dropped(&scan);
        return Err(Failure {
            empty: empty && dropped.is_none(),
            message: match dropped {
                Some(dropped) => format!("{dropped}\nnvtxr: {why}"),
                None => why,
            },
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
    if let Some(dir) = &outputs.parquet {
        let written = tables.unwrap_or_else(|| {
            progress::begin(format!("writing {}", dir.display()), scan.records);
            let written = parquet::write(&scan, &filter, dir);
            progress::end();
            written
        });
        written.map_err(|e| format!("{}: {e}", dir.display()))?;
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
                page.finish(&scan, &rows, &outputs.grouping(), &marks)
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
            let text = gpu.text(&outputs.format(), outputs.rows);
            say(&mut term, text.map_err(&unreadable)?);
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
        false => Err(failures.join("\nnvtxr: ").into()),
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

/// Why a report kept no event: the recording has none (then `true`), or
/// the selection matched none (then what there is to select).
pub fn nothing_selected(
    scan: &model::Scan,
    selection: &model::Selection,
) -> std::io::Result<(String, bool)> {
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
        let why = format!(
            "no NVTX range or mark was recorded ({} loaded the tool); nothing written",
            summary::count(scan.processes.len() as u64, "process", "processes")
        );
        return Ok((why, true));
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
    let why = format!(
        "{} selected no range or mark; nothing written. The recording has the domains: {}; and the ranges: {}",
        asked.join(" "),
        list(&names.domains),
        list(&names.ranges)
    );
    Ok((why, false))
}
