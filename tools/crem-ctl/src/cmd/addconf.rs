//! `crem-ctl addconf FILE`: the file's scalars set, its reporters and peers
//! added to the lists there, as `wg addconf` adds peers (read-modify-write,
//! rmw.rs).

use crate::help;
use crate::rmw::{self, RACE};
use crate::{Fail, Res};
use std::path::PathBuf;

/// Add a configuration file's peers and reporters, set its keys
#[derive(clap::Args, Debug)]
#[command(
    long_about = "\
Reads a configuration file in the format of 'crem-ctl setconf' (see its
--help; FILE may be - or /dev/stdin) and applies it on top of the current
configuration, in the spirit of 'wg addconf':

    the [CREM] keys the file has are set (the others keep their values);
    its Reporter addresses are added to the reporter list (one already
    there stays), as 'crem-ctl reporter add' adds them;
    its [Peer] sections are added to the peer list, as 'crem-ctl peer add'
    adds them: an entry already there with the same address stays, a
    prefix configured with another address is refused (exit 1, nothing
    changed).

'Reporter = none' and 'Peer = none' are refused (exit 2): addconf only adds;
setconf and syncconf empty lists. Everything is sent in one config-set,
after reading the current lists.",
    after_long_help = help::after(
        &["crem-ctl addconf more-peers.conf", "printf '[Peer]\\nPrefix = 198.18.0.0/15\\nAddress = 198.51.100.9\\n' | crem-ctl addconf -"],
        &[RACE]
    )
)]
pub struct Args {
    /// The configuration file (- for standard input)
    file: PathBuf,
}

pub fn run(a: Args) -> Res {
    let file = super::setconf::read(&a.file)?;
    for (list, key) in [
        (file.reporter.as_ref().map(Vec::len), "Reporter"),
        (file.peer.as_ref().map(Vec::len), "Peer"),
    ] {
        if list == Some(0) {
            return Err(Fail::Usage(format!(
                "{}: '{key} = none' empties a list; addconf only adds (use setconf or syncconf)",
                a.file.display()
            )));
        }
    }
    rmw::modify(|cur| rmw::addconf(cur, &file))
}
