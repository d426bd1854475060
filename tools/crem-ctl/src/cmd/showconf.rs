//! `crem-ctl showconf`: the configuration as a file for setconf
//! (conffile.rs), as `wg showconf` prints one.

use crate::help::EXIT_STATUS;
use crate::nl::Conn;
use crate::request::get_config;
use crate::stdio::Format;
use crate::{conffile, Res};

/// Print the configuration as a file for setconf
#[derive(clap::Args, Debug)]
#[command(
    long_about = "\
Prints the current configuration in the format of 'crem-ctl setconf' (see its
--help), every key included; an empty list as 'Reporter = none' or
'Peer = none', so that setconf of the output empties it again. With -j,
prints what '-j show config' prints.",
    after_long_help = EXIT_STATUS
)]
pub struct Args {}

pub fn run(_: Args, fmt: Format) -> Res {
    let mut c = Conn::open()?;
    let cfg = get_config(&mut c)?;
    // With -j, the same values as JSON: what -j show config prints.
    fmt.print(&serde_json::json!({ "config": cfg }), || {
        conffile::format(&cfg)
    });
    Ok(())
}
