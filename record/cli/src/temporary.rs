//! The temporary files `nvtxr` keeps for itself (the summary's sorted runs,
//! `nvtxr view`'s index): anonymous (`tempfile::tempfile`: unlinked from the
//! start, gone when `nvtxr` exits, whatever ends it), in TMPDIR. Their
//! failures (a full disk, most likely) are told apart from the recording's
//! own: [`message`] says which file and where.

use std::fs::File;

/// A temporary file's failure: what the file keeps, and the error.
#[derive(Debug)]
struct Failure {
    what: &'static str,
    error: std::io::Error,
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        write!(
            f,
            "cannot keep {} in a temporary file in {} (TMPDIR): {}",
            self.what,
            std::env::temp_dir().display(),
            self.error
        )
    }
}

impl std::error::Error for Failure {}

/// The error of a temporary file keeping `what` ("the index"...), marked
/// as such.
pub fn failed(what: &'static str) -> impl Fn(std::io::Error) -> std::io::Error {
    move |error| std::io::Error::other(Failure { what, error })
}

/// A new temporary file to keep `what` in.
pub fn file(what: &'static str) -> std::io::Result<File> {
    tempfile::tempfile().map_err(failed(what))
}

/// What `e` says, when it is a temporary file's failure.
pub fn message(e: &std::io::Error) -> Option<String> {
    e.get_ref()?
        .downcast_ref::<Failure>()
        .map(|f| f.to_string())
}
