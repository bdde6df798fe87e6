//! The Python wheel: the `nvtxr` package, whose native module carries the
//! `nvtxr` command and its recording tool (see `nvtxr._cli`), so that `pip
//! install` of the wheel alone gives `nvtxr record`. maturin builds it
//! (manylinux-tagged, stripped), as `pip install ./bindings/python` does.

use crate::artifacts::{check, root};
use std::path::{Path, PathBuf};
use std::process::Command;

/// Builds the wheel into `out`; returns its path, or what is missing.
pub fn wheel(out: &Path) -> Result<PathBuf, String> {
    let python = std::env::var("PYTHON").unwrap_or_else(|_| "python3".into());
    has_maturin(&python)?;
    std::fs::create_dir_all(out).unwrap();
    check(
        "maturin build",
        Command::new(&python)
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
