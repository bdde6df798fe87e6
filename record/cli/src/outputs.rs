//! What `nvtxr record` and `nvtxr report` write: the options naming the
//! outputs, `%`-expansion of their names, and writing one (see `output`).

use crate::{model, output, progress, summary};
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};

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

/// The summary table's rows on the terminal unless `--rows` says.
const DEFAULT_ROWS: usize = 100;

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
    /// The same tables as Parquet, with `rank` and `host` columns, for
    /// DuckDB, Dask and `nvtxr.recipes`: `DIR/<TABLE>/<part>.parquet`, a
    /// part per report (per rank, under `nvtxr record` in a parallel job).
    #[arg(long, value_name = "DIR")]
    pub parquet: Option<PathBuf>,
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
    /// Group PyTorch's `emit_nvtx` ranges by their operator alone
    /// (`aten::linear, seq = 3, op_id = 7` as `aten::linear`).
    #[arg(long)]
    pub operators: bool,
    /// Group the summary's ranges by their exact names, as Nsight's
    /// `nvtx_sum` does; by default names that differ only in their numbers
    /// (`step 22`, `step 23`) are one row, `step {n}`.
    #[arg(long)]
    pub exact_names: bool,
    /// Thousands separators in the summary's numbers (table and CSV).
    #[arg(long)]
    pub separators: bool,
    /// The summary table's rows on the terminal, largest total first (0:
    /// every one); the CSV and JSON have every row.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_ROWS)]
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
            parquet: optional(&self.parquet)?,
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

    /// The `nvtxr report` command line that writes these outputs from the
    /// recording `dir` (for a conversion that was stopped), quoted for a shell.
    pub fn report_command(&self, dir: &Path) -> String {
        use clap::ValueEnum;
        let mut args: Vec<String> = vec!["nvtxr".into(), "report".into()];
        let mut option = |name: &str, value: Option<String>| {
            args.push(name.into());
            args.extend(value);
        };
        let shown = |p: &Path| p.to_string_lossy().into_owned();
        option("-o", Some(shown(&self.trace)));
        if let Some(f) = self.format.and_then(|f| f.to_possible_value()) {
            option("--format", Some(f.get_name().into()));
        }
        if self.html {
            option("--html", None);
        }
        for (name, path) in [
            ("--csv", &self.csv),
            ("--json", &self.json),
            ("--sqlite", &self.sqlite),
            ("--parquet", &self.parquet),
        ] {
            if let Some(p) = path {
                option(name, Some(shown(p)));
            }
        }
        if self.quiet {
            option("-q", None);
        }
        if let Some(u) = self
            .time_unit
            .to_possible_value()
            .filter(|_| self.time_unit != summary::Unit::Ns)
        {
            option("--time-unit", Some(u.get_name().into()));
        }
        if let Some(field) = &self.group_by {
            option("--group-by", Some(field.clone()));
        }
        if self.exact_names {
            option("--exact-names", None);
        }
        if self.operators {
            option("--operators", None);
        }
        if self.separators {
            option("--separators", None);
        }
        if self.rows != DEFAULT_ROWS {
            option("--rows", Some(self.rows.to_string()));
        }
        let selection = &self.selection;
        if let Some(range) = &selection.capture_range {
            option("--capture-range", Some(range.clone()));
        }
        for (name, domains) in [
            ("--nvtx-domain-include", &selection.include),
            ("--nvtx-domain-exclude", &selection.exclude),
        ] {
            if !domains.is_empty() {
                option(name, Some(domains.join(",")));
            }
        }
        args.push(shown(dir));
        let quoted: Vec<String> = args.iter().map(|a| shell_quoted(a)).collect();
        quoted.join(" ")
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
        if let Some(dir) = &self.parquet {
            if dir.exists() && !dir.is_dir() {
                return Err(format!(
                    "--parquet {}: not a directory (name a directory for the tables)",
                    dir.display()
                ));
            }
        }
        Ok(files
            .iter()
            .any(|(_, t)| *t == output::Target::Descriptor(libc::STDOUT_FILENO)))
    }

    /// How the summary groups ranges (`--exact-names`, `--operators`,
    /// `--group-by`).
    pub fn grouping(&self) -> summary::Grouping {
        summary::Grouping::new(self.exact_names, self.operators, self.group_by.as_deref())
    }

    pub fn format(&self) -> summary::Format {
        summary::Format {
            unit: self.time_unit,
            separators: self.separators,
        }
    }
}

/// Writes one output whole or not at all, only where `path` leads (see
/// `output`), with a progress line for a long one.
pub fn write_output(
    path: &Path,
    contents: &dyn Fn(&mut dyn Write) -> std::io::Result<()>,
    events: u64,
) -> Result<(), String> {
    progress::begin(format!("writing {}", path.display()), events);
    let written = output::Target::check(path)?.write(path, contents);
    progress::end();
    written
}

/// `text` as one word for a POSIX shell: as it is when nothing in it is
/// special, else in single quotes.
fn shell_quoted(text: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "/._-+=:,@%".contains(c);
    if !text.is_empty() && text.chars().all(plain) {
        text.to_string()
    } else {
        format!("'{}'", text.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn a_stopped_conversion_is_finished_by_the_same_outputs() {
        use clap::Parser;
        #[derive(Parser)]
        struct Args {
            #[command(flatten)]
            outputs: Outputs,
        }
        let parse = |args: &[&str]| {
            Args::try_parse_from(std::iter::once("nvtxr").chain(args.iter().copied()))
                .unwrap()
                .outputs
        };
        let outputs = parse(&[
            "-o",
            "my trace.json",
            "--html",
            "--sqlite",
            "t.sqlite",
            "--time-unit",
            "ms",
            "--rows",
            "5",
            "--nvtx-domain-include",
            "a,b",
            "-q",
        ]);
        assert_eq!(
            outputs.report_command(Path::new("/tmp/rec it's")),
            "nvtxr report -o 'my trace.json' --html --sqlite t.sqlite -q --time-unit ms --rows 5 \
             --nvtx-domain-include a,b '/tmp/rec it'\\''s'"
        );
        assert_eq!(
            parse(&[]).report_command(Path::new("rec")),
            "nvtxr report -o nvtxr-trace.pftrace rec"
        );
    }
}
