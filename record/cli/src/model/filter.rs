//! What a report keeps.

use super::{Details, Scan};

/// Which ranges and marks a report keeps (`--capture-range`, `--nvtx-domain-include`,
/// `--nvtx-domain-exclude`, as Nsight Systems names them).
#[derive(Debug, Clone, Default, clap::Args)]
pub struct Selection {
    /// Keep only what starts inside an instance of this NVTX range
    /// (`NAME` or `NAME@DOMAIN`, `default` for the default domain).
    #[arg(long, value_name = "NAME[@DOMAIN]")]
    pub capture_range: Option<String>,
    /// Keep only these domains (comma-separated; `default` is the default domain).
    #[arg(
        long = "nvtx-domain-include",
        value_name = "DOMAINS",
        value_delimiter = ','
    )]
    pub include: Vec<String>,
    /// Drop these domains (comma-separated; `default` is the default domain).
    #[arg(
        long = "nvtx-domain-exclude",
        value_name = "DOMAINS",
        value_delimiter = ','
    )]
    pub exclude: Vec<String>,
}

/// A selection, with the capture range's windows found.
#[derive(Debug, Clone, Default)]
pub struct Filter {
    include: Vec<String>,
    exclude: Vec<String>,
    windows: Option<Vec<(u64, u64)>>,
}

impl Filter {
    /// Keeps everything.
    pub fn all() -> Filter {
        Filter::default()
    }

    /// The selection's filter (one replay of its own for a capture range).
    pub fn new(selection: &Selection, scan: &Scan) -> std::io::Result<Filter> {
        Ok(Filter {
            include: selection.include.clone(),
            exclude: selection.exclude.clone(),
            windows: scan.windows(selection)?,
        })
    }

    #[inline]
    pub(super) fn keeps(&self, d: &Details, start: u64) -> bool {
        if self.include.is_empty() && self.exclude.is_empty() && self.windows.is_none() {
            return true;
        }
        let name = if d.domain.is_empty() {
            "default"
        } else {
            d.domain.as_str()
        };
        (self.include.is_empty() || self.include.iter().any(|i| i == name))
            && !self.exclude.iter().any(|e| e == name)
            && self.keeps_time(start)
    }

    /// Whether what starts at `start` is inside the capture range (when
    /// one is selected): a GPU launch, or an activity no launch was met for.
    #[inline]
    pub(super) fn keeps_time(&self, start: u64) -> bool {
        (self.windows.as_ref()).is_none_or(|w| w.iter().any(|&(s, e)| s <= start && start <= e))
    }
}
