//! `crem-ctl setconf FILE`: applies a configuration file (conffile.rs) in
//! one config-set, as `wg setconf` does.

use crate::help::EXIT_STATUS;
use crate::model::Config;
use crate::nl::Conn;
use crate::request::set_config;
use crate::stdio::read_input;
use crate::{conffile, Fail, Res};
use std::path::{Path, PathBuf};

/// Apply a configuration file ([CREM] and [Peer] sections)
#[derive(clap::Args, Debug)]
#[command(
    long_about = "\
Applies a configuration file in one atomic config-set, in the spirit of
'wg setconf'. FILE may be - or /dev/stdin.

    # comments start with # or ;
    [CREM]
    Port = 50000
    Role = gateway
    Recovery = coded
    Adaptive = on
    K = 32
    M = 2
    SymbolLen = 0
    Epsilon = 1e-4
    MCong = 1
    Hold = 0
    MaxFlows = 1024
    MaxMemory = 64M
    Reporter = 198.51.100.1, 2001:db8::1

    [Peer]
    Prefix = 203.0.113.0/24
    Address = 198.51.100.2

The [CREM] keys are those of 'crem-ctl set' (case-insensitive; SymbolLen,
symbol-len and symbol_len are the same key) with the same value syntax.

The file is applied as a change, like 'crem-ctl set': keys not in the file
keep their values, and so do the lists. Reporter lines replace the reporter
list and [Peer] sections the peer list only when the file has them; a file
with only 'K = 16' changes k and nothing else. To empty a list, say so in
[CREM]: 'Reporter = none', 'Peer = none' (no flow is protected without
peers). This differs from 'wg setconf', which replaces the peer list
whatever the file holds: a partial file here never drops protection by
accident. 'crem-ctl showconf' writes every key, and 'none' for an empty
list, so applying its output restores the whole configuration:
'crem-ctl showconf | crem-ctl setconf /dev/stdin' changes nothing.

Two more commands take the same file (see their --help):
    setconf    scalars the file has are set; a list is replaced when the
               file has it, kept when not ('none' empties it)
    addconf    scalars the file has are set; the file's reporters and peers
               are added to the lists there (as 'reporter add', 'peer add')
    syncconf   scalars the file has are set; both lists become the file's,
               emptied when the file has none (as 'wg syncconf' makes the
               peers the file's); scalars the file lacks keep their values
               (as wg keeps the interface settings a file lacks)",
    after_long_help = EXIT_STATUS
)]
pub struct Args {
    /// The configuration file (- for standard input)
    file: PathBuf,
}

pub fn run(a: Args) -> Res {
    let cfg = read(&a.file)?;
    let mut c = Conn::open()?;
    set_config(&mut c, &cfg)
}

/// The configuration file `file` (- for standard input), parsed: what
/// setconf sends (addconf and syncconf start from it).
pub fn read(file: &Path) -> Res<Config> {
    let text = read_input(file)?;
    let text = String::from_utf8(text)
        .map_err(|_| Fail::Usage(format!("{}: not UTF-8 text", file.display())))?;
    conffile::parse(&text).map_err(|e| Fail::Usage(format!("{}: {e}", file.display())))
}
