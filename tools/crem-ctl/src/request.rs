//! The requests that several commands make: the configuration (read and
//! changed), the counters and the flows. Each operation's messages carry
//! its attribute set's attributes at the top level (config-get/-set: the
//! "config" set, stats-get: "stats", the flow operations: "flow").

use crate::attr::Attr;
use crate::model::{Config, Flow, Stats};
use crate::nl::{Conn, CremMsg};
use crate::uapi::*;
use crate::{Fail, Res};

pub fn get_config(c: &mut Conn) -> Res<Config> {
    get_one(
        c,
        CMD_CONFIG_GET,
        "config-get reply without a configuration",
        |attrs| Config::from_attrs(attrs, true),
    )
}

/// config-set: the attributes `cfg` gives, at the top level.
pub fn set_config(c: &mut Conn, cfg: &Config) -> Res {
    c.request(CMD_CONFIG_SET, cfg.to_attrs(), false)?;
    Ok(())
}

pub fn get_stats(c: &mut Conn) -> Res<Stats> {
    get_one(
        c,
        CMD_STATS_GET,
        "stats-get reply without counters",
        Stats::from_attrs,
    )
}

/// What `from` makes of the attributes of the answer to the get request
/// `cmd` (a request without attributes); an answer without any fails with
/// `missing`.
fn get_one<T>(c: &mut Conn, cmd: u8, missing: &str, from: impl FnOnce(&[Attr]) -> T) -> Res<T> {
    let r = c.request(cmd, vec![], false)?;
    let m = r
        .iter()
        .find(|m| !m.attrs.is_empty())
        .ok_or_else(|| Fail::Failed(missing.into()))?;
    Ok(from(&m.attrs))
}

/// Every flow (the flow-get dump).
pub fn get_flows(c: &mut Conn) -> Res<Vec<Flow>> {
    Ok(flows(&c.dump_consistent(CMD_FLOW_GET, vec![])?))
}

/// The flows of a reply (one per message, its attributes), in its order.
pub fn flows(reply: &[CremMsg]) -> Vec<Flow> {
    reply
        .iter()
        .filter(|m| !m.attrs.is_empty())
        .map(|m| Flow::from_attrs(&m.attrs))
        .collect()
}
