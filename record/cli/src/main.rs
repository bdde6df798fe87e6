//! `nvtxr`: see any program's NVTX annotations without Nsight.
//!
//! ```text
//! nvtxr record [OPTIONS] -- COMMAND [ARGS...]   run COMMAND (and its children) with the recording tool
//! nvtxr report [OPTIONS] DIR                    turn a recording directory (NVTXR_RECORD_DIR) into outputs
//!
//! OPTIONS
//!   -o, --output FILE   the Chrome trace (default nvtxr-trace.json); open in ui.perfetto.dev or chrome://tracing
//!   --html              also write a self-contained HTML timeline next to the trace (FILE with .html)
//!   --csv FILE          the summary as CSV
//!   --json FILE         the summary as JSON
//!   -q, --quiet         no progress line and no summary table on the terminal
//! ```

mod chrome;
mod html;
mod json;
mod model;
mod record;
mod summary;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

const USAGE: &str =
    "usage: nvtxr record [-o FILE] [--html] [--csv FILE] [--json FILE] [-q] -- COMMAND [ARGS...]
       nvtxr report [-o FILE] [--html] [--csv FILE] [--json FILE] [-q] DIR";

/// What to write, for both subcommands.
#[derive(Debug, Clone)]
pub struct Outputs {
    pub trace: PathBuf,
    pub html: bool,
    pub csv: Option<PathBuf>,
    pub json: Option<PathBuf>,
    pub quiet: bool,
}

impl Outputs {
    pub fn html_path(&self) -> PathBuf {
        self.trace.with_extension("html")
    }
}

/// Parses options up to the first positional argument or `--`; returns the rest.
fn parse(args: &[String]) -> Result<(Outputs, Vec<String>), String> {
    let mut outputs = Outputs {
        trace: "nvtxr-trace.json".into(),
        html: false,
        csv: None,
        json: None,
        quiet: false,
    };
    let mut i = 0;
    let value = |i: &mut usize, flag: &str| -> Result<PathBuf, String> {
        *i += 1;
        args.get(*i)
            .map(PathBuf::from)
            .ok_or_else(|| format!("{flag} needs a value"))
    };
    while i < args.len() {
        match args[i].as_str() {
            "-o" | "--output" => outputs.trace = value(&mut i, "--output")?,
            "--html" => outputs.html = true,
            "--csv" => outputs.csv = Some(value(&mut i, "--csv")?),
            "--json" => outputs.json = Some(value(&mut i, "--json")?),
            "-q" | "--quiet" => outputs.quiet = true,
            "--" => return Ok((outputs, args[i + 1..].to_vec())),
            a if a.starts_with('-') => return Err(format!("unknown option {a}")),
            _ => return Ok((outputs, args[i..].to_vec())),
        }
        i += 1;
    }
    Ok((outputs, Vec::new()))
}

/// Writes every requested output from a recording directory; prints the
/// summary. On failure says what could not be written.
pub fn report(dir: &Path, outputs: &Outputs) -> Result<(), String> {
    let recording = model::load(dir)
        .map_err(|e| format!("cannot read the recording in {}: {e}", dir.display()))?;
    let write =
        |path: &Path,
         contents: &dyn Fn(&mut std::io::BufWriter<std::fs::File>) -> std::io::Result<()>| {
            let file = std::fs::File::create(path)
                .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
            let mut out = std::io::BufWriter::new(file);
            contents(&mut out)
                .and_then(|()| std::io::Write::flush(&mut out))
                .map_err(|e| format!("cannot write {}: {e}", path.display()))
        };
    use std::io::Write;
    write(&outputs.trace, &|out| chrome::write(&recording, out))?;
    let rows = summary::rows(&recording);
    if outputs.html {
        let title = recording
            .processes
            .first()
            .map(|p| p.command.clone())
            .unwrap_or_default();
        write(&outputs.html_path(), &|out| {
            out.write_all(html::page(&recording, &title).as_bytes())
        })?;
    }
    if let Some(path) = &outputs.csv {
        write(path, &|out| out.write_all(summary::csv(&rows).as_bytes()))?;
    }
    if let Some(path) = &outputs.json {
        write(path, &|out| out.write_all(summary::json(&rows).as_bytes()))?;
    }
    if !outputs.quiet {
        println!(
            "\nNVTX range summary ({} events, {} process(es)):\n",
            recording.events,
            recording.processes.len()
        );
        print!("{}", summary::table(&rows));
        println!(
            "\ntrace: {} (open it in https://ui.perfetto.dev or chrome://tracing)",
            outputs.trace.display()
        );
        if outputs.html {
            println!("timeline: {}", outputs.html_path().display());
        }
    }
    Ok(())
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(command) = args.first() else {
        eprintln!("{USAGE}");
        return ExitCode::from(2);
    };
    let parsed = parse(&args[1..]);
    let (outputs, rest) = match parsed {
        Ok(p) => p,
        Err(e) => {
            eprintln!("nvtxr: {e}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    match command.as_str() {
        "record" if !rest.is_empty() => record::run(&rest, &outputs),
        "report" if rest.len() == 1 => match report(Path::new(&rest[0]), &outputs) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("nvtxr: {e}");
                ExitCode::from(1)
            }
        },
        "-h" | "--help" | "help" => {
            println!("{USAGE}");
            ExitCode::SUCCESS
        }
        _ => {
            eprintln!("{USAGE}");
            ExitCode::from(2)
        }
    }
}
