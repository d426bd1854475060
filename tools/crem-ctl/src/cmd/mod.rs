//! One module per command, as WireGuard's wg has one file per subcommand:
//! each holds the command's arguments and help (clap) and what it does
//! (`run`). main.rs lists them and maps their failures to exit statuses.

pub mod addconf;
pub mod completions;
pub mod decode;
pub mod fec;
pub mod flow;
pub mod monitor;
pub mod peer;
pub mod reporter;
pub mod roce;
pub mod set;
pub mod setconf;
pub mod show;
pub mod showconf;
pub mod stats;
pub mod syncconf;
