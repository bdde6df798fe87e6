//! `nvtxr view`: the timeline of a recording of any length, served to a
//! browser on the loopback address. The recording is indexed once (see
//! [`index`]); the page (the HTML timeline's, in its served mode) then asks
//! for what is on screen as it is zoomed and panned, so the browser only
//! ever holds about a bar per pixel per row.
//!
//! Requests: `/` the page, `/meta` the rows, summary and legend, `/window?
//! t0=&t1=&w=` the events between two times (ns from the trace's start) for
//! `w` pixels, `/find?q=&after=` the next range whose name contains `q`.
//! Only the address it was asked for is listened on (127.0.0.1 unless
//! `--address` names another), and on a loopback address only requests
//! that name it (or `localhost`) as their host are answered, so no web
//! page the user visits can reach the server through its own host name.
//! As Jupyter does, every request must carry the random token of the
//! printed URL (`?token=`, or the cookie the first such request sets), so
//! no other account on a shared machine reads the trace: `--no-token` only
//! when asked for.

pub mod index;
mod lanes;
mod look;
mod store;

use crate::model::{Filter, Selection};
use crate::{html, progress, summary};
use index::{Index, Window};
use std::collections::HashMap;
use std::io::{IsTerminal, Write};
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::time::Instant;

/// Rows of the summary table and names of the legend the page gets.
const SUMMARY_ROWS: usize = 1000;
const LEGEND: usize = 500;

/// `nvtxr view`'s options.
#[derive(Debug, Clone, clap::Args)]
pub struct Options {
    /// The port to listen on (0: any free one); the address is printed.
    #[arg(long, default_value_t = 0)]
    pub port: u16,
    /// The address to listen on. Anything but a loopback address opens the
    /// timeline to the network: only when asked for.
    #[arg(long, default_value_t = IpAddr::V4(Ipv4Addr::LOCALHOST))]
    pub address: IpAddr,
    /// No progress line while indexing.
    #[arg(short, long)]
    pub quiet: bool,
    /// Answer requests without the printed URL's token: anyone who can
    /// reach the address (every account of a shared machine) reads the
    /// trace.
    #[arg(long)]
    pub no_token: bool,
    #[command(flatten)]
    pub selection: Selection,
}

/// Indexes the recordings in `dirs` and serves their timeline until killed.
pub fn run(dirs: &[PathBuf], options: &Options) -> Result<(), String> {
    let unreadable = crate::report::unreadable(dirs);
    let scan = crate::report::open(dirs)?;
    let filter = Filter::new(&options.selection, &scan).map_err(&unreadable)?;
    if !options.quiet && std::io::stderr().is_terminal() {
        progress::enable();
    }
    let started = Instant::now();
    let mut index = Index::new(scan.origin, scan.end).map_err(&unreadable)?;
    progress::begin("indexing".into(), scan.records);
    // The summary is replayed on a core of its own while the index is built.
    let (replayed, collector) = std::thread::scope(|threads| {
        let summary = summary::beside(threads, || {
            let mut collector = summary::Collector::default();
            scan.replay(&filter, &mut collector).map(|_| collector)
        });
        let replayed = scan
            .replay(&filter, &mut index)
            .and_then(|n| index.finish().map(|()| n));
        let collector = summary.join().expect("the summary's replay does not panic");
        (replayed, collector)
    });
    progress::end();
    if replayed.map_err(&unreadable)? == 0 {
        let (why, _) =
            crate::report::nothing_selected(&scan, &options.selection).map_err(&unreadable)?;
        return Err(why);
    }
    let collector = collector.map_err(&unreadable)?;
    let marks = collector.marks.clone();
    let rows = collector.rows(None).map_err(&unreadable)?;
    let legend = summary::legend(&rows, &marks, LEGEND).map_err(&unreadable)?;
    let legend: Vec<html::Swatch> = legend
        .iter()
        .map(|(n, c)| html::Swatch::new(n, *c))
        .collect();
    let title = scan
        .processes
        .first()
        .map(|p| p.command.clone())
        .unwrap_or_default();
    let meta = serde_json::json!({
        "title": title,
        "grouping": summary::Grouping::default().label(),
        "end": index.end,
        "count": index.items,
        "processes": scan.processes.len(),
        "rows": index.rows().collect::<Vec<_>>(),
        "summary": rows.top(SUMMARY_ROWS).map_err(&unreadable)?,
        "legend": legend,
    })
    .to_string();
    let page = html::served_page(&title);
    let indexed = started.elapsed();

    let server = tiny_http::Server::http(SocketAddr::new(options.address, options.port))
        .map_err(|e| format!("cannot listen on {}:{}: {e}", options.address, options.port))?;
    let port = server
        .server_addr()
        .to_ip()
        .map(|a| a.port())
        .unwrap_or(options.port);
    let shown = match options.address {
        IpAddr::V6(a) => format!("[{a}]"),
        IpAddr::V4(a) => a.to_string(),
    };
    let token = (!options.no_token).then(|| Token::new(port)).transpose()?;
    let query = token
        .as_ref()
        .map_or(String::new(), |t| format!("?token={}", t.value));
    println!(
        "nvtxr view: {} of {} indexed in {:.1} s; the timeline is at http://{shown}:{port}/{query} (Ctrl-C to stop)",
        summary::count(index.items, "range and mark", "ranges and marks"),
        summary::count(scan.processes.len() as u64, "process", "processes"),
        indexed.as_secs_f64(),
    );
    let _ = std::io::stdout().flush();
    let hosts = allowed_hosts(options.address, port);
    for request in server.incoming_requests() {
        let answer = answer(&request, &hosts, token.as_ref(), &index, &meta, &page);
        let _ = request.respond(answer);
    }
    Ok(())
}

