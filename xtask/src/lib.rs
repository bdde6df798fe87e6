//! nvtxr's production workflows as a library: building the artifacts
//! ([`artifacts`]) and installing them ([`install`]). The `cargo xtask`
//! command runs them; the test harness builds through [`artifacts`] too, so
//! what is tested is what is installed.

pub mod artifacts;
pub mod install;
