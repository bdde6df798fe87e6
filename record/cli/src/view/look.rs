//! How an event looks on the page besides its name: what it is, its color
//! and its tooltip's lines, numbered like the names (see `index`).

use crate::html;
use crate::model::{Details, Range, Style};
use serde::Serialize;
use std::fmt::Write;

/// What an event is, as its look says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum What {
    PushPop,
    NeverPopped,
    StartEnd,
    NeverEnded,
    Mark,
    /// A kernel, copy, set or synchronization on a GPU stream.
    Gpu,
}

impl What {
    const ALL: [What; 6] = [
        What::PushPop,
        What::NeverPopped,
        What::StartEnd,
        What::NeverEnded,
        What::Mark,
        What::Gpu,
    ];

    pub(super) fn of(r: &Range) -> What {
        match (r.style, r.unterminated) {
            (Style::PushPop, false) => What::PushPop,
            (Style::PushPop, true) => What::NeverPopped,
            (Style::StartEnd, false) => What::StartEnd,
            (Style::StartEnd, true) => What::NeverEnded,
        }
    }

    /// As the page shows it.
    fn text(self) -> &'static str {
        match self {
            What::PushPop => "push/pop",
            What::NeverPopped => "push/pop, never popped",
            What::StartEnd => "start/end",
            What::NeverEnded => "start/end, never ended",
            What::Mark => "mark",
            What::Gpu => "GPU activity",
        }
    }
}

/// How an event looks besides its name, as one text (numbered like the
/// names): its [`What`] as a digit (its index in [`What::ALL`]), its color
/// as 8 hex digits or `-`, then the tooltip's further lines (domain,
/// category, payload...). Few on most traces; one per event where each has
/// its own payload. Read back by [`look_answer`].
pub(super) fn look(out: &mut String, what: What, d: &Details) {
    out.clear();
    let _ = write!(out, "{}", what as u8);
    match d.color {
        Some(c) => drop(write!(out, "{c:08x}")),
        None => out.push('-'),
    }
    for (i, line) in html::about(d).iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        out.push_str(line);
    }
}

/// A look as [`look`] wrote it, as the page gets it.
pub(super) fn look_answer(text: &str) -> LookAnswer<'_> {
    let what = What::ALL[usize::from(text.as_bytes()[0] - b'0')];
    let (color, about) = match text.as_bytes()[1] {
        b'-' => (None, &text[2..]),
        _ => (u32::from_str_radix(&text[1..9], 16).ok(), &text[9..]),
    };
    LookAnswer {
        k: what.text(),
        a: about,
        c: color.map(crate::model::css_color),
    }
}

/// A look as the page gets it.
#[derive(Serialize)]
pub(super) struct LookAnswer<'a> {
    k: &'a str,
    #[serde(skip_serializing_if = "str::is_empty")]
    a: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    c: Option<String>,
}
