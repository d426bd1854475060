//! The requests that several commands make: the configuration (read and
//! changed), the counters and the flows.

use crate::attr::Attr;
use crate::model::{Config, Flow, Stats};
use crate::nl::{Conn, CremMsg};
use crate::uapi::*;
use crate::{Fail, Res};

pub fn get_config(c: &mut Conn) -> Res<Config> {
    get_one(
        c,
        CMD_CONFIG_GET,
        CMD_A_CONFIG,
        "config-get reply without a config attribute",
        |nest| Config::from_attrs(nest, true),
    )
}

pub fn set_config(c: &mut Conn, cfg: &Config) -> Res {
    c.request(
        CMD_CONFIG_SET,
        vec![Attr::nest(CMD_A_CONFIG, cfg.to_attrs())],
        false,
    )?;
    Ok(())
}

pub fn get_stats(c: &mut Conn) -> Res<Stats> {
    get_one(
        c,
        CMD_STATS_GET,
        CMD_A_STATS,
        "stats-get reply without a stats attribute",
        Stats::from_attrs,
    )
}

/// What `from` makes of the nest `attr` of the answer to the get request
/// `cmd`; an answer without it fails with `missing`.
fn get_one<T>(
    c: &mut Conn,
    cmd: u8,
    attr: u16,
    missing: &str,
    from: impl FnOnce(&[Attr]) -> T,
) -> Res<T> {
    let r = c.request(cmd, vec![], false)?;
    let nest = r
        .iter()
        .find_map(|m| m.nest(attr))
        .ok_or_else(|| Fail::Failed(missing.into()))?;
    Ok(from(nest))
}

/// Every flow (the flow-get dump).
pub fn get_flows(c: &mut Conn) -> Res<Vec<Flow>> {
    Ok(flows(&c.dump_consistent(CMD_FLOW_GET, vec![])?))
}

/// The flows of a reply, in its order.
pub fn flows(reply: &[CremMsg]) -> Vec<Flow> {
    reply
        .iter()
        .filter_map(|m| m.nest(CMD_A_FLOW))
        .map(Flow::from_attrs)
        .collect()
}
