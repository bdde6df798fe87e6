//! The legend of the HTML page and `nvtxr view`: the names the summary's
//! rows and the marks use, with their colors.

use super::Rows;
use std::collections::BTreeMap;

/// The legend: range names by most time, then marks' names, at most
/// `limit`, each with its first color.
pub fn legend(
    rows: &Rows,
    marks: &BTreeMap<String, Option<u32>>,
    limit: usize,
) -> std::io::Result<Vec<(String, Option<u32>)>> {
    let mut seen = std::collections::HashSet::new();
    let mut out = Vec::new();
    for row in rows.iter() {
        if out.len() >= limit {
            return Ok(out);
        }
        let row = row?;
        let name = row.range.split_once(':').map_or("", |(_, n)| n).to_string();
        if seen.insert(name.clone()) {
            out.push((name, row.color));
        }
    }
    for (name, color) in marks {
        if out.len() >= limit {
            break;
        }
        if seen.insert(name.clone()) {
            out.push((name.clone(), *color));
        }
    }
    Ok(out)
}
