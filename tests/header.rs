//! The committed header is what cbindgen generates now, with version macros
//! taken from Cargo.toml. `NVTXR_BLESS=1 cargo test --test header` rewrites it.

use std::path::Path;

fn generate() -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut config =
        cbindgen::Config::from_file(root.join("cbindgen.toml")).expect("cbindgen.toml");
    let from_toml = config.after_includes.take().unwrap_or_default();
    config.after_includes = Some(format!(
        "\n/* nvtxr's version, from Cargo.toml; nvtxr_version() returns NVTXR_VERSION. */\n\
         #define NVTXR_VERSION_MAJOR {major}\n\
         #define NVTXR_VERSION_MINOR {minor}\n\
         #define NVTXR_VERSION_PATCH {patch}\n\
         #define NVTXR_VERSION_STRING \"{major}.{minor}.{patch}\"\n\
         #define NVTXR_VERSION (NVTXR_VERSION_MAJOR * 1000000 + NVTXR_VERSION_MINOR * 1000 + NVTXR_VERSION_PATCH)\n\
         {from_toml}",
        major = env!("CARGO_PKG_VERSION_MAJOR"),
        minor = env!("CARGO_PKG_VERSION_MINOR"),
        patch = env!("CARGO_PKG_VERSION_PATCH"),
    ));
    let mut out = Vec::new();
    cbindgen::Builder::new()
        .with_crate(root)
        .with_config(config)
        .generate()
        .expect("cbindgen")
        .write(&mut out);
    String::from_utf8(out).unwrap()
}

#[test]
fn header_is_up_to_date() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("include/nvtxr.h");
    let fresh = generate();
    if std::env::var_os("NVTXR_BLESS").is_some() {
        std::fs::write(&path, &fresh).unwrap();
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == fresh,
        "include/nvtxr.h is stale: run `NVTXR_BLESS=1 cargo test --test header` and commit it"
    );
}
