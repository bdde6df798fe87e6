//! nvtxr's production workflows as a library: building the artifacts
//! ([`artifacts`]), installing them ([`install`]) and the Python wheel
//! carrying them ([`wheel`]). The `cargo xtask`
//! command runs them; the test harness builds through [`artifacts`] too, so
//! what is tested is what is installed.

pub mod artifacts;
pub mod install;
pub mod version;
pub mod wheel;
