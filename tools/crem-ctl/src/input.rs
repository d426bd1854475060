//! The INPUT of `decode` and `roce`: one message or packet as hex (several
//! words joined), - (hex on standard input) or @FILE (hex in a file);
//! tcpdump -x text given the same ways; or a capture file with -r.

use crate::capture::{self, Mode, Opts};
use crate::stdio::read_input;
use crate::{hex, tcpdump, Fail, Res};
use std::path::{Path, PathBuf};

// INPUT and -r, as both commands take them. No doc comment: clap would
// take it for the command's about.
#[derive(clap::Args, Debug)]
#[group(skip)]
pub struct Input {
    /// Hex (several words are joined), - (stdin) or @FILE
    #[arg(
        value_name = "INPUT",
        required_unless_present = "read",
        conflicts_with = "read"
    )]
    input: Vec<String>,
    /// Read a pcap or pcapng capture (- for standard input)
    #[arg(short = 'r', long = "read", value_name = "FILE")]
    read: Option<PathBuf>,
}

impl Input {
    /// A capture (-r FILE, or tcpdump text in INPUT) is run here, printing
    /// as it goes (`None`); else the octets of the one message or packet.
    pub fn octets(self, opts: Opts) -> Res<Option<Vec<u8>>> {
        if let Some(f) = self.read {
            return capture::run_file(&f, opts).map(|()| None);
        }
        let text = text(&self.input)?;
        if tcpdump::looks_like(&text) {
            return capture::run_text(&text, opts).map(|()| None);
        }
        if let Mode::Crem { port: Some(_) } = opts.mode {
            return Err(Fail::Usage(
                "--port selects the packets of a capture (-r FILE or tcpdump -x text)".into(),
            ));
        }
        hex_bytes(&text).map(Some)
    }
}

/// HEX [HEX...], - (hex on stdin) or @FILE (hex in a file) → its text.
fn text(args: &[String]) -> Res<String> {
    let arg = args.join(" ");
    Ok(if arg == "-" {
        String::from_utf8_lossy(&read_input(Path::new("-"))?).into_owned()
    } else if let Some(f) = arg.strip_prefix('@') {
        String::from_utf8_lossy(&read_input(Path::new(f))?).into_owned()
    } else {
        arg
    })
}

/// The octets of `text`'s hex (nonempty).
fn hex_bytes(text: &str) -> Res<Vec<u8>> {
    let b = hex::decode(text).map_err(|e| Fail::Usage(format!("input is not hex: {e}")))?;
    if b.is_empty() {
        return Err(Fail::Usage("empty input".into()));
    }
    Ok(b)
}
