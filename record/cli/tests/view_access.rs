//! `nvtxr view`'s refusals: requests for another host or malformed ones,
//! requests without the printed token (from another user too), a trace
//! given where a recording is wanted.

mod common;

use common::view::*;
use common::*;
use nvtxr_harness::{artifacts, have_tool};
use std::process::Command;

fn scratch(name: &str) -> common::Scratch {
    scratch_in("view", name)
}

#[test]
fn requests_for_another_host_and_bad_ones_are_refused() {
    let dir = scratch("refused");
    let exe = scenarios();
    let (rec, _) = recorded(&dir, &[exe.to_str().unwrap(), "worker"]);
    let server = view(&["-q", rec.to_str().unwrap()]);
    let port = server.port;
    // A page elsewhere reaching the server through its own host name (DNS
    // rebinding) gets nothing.
    for host in [format!("evil.example:{port}"), "127.0.0.1:1".into()] {
        let (status, _) = server.get_as(&host, "/meta");
        assert_eq!(status, 403, "{host}");
    }
    let (status, page) = server.get_as(&format!("localhost:{port}"), "/");
    assert_eq!(status, 200);
    assert!(page.contains("let DATA = null;"), "the served page");
    let here = format!("127.0.0.1:{port}");
    for bad in ["/window?t0=0&t1=x&w=10", "/window?t1=5&w=10"] {
        let (status, body) = server.get_as(&here, bad);
        assert_eq!(status, 400, "{bad}: {body}");
    }
    assert_eq!(server.get_as(&here, "/elsewhere").0, 404);

    // A trace file instead of a recording: said clearly.
    let out = nvtxr(&["view", dir.join("t.json").to_str().unwrap()], &[]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out).contains("reads recording directories"),
        "{}",
        text(&out)
    );
}

#[test]
fn a_trace_given_for_a_recording_says_what_to_give_to_report_and_view() {
    let dir = scratch("a-file");
    let trace = dir.join("t.pftrace");
    std::fs::write(&trace, b"not a recording").unwrap();
    for command in ["report", "view"] {
        let out = Command::new(&artifacts().nvtxr)
            .arg(command)
            .arg(&trace)
            .output()
            .unwrap();
        let said = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{command}: {said}");
        assert!(
            said.contains("a file; nvtxr reads recording directories (`nvtxr record --keep DIR`")
                && said.contains("opens in https://ui.perfetto.dev"),
            "{command}: {said}"
        );
    }
}

#[test]
fn only_requests_with_the_printed_token_are_answered() {
    let dir = scratch("token");
    let exe = scenarios();
    let (rec, _) = recorded(&dir, &[exe.to_str().unwrap(), "worker"]);
    let server = view(&["-q", rec.to_str().unwrap()]);
    let (port, token) = (server.port, server.token.clone());
    assert_eq!(token.len(), 32, "{}", server.url());
    let here = format!("127.0.0.1:{port}");
    // The token with its last digit changed (to another digit, whatever it was).
    let last = if token.ends_with('0') { '1' } else { '0' };
    let wrong = format!("{}{last}", &token[..31]);
    for (path, cookie) in [
        ("/meta".to_string(), String::new()),
        (format!("/meta?token={wrong}"), String::new()),
        ("/".into(), format!("Cookie: nvtxr-view-{port}={wrong}\r\n")),
        ("/".into(), format!("Cookie: nvtxr-view-1={token}\r\n")),
    ] {
        let (status, _, body) = server.request(&here, &path, &cookie);
        assert_eq!(status, 403, "{path} {cookie}: {body}");
        assert!(body.contains("with its token"), "{body}");
    }
    // The printed URL lets the browser in and sets the cookie its page's
    // requests then carry.
    let (status, head, _) = server.request(&here, &format!("/?token={token}"), "");
    assert_eq!(status, 200);
    assert!(
        head.contains(&format!(
            "Set-Cookie: nvtxr-view-{port}={token}; Path=/; HttpOnly; SameSite=Strict"
        )),
        "{head}"
    );
    assert!(server.get("/meta")["rows"].is_array());
    // Another account of the machine (as root: nobody) gets nothing, but
    // with --no-token.
    let other = |url: &str| -> Option<String> {
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } != 0 || !have_tool("curl") {
            return None;
        }
        let out = Command::new("setpriv")
            .args([
                "--reuid=65534",
                "--regid=65534",
                "--clear-groups",
                "curl",
                "-s",
                "-o",
                "/dev/null",
                "-w",
                "%{http_code}",
                url,
            ])
            .output()
            .unwrap();
        Some(String::from_utf8_lossy(&out.stdout).into_owned())
    };
    if let Some(code) = other(&format!("http://{here}/meta")) {
        assert_eq!(code, "403");
        let open = view(&["-q", "--no-token", rec.to_str().unwrap()]);
        assert!(open.token.is_empty());
        assert_eq!(
            other(&format!("http://127.0.0.1:{}/meta", open.port)).unwrap(),
            "200"
        );
    }
}
