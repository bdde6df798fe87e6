//! The `nvtxr view` tests' shared pieces: a running server and the
//! recordings it serves.

use super::*;
use nvtxr_harness::artifacts;
use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

/// A running `nvtxr view`, stopped when dropped.
pub struct Server {
    child: Child,
    pub port: u16,
    /// The token of the URL it printed (empty with `--no-token`).
    pub token: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `nvtxr view ARGS...`, once it says where it listens.
pub fn view(args: &[&str]) -> Server {
    let mut child = Command::new(&artifacts().nvtxr)
        .arg("view")
        .args(args)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let url = line
        .split("http://127.0.0.1:")
        .nth(1)
        .unwrap_or_else(|| panic!("no address in {line:?}"))
        .split(' ')
        .next()
        .unwrap();
    let port = url.split('/').next().unwrap().parse().unwrap();
    let token = url.split("?token=").nth(1).unwrap_or("").to_string();
    Server { child, port, token }
}

impl Server {
    /// GET `path` with `host` as the Host header, showing the token in its
    /// cookie: the status and the body.
    pub fn get_as(&self, host: &str, path: &str) -> (u16, String) {
        let cookie = format!("Cookie: nvtxr-view-{}={}\r\n", self.port, self.token);
        let (status, _, body) = self.request(host, path, &cookie);
        (status, body)
    }

    /// GET `path` with `host` as the Host header and `headers` (see
    /// [`http_get`]).
    pub fn request(&self, host: &str, path: &str, headers: &str) -> (u16, String, String) {
        http_get(self.port, host, path, headers)
    }

    pub fn get(&self, path: &str) -> Value {
        let (status, body) = self.get_as(&format!("127.0.0.1:{}", self.port), path);
        assert_eq!(status, 200, "{path}: {body}");
        serde_json::from_str(&body).unwrap()
    }

    /// The URL nvtxr printed.
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}/?token={}", self.port, self.token)
    }
}

/// A recording of `record_scenarios SCENARIO` kept in `dir/rec`, and its
/// JSON trace's events.
pub fn recorded(dir: &Path, command: &[&str]) -> (PathBuf, Vec<Event>) {
    let trace = dir.join("t.json");
    let rec = kept(dir, &["-o", trace.to_str().unwrap()], command);
    (rec, events(&load(&trace)))
}
