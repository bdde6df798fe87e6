//! The `nvtxr` program: see `nvtxr_command::run`.

use std::process::ExitCode;

/// Conversions make and free many small strings (names, args): mimalloc
/// does that in a fraction of glibc's time.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    ExitCode::from(nvtxr_command::run(std::env::args_os()))
}