/// The `Host` headers answered: on a loopback address, the address and
/// `localhost` with the port; elsewhere any (`None`).
fn allowed_hosts(address: IpAddr, port: u16) -> Option<Vec<String>> {
    if !address.is_loopback() {
        return None;
    }
    Some(
        ["127.0.0.1", "localhost", "[::1]"]
            .iter()
            .map(|h| format!("{h}:{port}"))
            .collect(),
    )
}

type Answer = tiny_http::Response<std::io::Cursor<Vec<u8>>>;

fn reply(status: u16, kind: &str, body: Vec<u8>) -> Answer {
    let header = tiny_http::Header::from_bytes("Content-Type", kind).expect("a valid header");
    tiny_http::Response::from_data(body)
        .with_status_code(status)
        .with_header(header)
}

fn text(status: u16, body: &str) -> Answer {
    reply(
        status,
        "text/plain; charset=utf-8",
        body.as_bytes().to_vec(),
    )
}

fn json<T: serde::Serialize>(value: &T) -> Answer {
    let body = serde_json::to_vec(value).expect("plain data serializes");
    reply(200, "application/json", body)
}

/// The secret every request must show: in the URL's query (`token=`), or
/// in the cookie the server sets when one does.
struct Token {
    value: String,
    /// The cookie's name: one per port, as cookies are per host.
    cookie: String,
}

impl Token {
    fn new(port: u16) -> Result<Token, String> {
        let mut bytes = [0u8; 16];
        // SAFETY: getrandom fills the buffer it is given.
        let n = unsafe { libc::getrandom(bytes.as_mut_ptr().cast(), bytes.len(), 0) };
        if n != bytes.len() as isize {
            return Err(format!(
                "cannot make the view's token: {}",
                std::io::Error::last_os_error()
            ));
        }
        Ok(Token {
            value: bytes.iter().map(|b| format!("{b:02x}")).collect(),
            cookie: format!("nvtxr-view-{port}"),
        })
    }

    /// Whether `shown` is the token (compared in time independent of where
    /// it differs).
    fn is(&self, shown: &str) -> bool {
        shown.len() == self.value.len()
            && shown
                .bytes()
                .zip(self.value.bytes())
                .fold(0, |d, (a, b)| d | (a ^ b))
                == 0
    }

    /// Whether `request` shows the token in its query or its cookie.
    fn shown_by(&self, request: &tiny_http::Request, params: &HashMap<String, String>) -> bool {
        params.get("token").is_some_and(|t| self.is(t))
            || request
                .headers()
                .iter()
                .filter(|h| h.field.equiv("Cookie"))
                .flat_map(|h| h.value.as_str().split(';'))
                .filter_map(|c| c.trim().split_once('='))
                .any(|(name, value)| name == self.cookie && self.is(value))
    }

    /// The cookie that lets the page's own requests in.
    fn set_cookie(&self) -> tiny_http::Header {
        let value = format!(
            "{}={}; Path=/; HttpOnly; SameSite=Strict",
            self.cookie, self.value
        );
        tiny_http::Header::from_bytes("Set-Cookie", value).expect("a valid header")
    }
}

/// The answer to one request.
fn answer(
    request: &tiny_http::Request,
    hosts: &Option<Vec<String>>,
    token: Option<&Token>,
    index: &Index,
    meta: &str,
    page: &str,
) -> Answer {
    if let Some(hosts) = hosts {
        let host = request
            .headers()
            .iter()
            .find(|h| h.field.equiv("Host"))
            .map(|h| h.value.as_str().to_ascii_lowercase());
        if !host.is_some_and(|h| hosts.contains(&h)) {
            return text(403, "nvtxr view answers requests for its own address only");
        }
    }
    if *request.method() != tiny_http::Method::Get {
        return text(405, "only GET");
    }
    let (path, query) = request.url().split_once('?').unwrap_or((request.url(), ""));
    let params = parameters(query);
    if let Some(token) = token {
        if !token.shown_by(request, &params) {
            return text(
                403,
                "nvtxr view: open the URL nvtxr printed, with its token (?token=...)",
            );
        }
    }
    let number = |name: &str| -> Result<u64, String> {
        params
            .get(name)
            .ok_or(format!("missing {name}"))?
            .parse()
            .map_err(|_| format!("{name}: not a whole number"))
    };
    let result = match path {
        "/" => {
            let page = reply(200, "text/html; charset=utf-8", page.as_bytes().to_vec());
            Ok(match token {
                Some(token) => page.with_header(token.set_cookie()),
                None => page,
            })
        }
        "/meta" => Ok(reply(200, "application/json", meta.as_bytes().to_vec())),
        "/window" => (|| {
            let window = Window {
                t0: number("t0")?,
                t1: number("t1")?,
                width: number("w")?.min(u64::from(u32::MAX)) as u32,
            };
            Ok(json(&index.window(window)))
        })(),
        "/find" => {
            let query = params.get("q").map_or("", String::as_str);
            let from = number("after").map_or(0, |after| after.saturating_add(1));
            Ok(json(&index.find(query, from)))
        }
        _ => return text(404, "not found"),
    };
    result.unwrap_or_else(|e: String| text(400, &e))
}

/// A URL's query as names and (percent-decoded) values.
fn parameters(query: &str) -> HashMap<String, String> {
    query
        .split('&')
        .filter_map(|pair| pair.split_once('='))
        .map(|(k, v)| {
            let v = v.replace('+', " ");
            let decoded = percent_encoding::percent_decode_str(&v).decode_utf8_lossy();
            (k.to_string(), decoded.into_owned())
        })
        .collect()
}
