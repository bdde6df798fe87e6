//! The HTML timeline (`--html`) in headless Chromium.

mod common;

use common::*;
use nvtxr_harness::{compile_c, have_tool, Producer};

fn scratch(name: &str) -> common::Scratch {
    scratch_in("record", name)
}

#[test]
fn html_timeline_renders_the_ranges_in_headless_chromium() {
    if !have_tool("chromium") {
        return;
    }
    let exe = compile_c("example.c", Producer::NvtxrShared, &[]);
    let dir = scratch("html");
    let out = record(&dir, &["-q", "--html"], &[exe.to_str().unwrap()], &[]);
    assert!(out.status.success(), "{}", text(&out));
    let page = dir.join("trace.html");
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(
        !html.contains("http://") && !html.contains("https://"),
        "the page needs no network"
    );
    let dom = dump_dom(&dir, &format!("file://{}", page.display()));
    assert_draws_the_example(&dom);
}

#[test]
fn html_timeline_of_a_long_trace_draws_about_a_bar_per_pixel() {
    if !have_tool("chromium") {
        return;
    }
    let dir = html_of("html-many", "many");
    let dom = dump_dom(
        &dir,
        &format!("file://{}", dir.join("trace.html").display()),
    );
    let bars = dom.matches("class=\"range\"").count();
    // 80,000 ranges on 4 thread rows, about 1,000 pixels wide each.
    assert!((4..=4 * 1200).contains(&bars), "{bars} bars drawn");
    for t in 0..4 {
        assert!(
            dom.contains(&format!("data-name=\"busy {t}\"")),
            "busy {t} not drawn"
        );
    }
}

/// Records `record_scenarios SCENARIO` with `--html` into `scratch(name)`.
fn html_of(name: &str, scenario: &str) -> common::Scratch {
    let dir = scratch(name);
    let out = record(
        &dir,
        &["-q", "--html"],
        &[scenarios().to_str().unwrap(), scenario],
        &[],
    );
    assert!(out.status.success(), "{}", text(&out));
    dir
}

#[test]
fn html_timeline_bars_are_visible_readable_findable_and_summarized() {
    if !have_tool("chromium") {
        return;
    }
    let dir = html_of("html-colors", "colors");
    let page = dir.join("trace.html");
    let dom = dump_dom(&dir, &format!("file://{}#find=whi", page.display()));
    // Every bar has an outline (a white bar on a white row shows).
    assert!(
        dom.contains(".range rect { stroke: rgba(0, 0, 0, .45)"),
        "{dom}"
    );
    // Labels: dark on light bars, white on dark ones.
    for (name, ink) in [
        ("white", "#111"),
        ("yellow", "#111"),
        ("cyan", "#111"),
        ("navy", "#fff"),
    ] {
        let bar = dom
            .split("<g class=\"")
            .find(|g| g.contains(&format!("data-name=\"{name}\"")))
            .unwrap_or_else(|| panic!("{name} not drawn:\n{dom}"));
        assert!(
            bar.contains(&format!("fill=\"{ink}\">{name}")),
            "{name}: {bar}"
        );
    }
    // Found by name: the match outlined, the others dimmed.
    assert!(
        dom.contains("<g class=\"range found\" data-name=\"white\""),
        "{dom}"
    );
    assert!(
        dom.contains("<g class=\"range dim\" data-name=\"navy\""),
        "{dom}"
    );
    assert!(
        dom.contains("<span id=\"found\">1 match in view</span>"),
        "{dom}"
    );
    // Names with no color of their own: a distinct color each.
    let fill = |name: &str| {
        let bar = dom
            .split("<g class=\"")
            .find(|g| g.contains(&format!("data-name=\"{name}\"")))
            .unwrap_or_else(|| panic!("{name} not drawn"));
        bar.split("fill=\"")
            .nth(1)
            .unwrap()
            .split('"')
            .next()
            .unwrap()
            .to_string()
    };
    let fills: std::collections::BTreeSet<String> =
        ["compute", "barrier", "loss", "Loss", "prefetch done"]
            .into_iter()
            .map(fill)
            .collect();
    assert_eq!(fills.len(), 5, "{fills:?}");
    // The legend and the summary table: the legend capped to the names with
    // the most time, in natural order.
    assert!(dom.contains("background:#ffff00\"></span>yellow"), "{dom}");
    assert!(dom.contains("and 14 more (by least time)"), "{dom}");
    let legend = dom.split("id=\"legend\"").nth(1).unwrap();
    let (two, ten) = (
        legend.find("</span>step 2<"),
        legend.find("</span>step 10<"),
    );
    if let (Some(two), Some(ten)) = (two, ten) {
        assert!(two < ten, "natural order");
    }
    assert_eq!(
        dom.matches("<td class=\"style\">PushPop</td><td>").count(),
        54,
        "{dom}"
    );
    // A process that recorded nothing says so.
    assert!(
        dom.contains("no NVTX events: the process made no NVTX call while recorded"),
        "{dom}"
    );
}

