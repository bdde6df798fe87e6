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
mod nsight;
mod output;
mod outputs;
mod parquet;
mod perfetto;
mod progress;
mod ranks;
mod record;
mod report;
mod signals;
mod sqlite;
mod summary;
mod temporary;
mod view;

use clap::{Parser, Subcommand};
use outputs::{expand, Outputs};
use report::{report, RankOptions};
use std::ffi::OsString;
use std::path::PathBuf;

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
        #[arg(long, value_enum, default_value_t = record::Wait::All)]
        wait: record::Wait,
        /// Keep the raw recording in DIR (a new or empty directory; %q{VAR},
        /// %h and %p expanded), for `nvtxr report` to merge with others.
        #[arg(long, value_name = "DIR")]
        keep: Option<PathBuf>,
        #[command(flatten)]
        gpu: record::GpuOptions,
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
        /// Run a recipe of `nvtxr.recipes` without Python and print its
        /// table as CSV on stdout: `pace NAME` (each rank's duration of every
        /// instance of the range NAME, by iteration) or `stragglers NAME`
        /// (per iteration, the slowest rank and its lag behind the median).
        #[arg(long, num_args = 2, value_names = ["RECIPE", "NAME"])]
        recipe: Option<Vec<String>>,
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

/// An error's exit: said on stderr, with `code`.
fn failed(e: &str, code: u8) -> u8 {
    eprintln!("nvtxr: {e}");
    code
}

/// Runs the `nvtxr` command with `args` (the program's name first, as
/// `std::env::args_os` gives them) and returns its exit status (a parse
/// error or `--help` exits the process, as clap does). The `nvtxr`
/// program calls it, and so does the Python package's `nvtxr` script (from
/// its native module), so `pip install` gives a command that records.
pub fn run(args: impl IntoIterator<Item = OsString>) -> u8 {
    match Cli::parse_from(args).command {
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
                    record::run(&command, &outputs, wait, keep.as_deref(), &gpu)
                }
                (Err(e), _) | (_, Err(e)) => failed(&e, 2),
            }
        }
        Command::Report {
            outputs,
            dirs,
            align_on,
            per_rank,
            recipe,
        } => {
            let recipe = recipe.map(|r| (r[0].clone(), r[1].clone()));
            let outputs = match outputs.expanded() {
                Ok(outputs) => outputs,
                Err(e) => return failed(&e, 2),
            };
            signals::install();
            signals::converting();
            let stopped = "no output was left half-written, and the recording is as it was";
            signals::on_second_signal(&format!("\nnvtxr: stopped; {stopped}\n"));
            let ranks = RankOptions {
                align_on,
                per_rank,
                recipe,
            };
            match report(&dirs, &outputs, &ranks) {
                Ok(()) => 0,
                Err(e) => match signals::stopped_by() {
                    Some(signal) => failed(
                        &format!("stopped by signal {signal}; {stopped}"),
                        128 + signal as u8,
                    ),
                    None => failed(&e.message, 1),
                },
            }
        }
        Command::View { dirs, options } => match view::run(&dirs, &options) {
            Ok(()) => 0,
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
        assert_eq!(wait, record::Wait::Primary);
        assert_eq!(keep, Some(PathBuf::from("rec")));
        assert!(outputs.quiet && !outputs.html);
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
