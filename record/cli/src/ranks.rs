//! Many ranks in one trace: aligning recordings on an event every rank
//! passes together (the end of a barrier), and the per-rank view of a
//! repeated range (who is slow, by how much).

use crate::model::{Filter, Mark, Process, Range, Scan, Sink};
use crate::summary::{self, grid, Format};

/// Times of a named range's ends or a named mark, per recording.
struct Moments<'a> {
    name: &'a str,
    per_recording: Vec<Vec<u64>>,
}

impl Sink for Moments<'_> {
    fn range(&mut self, p: &Process, r: &Range) -> std::io::Result<()> {
        if r.details.name == self.name {
            self.per_recording[p.recording].push(r.end);
        }
        Ok(())
    }
    fn mark(&mut self, p: &Process, m: &Mark) -> std::io::Result<()> {
        if m.details.name == self.name {
            self.per_recording[p.recording].push(m.time);
        }
        Ok(())
    }
    fn wants_gpu(&self) -> bool {
        false
    }
}

/// What an alignment did to one recording.
#[derive(Debug, Clone, PartialEq)]
pub struct Shift {
    pub recording: usize,
    /// Added to every timestamp of the recording, in ns.
    pub ns: i64,
    /// Instances of the event both it and the first recording have.
    pub instances: usize,
}

/// Aligns every recording on the first: its k-th instance of `name` (the end
/// of a range, or a mark) is taken to happen when the first recording's
/// k-th does, and the recording is shifted by the median of those
/// differences (a few late instances do not move it). Memory: one
/// timestamp per instance of `name`.
pub fn align_on(scan: &mut Scan, name: &str) -> Result<Vec<Shift>, String> {
    let mut moments = Moments {
        name,
        per_recording: vec![Vec::new(); scan.placements.len()],
    };
    scan.replay(&Filter::all(), &mut moments)
        .map_err(|e| e.to_string())?;
    for (i, times) in moments.per_recording.iter_mut().enumerate() {
        if times.is_empty() {
            return Err(format!(
                "--align-on {name}: recording {} has no range or mark named {name}",
                i + 1
            ));
        }
        times.sort_unstable();
    }
    let reference = moments.per_recording[0].clone();
    let mut shifts = Vec::new();
    for (recording, times) in moments.per_recording.iter().enumerate().skip(1) {
        let mut differences: Vec<i64> = reference
            .iter()
            .zip(times)
            .map(|(&r, &t)| r as i64 - t as i64)
            .collect();
        differences.sort_unstable();
        let ns = differences[differences.len() / 2];
        scan.placements[recording].shift += ns;
        shifts.push(Shift {
            recording,
            ns,
            instances: differences.len(),
        });
    }
    scan.place();
    Ok(shifts)
}

/// One process's instances of the range.
struct Rank {
    key: u64,
    label: String,
    rank: Option<u32>,
    host: String,
    pid: u32,
    /// (start, duration), sorted by start once collected.
    instances: Vec<(u64, u64)>,
}

/// Each process's instances of the range `name`.
struct Durations<'a> {
    name: &'a str,
    per_process: Vec<Rank>,
}

impl Sink for Durations<'_> {
    fn range(&mut self, p: &Process, r: &Range) -> std::io::Result<()> {
        if r.details.name != self.name {
            return Ok(());
        }
        if self.per_process.last().is_none_or(|last| last.key != p.key) {
            self.per_process.push(Rank {
                key: p.key,
                label: p.label(),
                rank: p.rank,
                host: p.host.clone(),
                pid: p.pid,
                instances: Vec::new(),
            });
        }
        let entry = self.per_process.last_mut().expect("pushed above");
        entry.instances.push((r.start, r.end - r.start));
        Ok(())
    }
    fn mark(&mut self, _: &Process, _: &Mark) -> std::io::Result<()> {
        Ok(())
    }
    fn wants_gpu(&self) -> bool {
        false
    }
}

/// Each process's instances of the range `name`, by rank, each process's
/// by start. Memory: one duration per instance per rank.
fn instances(scan: &Scan, filter: &Filter, name: &str, option: &str) -> Result<Vec<Rank>, String> {
    let mut durations = Durations {
        name,
        per_process: Vec::new(),
    };
    scan.replay(filter, &mut durations)
        .map_err(|e| e.to_string())?;
    let mut ranks = durations.per_process;
    if ranks.is_empty() {
        return Err(format!("{option} {name}: no range named {name}"));
    }
    ranks.sort_by_key(|r| (r.rank.unwrap_or(u32::MAX), r.key));
    for r in &mut ranks {
        r.instances.sort_unstable();
    }
    Ok(ranks)
}