/// The page's data: its rows, their items (from the JSON the page holds).
fn page_data(page: &std::path::Path) -> serde_json::Value {
    let html = std::fs::read_to_string(page).unwrap();
    let at = html.find("{\"rows\":").expect("the page's data");
    let mut values = serde_json::Deserializer::from_str(&html[at..]).into_iter();
    values.next().unwrap().unwrap()
}

#[test]
fn html_timeline_has_a_row_per_gpu_stream_with_each_kernel_and_its_launch() {
    let (dir, out) = common::cuda::run("html", &["--html"], &[]);
    assert!(out.status.success(), "{}", text(&out));
    let data = page_data(&dir.join("trace.html"));
    let rows = data["rows"].as_array().unwrap();
    let mut drawn: Vec<_> = rows
        .iter()
        .filter(|r| r["process"].as_str().unwrap().starts_with("GPU "))
        .flat_map(|r| {
            let device: u64 = r["process"].as_str().unwrap()[4..5].parse().unwrap();
            let stream: u64 = r["label"].as_str().unwrap()["stream ".len()..]
                .parse()
                .unwrap();
            assert_ne!(r["pid"], rows[0]["pid"], "a GPU's own process");
            let items = r["items"].as_array().unwrap().clone();
            items.into_iter().filter_map(move |item| {
                // Kernels only (copies, sets and syncs have rows too), and
                // their launch's range, in the tooltip's arguments.
                let tip = item["i"].as_str().unwrap().to_string();
                tip.contains("domain: kernel").then(|| {
                    let range = (tip.lines())
                        .find_map(|l| l.strip_prefix("launched by: "))
                        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
                        .and_then(|l| l["range"].as_str().map(str::to_string))
                        .unwrap_or_default();
                    let name = item["n"].as_str().unwrap().to_string();
                    (name, range, device, stream)
                })
            })
        })
        .collect();
    drawn.sort();
    assert_eq!(drawn, common::cuda::scripted_kernels());

    // Each activity launched by a thread carries its launch (`l`: the
    // thread, the time), on a thread row of the process its row names
    // (`from`), no later than the activity; the flows are drawn.
    let threads: std::collections::BTreeSet<(u64, u64)> = rows
        .iter()
        .filter(|r| r["tid"].is_u64())
        .map(|r| (r["pid"].as_u64().unwrap(), r["tid"].as_u64().unwrap()))
        .collect();
    let mut launched = 0;
    for r in rows.iter().filter(|r| r["from"].is_u64()) {
        for item in r["items"].as_array().unwrap() {
            let [tid, at] = [0, 1].map(|i| item["l"][i].as_u64().unwrap());
            assert!(
                threads.contains(&(r["from"].as_u64().unwrap(), tid)),
                "{item}"
            );
            assert!(at <= item["s"].as_u64().unwrap(), "{item}");
            launched += 1;
        }
    }
    // Six kernels, two copies, a set: each launched by a traced call.
    assert_eq!(launched, 9);
    if have_tool("chromium") {
        let page = dir.join("trace.html");
        let dom = dump_dom(&dir, &format!("file://{}", page.display()));
        let svg = dom
            .split("<svg")
            .nth(1)
            .and_then(|s| s.split("</svg>").next());
        let drawn = svg.unwrap_or_else(|| panic!("no timeline drawn: {dom}"));
        assert_eq!(drawn.matches("<line class=\"flow\"").count(), launched);

        // A click on a kernel chooses it: its flow drawn as chosen, and the
        // range open around its launch on the launching thread outlined.
        let html = std::fs::read_to_string(&page).unwrap();
        let end = html.rfind("</body>").unwrap();
        let click = "<script>document.querySelector('g[data-name=\"relu(float*, int)\"]')\
                     .dispatchEvent(new MouseEvent('click', {bubbles: true}));</script>";
        let clicked = dir.join("clicked.html");
        std::fs::write(&clicked, format!("{}{click}{}", &html[..end], &html[end..])).unwrap();
        let dom = dump_dom(&dir, &format!("file://{}", clicked.display()));
        assert_eq!(
            dom.matches("<line class=\"flow chosen\"").count(),
            1,
            "{dom}"
        );
        assert_eq!(dom.matches("<line class=\"flow\"").count(), launched - 1);
        let chosen = dom.split("class=\"range chosen\"").count() - 1;
        assert_eq!(chosen, 1, "{dom}");
        assert!(dom.contains("class=\"range chosen\" data-name=\"relu(float*, int)\""));
        // The outline has the place of the "backward" range's bar.
        let place = |tag: &str| -> String {
            let at = dom.find(tag).unwrap_or_else(|| panic!("{tag}: {dom}"));
            let rect = &dom[at..];
            let rect = &rect[rect.find(" x=").unwrap()..];
            rect[..rect.find(" height=").unwrap()].to_string()
        };
        assert_eq!(
            place("<rect class=\"launch\""),
            place("data-name=\"backward\"")
        );
    }
}
