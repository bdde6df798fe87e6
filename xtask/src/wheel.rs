//! The Python wheel with the whole tool: the `nvtxr` package, and the
//! `nvtxr` command with its recording tool, so that `pip install` of the
//! wheel alone gives `nvtxr record`.
//!
//! The release `nvtxr` and `libnvtxr_record.so` ([`crate::artifacts`]) are
//! copied, stripped, into the package's `_bin/` (git-ignored), where the
//! `nvtxr` console script (`nvtxr._cli`) runs them; then maturin builds the
//! wheel (manylinux-tagged, stripped), which carries every file of the
//! package.

use crate::artifacts::{artifacts, check, root};
use std::path::{Path, PathBuf};
use std::process::Command;

/// Where the package's bundled programs go.
pub const BUNDLED: &str = "bindings/python/python/nvtxr/_bin";

/// Builds the wheel into `out`; returns its path, or what is missing.
pub fn wheel(out: &Path) -> Result<PathBuf, String> {
    let python = std::env::var("PYTHON").unwrap_or_else(|_| "python3".into());
    has_maturin(&python)?;
    let a = artifacts();
    let bundled = root().join(BUNDLED);
    std::fs::create_dir_all(&bundled).unwrap();
    for (from, name) in [(&a.nvtxr, "nvtxr"), (&a.record_tool, "libnvtxr_record.so")] {
        let to = bundled.join(name);
        let _ = std::fs::remove_file(&to);
        std::fs::copy(from, &to).unwrap();
        check(
            &format!("strip {name}"),
            Command::new("strip")
                .arg("--strip-debug")
                .arg(&to)
                .output()
                .unwrap(),
        );
    }
    std::fs::create_dir_all(out).unwrap();
    check(
        "maturin build",
        Command::new(python)
            .args(["-m", "maturin", "build", "--release", "--strip", "-o"])
            .arg(out)
            .current_dir(root().join("bindings/python"))
            .output()
            .unwrap(),
    );
    // The wheel just written: the newest in `out`.
    Ok(std::fs::read_dir(out)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "whl"))
        .max_by_key(|w| std::fs::metadata(w).and_then(|m| m.modified()).ok())
        .expect("maturin wrote a wheel"))
}

/// Whether `python` runs maturin; if not, what to install.
fn has_maturin(python: &str) -> Result<(), String> {
    let maturin = Command::new(python)
        .args(["-m", "maturin", "--version"])
        .output();
    match maturin {
        Ok(o) if o.status.success() => Ok(()),
        _ => Err(format!(
            "maturin is not installed for {python}: `{python} -m pip install 'maturin>=1.5,<2'` \
             (or set PYTHON to a Python that has it)"
        )),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn without_maturin_it_says_what_to_install() {
        let e = super::has_maturin("/nonexistent/python3").unwrap_err();
        assert!(e.contains("pip install 'maturin"), "{e}");
    }
}
