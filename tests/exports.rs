//! The shared library exports only `nvtxr_` symbols, every function of the
//! header, and has a SONAME.

use nvtxr_harness::artifacts;
use std::collections::BTreeSet;
use std::process::Command;

fn stdout(cmd: &mut Command) -> String {
    let out = cmd.output().expect("binutils");
    assert!(out.status.success());
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn exports_only_prefixed_symbols_and_all_header_functions() {
    let lib = artifacts().lib_dir.join("libnvtxr.so");
    let nm = stdout(Command::new("nm").args(["-D", "--defined-only"]).arg(&lib));
    let exported: BTreeSet<&str> = nm
        .lines()
        .filter_map(|l| l.split_whitespace().nth(2))
        .collect();
    let foreign: Vec<_> = exported
        .iter()
        .filter(|s| !s.starts_with("nvtxr_"))
        .collect();
    assert!(
        foreign.is_empty(),
        "non-nvtxr symbols exported: {foreign:?}"
    );

    let header =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/include/nvtxr.h")).unwrap();
    let declared: BTreeSet<&str> = header
        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|w| w.starts_with("nvtxr_") && !w.ends_with("_t"))
        .collect();
    assert_eq!(exported, declared, "exports and header functions differ");
}

#[test]
fn has_the_soname_of_its_compatibility_rule() {
    let lib = artifacts().lib_dir.join("libnvtxr.so");
    let dynamic = stdout(Command::new("readelf").arg("-d").arg(&lib));
    let want = format!("Library soname: [{}]", nvtxr_harness::install::soname());
    assert!(dynamic.contains(&want), "{dynamic}");
    // The rule (docs/abi.md): a 0.x release's SONAME names its minor version.
    use nvtxr_harness::install::soname_of;
    assert_eq!(soname_of("0.1.0"), "libnvtxr.so.0.1");
    assert_eq!(soname_of("0.2.3"), "libnvtxr.so.0.2");
    assert_eq!(soname_of("1.4.0"), "libnvtxr.so.1");
}