/// The per-rank table of the range `name`: one row per instance (by start
/// order on each rank), with each rank's duration, the spread (slowest
/// minus fastest) and the slowest rank.
pub fn per_rank(scan: &Scan, filter: &Filter, name: &str, f: &Format) -> Result<String, String> {
    let ranks = instances(scan, filter, name, "--per-rank")?;
    let instances = ranks.iter().map(|r| r.instances.len()).max().unwrap_or(0);
    let unit = f.unit.label();
    let mut header = vec!["Instance".to_string()];
    header.extend(ranks.iter().map(|r| format!("{} ({unit})", r.label)));
    header.extend([format!("Spread ({unit})"), "Slowest".to_string()]);
    let mut lines = vec![header];
    let mut slowest_count = vec![0usize; ranks.len()];
    for k in 0..instances {
        let row: Vec<Option<u64>> = ranks
            .iter()
            .map(|r| r.instances.get(k).map(|x| x.1))
            .collect();
        let present: Vec<(usize, u64)> = row
            .iter()
            .enumerate()
            .filter_map(|(i, d)| d.map(|d| (i, d)))
            .collect();
        let (slow, max) = *present
            .iter()
            .max_by_key(|(_, d)| *d)
            .expect("one rank has it");
        let min = present
            .iter()
            .map(|(_, d)| *d)
            .min()
            .expect("one rank has it");
        slowest_count[slow] += 1;
        let mut line = vec![(k + 1).to_string()];
        line.extend(row.iter().map(|d| d.map_or("-".to_string(), |d| f.time(d))));
        line.extend([f.time(max - min), ranks[slow].label.clone()]);
        lines.push(line);
    }
    let mut out = format!(
        "\nPer-rank view of \"{name}\" ({}):\n\n",
        summary::count(instances as u64, "instance", "instances")
    );
    out += &grid(&lines, &[ranks.len() + 2]);
    let most = (0..ranks.len())
        .max_by_key(|&i| slowest_count[i])
        .expect("ranks");
    out += &format!(
        "\nslowest most often: {} ({} of {})\n",
        ranks[most].label,
        slowest_count[most],
        summary::count(instances as u64, "instance", "instances")
    );
    Ok(out)
}

/// The recipes `nvtxr report --recipe` runs (those of Python's
/// `nvtxr.recipes` that need no GPU tables), as CSV with the same columns.
pub const RECIPES: [&str; 2] = ["pace", "stragglers"];

/// `--recipe RECIPE NAME`: `pace` (each rank's duration of every instance of
/// `name`, by iteration) or `stragglers` (per iteration, the slowest rank
/// and its lag behind the median), as CSV; times in ns from the trace's start.
pub fn recipe(scan: &Scan, filter: &Filter, recipe: &str, name: &str) -> Result<String, String> {
    if !RECIPES.contains(&recipe) {
        return Err(format!(
            "--recipe {recipe}: unknown (use {}; the others are nvtxr.recipes' in Python)",
            RECIPES.join(" or ")
        ));
    }
    let ranks = instances(scan, filter, name, &format!("--recipe {recipe}"))?;
    let rank = |r: &Rank| r.rank.map_or(String::new(), |n| n.to_string());
    let iterations = ranks.iter().map(|r| r.instances.len()).max().unwrap_or(0);
    let mut out = String::new();
    if recipe == "pace" {
        out += "rank,host,pid,iteration,start,end,duration\n";
        for k in 0..iterations {
            for r in &ranks {
                if let Some(&(start, duration)) = r.instances.get(k) {
                    let start = start.saturating_sub(scan.origin);
                    let end = start + duration;
                    out += &format!(
                        "{},{},{},{},{start},{end},{duration}\n",
                        rank(r),
                        r.host,
                        r.pid,
                        k + 1
                    );
                }
            }
        }
        return Ok(out);
    }
    out += "iteration,ranks,slowest_rank,slowest_host,slowest_pid,slowest,median,lag\n";
    for k in 0..iterations {
        let mut present: Vec<(u64, &Rank)> = ranks
            .iter()
            .filter_map(|r| r.instances.get(k).map(|i| (i.1, r)))
            .collect();
        present.sort_by_key(|(d, _)| *d);
        let n = present.len();
        let median = (present[(n - 1) / 2].0 + present[n / 2].0) as f64 / 2.0;
        let (slowest, r) = present[n - 1];
        out += &format!(
            "{},{n},{},{},{},{slowest},{median},{}\n",
            k + 1,
            rank(r),
            r.host,
            r.pid,
            slowest as f64 - median
        );
    }
    Ok(out)
}
