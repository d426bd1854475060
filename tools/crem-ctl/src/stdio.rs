//! What the commands read and write: standard output (a closed pipe ends
//! crem-ctl quietly), JSON or text as -j and -p ask, files and standard
//! input.

use crate::{Fail, Res};
use std::io::{self, Read, Write};
use std::path::Path;

/// The global -j, -p and -s: how a command prints what it has.
#[derive(Clone, Copy, Debug, Default)]
pub struct Format {
    pub json: bool,
    pub pretty: bool,
    /// -s: counters inline in tables (text only; JSON always has them).
    pub stats: bool,
}

impl Format {
    /// Prints `v` as JSON with -j (indented with -p), else what `text`
    /// makes of it.
    pub fn print<T: serde::Serialize>(self, v: &T, text: impl FnOnce() -> String) {
        out(&if self.json {
            json(v, self.pretty)
        } else {
            text()
        });
    }
}

/// Writes to standard output; a closed pipe ends the program quietly.
pub fn out(s: &str) {
    let mut o = io::stdout().lock();
    if let Err(e) = o.write_all(s.as_bytes()).and_then(|_| o.flush()) {
        if e.kind() == io::ErrorKind::BrokenPipe {
            std::process::exit(0);
        }
        eprintln!("crem-ctl: stdout: {e}");
        std::process::exit(1);
    }
}

/// `v` as one line of JSON, or indented with `pretty`.
pub fn json<T: serde::Serialize>(v: &T, pretty: bool) -> String {
    let mut s = if pretty {
        serde_json::to_string_pretty(v)
    } else {
        serde_json::to_string(v)
    }
    .expect("serializable");
    s.push('\n');
    s
}

/// Reads a file, or standard input for "-".
pub fn read_input(path: &Path) -> Res<Vec<u8>> {
    if path.as_os_str() == "-" {
        let mut v = Vec::new();
        io::stdin()
            .read_to_end(&mut v)
            .map_err(|e| Fail::Usage(format!("standard input: {e}")))?;
        Ok(v)
    } else {
        std::fs::read(path).map_err(|e| Fail::Usage(format!("{}: {e}", path.display())))
    }
}

/// Standard input as text.
pub fn stdin_text() -> Res<String> {
    String::from_utf8(read_input(Path::new("-"))?)
        .map_err(|_| Fail::Usage("standard input: not UTF-8 text".into()))
}
