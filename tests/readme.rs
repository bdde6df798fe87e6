//! The C and C++ code of the README and `docs/c.md` compiles (`-Wall -Wextra -Werror`) and runs
//! under the event-log tool with the events it promises, and its Rust quick
//! starts build as pasted into new projects with their `Cargo.toml` lines.
//! (Its Rust code is also a doc test of the crate; its Python code is run by
//! the Python package's tests; its Haskell quick start is the package's
//! QuickStart example.)

use nvtxr_harness::{compile_c, root, run, work_dir, Producer, Tool};

/// The guides holding C and C++ code: the README's quick start, then the
/// C and C++ guide.
const GUIDES: [&str; 2] = ["README.md", "docs/c.md"];

/// The guides' code blocks in `language`, in order.
fn blocks(language: &str) -> Vec<String> {
    let fence = format!("```{language}\n");
    GUIDES
        .iter()
        .flat_map(|guide| {
            let text = std::fs::read_to_string(root().join(guide)).unwrap();
            text.split(&fence)
                .skip(1)
                .map(|rest| rest.split("```").next().unwrap().to_string())
                .collect::<Vec<_>>()
        })
        .collect()
}

/// Compiles and runs each block; returns each run's recorded calls.
fn run_blocks(language: &str, extension: &str) -> Vec<Vec<String>> {
    blocks(language)
        .iter()
        .enumerate()
        .map(|(i, code)| {
            let path = work_dir().join(format!("readme-{language}-{i}.{extension}"));
            std::fs::write(&path, code).unwrap();
            let exe = compile_c(path.to_str().unwrap(), Producer::NvtxrShared, &[]);
            let r = run(&exe, &[], Tool::EventLog("record"), &[]);
            assert!(r.success, "README {language} block {i}: {r:?}");
            r.calls().into_iter().map(str::to_owned).collect()
        })
        .collect()
}

#[test]
fn the_readme_c_code_compiles_and_records() {
    let runs = run_blocks("c", "c");
    assert_eq!(
        runs.len(),
        4,
        "the quick start, the scoped ranges, the counters and the struct payloads"
    );
    let quick_start = &runs[0];
    assert!(
        quick_start.contains(&"RangePushA \"epoch 1\" -> 0".to_string()),
        "{quick_start:#?}"
    );
    assert!(
        quick_start
            .iter()
            .any(|c| c.starts_with("DomainRangeStartEx domain=\"my library\" {msg=reg:\"step\"")),
        "{quick_start:#?}"
    );
    let scoped = &runs[1];
    let iterations = scoped
        .iter()
        .filter(|c| c.contains("\"iteration\""))
        .count();
    assert_eq!(
        iterations, 3,
        "iterations 0, 1 and 2 (the break): {scoped:#?}"
    );
    let pushes = scoped.iter().filter(|c| c.contains("Push")).count();
    let pops = scoped.iter().filter(|c| c.contains("Pop")).count();
    assert_eq!((pushes, pops), (4, 4), "every scope popped: {scoped:#?}");
    let samples: Vec<&String> = runs[2]
        .iter()
        .filter(|c| c.starts_with("CounterSample"))
        .collect();
    assert_eq!(samples.len(), 3, "{:#?}", runs[2]);
    assert!(samples[1].ends_with("value=0.5"), "{samples:?}");
    // The schema reaches the tool, and the push carries the struct as an
    // extended payload (NVTX_PAYLOAD_TYPE_EXT, one payload).
    let payloads = &runs[3];
    assert!(
        payloads
            .iter()
            .any(|c| c.starts_with("PayloadSchemaRegister domain=\"comm\"")),
        "{payloads:#?}"
    );
    let ext = nvtx_protocol::attr::PAYLOAD_EXT;
    assert!(
        payloads.iter().any(
            |c| c.starts_with("DomainRangePushEx domain=\"comm\" {msg=\"send\"")
                && c.contains(&format!("payloadtype={ext} "))
        ),
        "{payloads:#?}"
    );
}

#[test]
fn the_readme_cpp_code_compiles_and_records_in_the_right_domain() {
    let runs = run_blocks("cpp", "cpp");
    assert_eq!(runs.len(), 1);
    let calls = &runs[0];
    assert!(
        calls.iter().any(|c| c.starts_with(
            "DomainRangeStartEx domain=\"my library\" {msg=reg:\"step\" color=0xff76b900"
        )),
        "the range with a string registered in `my library` is recorded there: {calls:#?}"
    );
    assert!(
        calls
            .iter()
            .any(|c| c.starts_with("DomainRangeEnd domain=\"my library\"")),
        "{calls:#?}"
    );
}

/// The README's Rust quick starts as a user pastes them: each ```toml block
/// and the ```rust block after it make a new Cargo project outside the
/// workspace (its `path/to/nvtxr` pointed at this repository), built and run
/// under the event-log tool.
#[test]
fn the_readme_rust_quick_starts_build_and_run_as_pasted() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let pairs: Vec<(String, String)> = readme
        .split("```toml\n")
        .skip(1)
        .map(|rest| {
            let toml = rest.split("```").next().unwrap().to_string();
            let rust = rest
                .split("```rust\n")
                .nth(1)
                .and_then(|r| r.split("```").next())
                .expect("a rust block after the toml block")
                .to_string();
            (toml, rust)
        })
        .collect();
    assert_eq!(pairs.len(), 2, "the Rust and the tracing quick starts");
    let target = work_dir().join("readme-rust-target");
    let mut runs = Vec::new();
    for (i, (toml, rust)) in pairs.iter().enumerate() {
        let project = work_dir().join(format!("readme-rust-{i}"));
        std::fs::create_dir_all(project.join("src")).unwrap();
        let manifest = format!(
            "[package]\nname = \"quickstart{i}\"\nversion = \"0.0.0\"\nedition = \"2021\"\n\n[workspace]\n\n{}",
            toml.replace("path/to/nvtxr", root().to_str().unwrap())
        );
        std::fs::write(project.join("Cargo.toml"), manifest).unwrap();
        std::fs::write(project.join("src/main.rs"), rust).unwrap();
        let built =
            std::process::Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
                .args(["build", "--quiet"])
                .env("CARGO_TARGET_DIR", &target)
                .current_dir(&project)
                .output()
                .unwrap();
        assert!(
            built.status.success(),
            "quick start {i}: {}",
            String::from_utf8_lossy(&built.stderr)
        );
        let exe = target.join(format!("debug/quickstart{i}"));
        let r = run(&exe, &[], Tool::EventLog("record"), &[]);
        assert!(r.success, "quick start {i}: {r:?}");
        runs.push(r.calls().into_iter().map(str::to_owned).collect::<Vec<_>>());
    }
    let has = |calls: &[String], what: &str| calls.iter().any(|c| c.contains(what));
    for what in [
        "\"epoch 1\"",
        "\"checkpoint\"",
        "::hot_function\"",
        "\"step\"",
        "\"my library\"",
    ] {
        assert!(has(&runs[0], what), "{what}: {:#?}", runs[0]);
    }
    for what in ["\"fetched n=1\"", "\"fetch\""] {
        assert!(has(&runs[1], what), "{what}: {:#?}", runs[1]);
    }
}
