//! `crem-ctl syncconf FILE`: the lists made the file's, its scalars set, in
//! one config-set, as `wg syncconf` makes the peers the file's.

use crate::help::EXIT_STATUS;
use crate::nl::Conn;
use crate::request::set_config;
use crate::Res;
use std::path::PathBuf;

/// Make the lists a configuration file's, set its keys
#[derive(clap::Args, Debug)]
#[command(
    long_about = "\
Reads a configuration file in the format of 'crem-ctl setconf' (see its
--help; FILE may be - or /dev/stdin) and makes the configuration follow it,
in the spirit of 'wg syncconf':

    the reporter list becomes the file's Reporter addresses and the peer
    list its [Peer] sections, whatever they were: a list the file does not
    have is emptied (no peers: no flow is protected);
    the [CREM] keys the file has are set; those it lacks keep their values,
    as wg keeps the interface settings a file does not name (crem-ctl does
    not know the module's defaults, which a user namespace's limits change:
    write every key, as 'crem-ctl showconf' does, to pin them all).

This differs from setconf only for a list the file lacks: setconf keeps it,
syncconf empties it. One config-set, which replaces the lists whole: no
read of the current configuration, and no race with another writer.",
    after_long_help = EXIT_STATUS
)]
pub struct Args {
    /// The configuration file (- for standard input)
    file: PathBuf,
}

pub fn run(a: Args) -> Res {
    let cfg = sync(super::setconf::read(&a.file)?);
    let mut c = Conn::open()?;
    set_config(&mut c, &cfg)
}

/// What syncconf sends for a file: its change, with a list it lacks empty.
fn sync(mut cfg: crate::model::Config) -> crate::model::Config {
    cfg.reporter.get_or_insert_with(Vec::new);
    cfg.peer.get_or_insert_with(Vec::new);
    cfg
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::attr;
    use crate::uapi::*;

    #[test]
    fn a_list_the_file_lacks_is_emptied() {
        let cfg = sync(crate::conffile::parse("[CREM]\nK = 16\n").unwrap());
        assert_eq!(
            (cfg.k, cfg.reporter.as_deref(), cfg.peer.as_deref()),
            (Some(16), Some(&[][..]), Some(&[][..]))
        );
        // On the wire: k, then one empty reporter and one empty peer nest,
        // which the kernel reads as "clear the list".
        assert_eq!(
            attr::encode(&cfg.to_attrs()),
            [
                5,
                0,
                CONFIG_K as u8,
                0,
                16,
                0,
                0,
                0,
                4,
                0,
                13,
                0,
                4,
                0,
                14,
                0x80
            ]
        );
        // The file's lists are sent as they are.
        let cfg = sync(
            crate::conffile::parse("[CREM]\nReporter = 198.51.100.1\n[Peer]\nPrefix = 203.0.113.0/24\nAddress = 198.51.100.2\n")
                .unwrap(),
        );
        assert_eq!(cfg.reporter.map(|r| r.len()), Some(1));
        assert_eq!(cfg.peer.map(|p| p.len()), Some(1));
    }
}
