// SPDX-License-Identifier: GPL-2.0
//! The netns's counters over the family: stats-get (the netns's counters,
//! the flows' gauges, the sum of every flow's counters, those gone
//! included, and the messages by type) and stats-reset.
//!
//! stats-get writes the `stats` set of netlink/crem.yaml from its
//! generated table (`nl::stat::COUNTERS`), in spec order: a counter added
//! to the spec and counted (`NetState::count` with its `nl::stat` index)
//! is reported with nothing added here.

use super::flow::{put_counters, put_msg_types};
use super::state;
use crate::crem_core::nl::{
    stat, CounterKind, STATS_MSGS_IN_BY_TYPE, STATS_MSGS_OUT_BY_TYPE, STATS_TOTALS,
};
use crate::flow_info::Counters;
use crate::host::MSG_SLOTS;
use crate::kernel_ext::genl::{Info, Msg, Writer};
use crate::netns::NetState;
use kernel::bindings;
use kernel::error::{code::*, Result};

/// The set's nests: what each holds.
fn put_nest(w: &mut Writer<'_>, id: u16, sum: &Counters, msgs: &[[u64; MSG_SLOTS]; 2]) -> Result {
    let [msgs_in, msgs_out] = msgs;
    match id {
        STATS_TOTALS => put_counters(w, id, sum),
        STATS_MSGS_IN_BY_TYPE => put_msg_types(w, id, msgs_in),
        STATS_MSGS_OUT_BY_TYPE => put_msg_types(w, id, msgs_out),
        // A nest this kernel does not fill (none today): left out.
        _ => Ok(()),
    }
}

/// Counter `i` of `st` (`nl::stat`), the gauges read now.
fn value(st: &NetState, i: usize) -> u64 {
    match i {
        stat::FLOWS_ACTIVE => u64::from(st.flows_active()),
        stat::MEMORY => st.memory_now(),
        _ => st.stat(i),
    }
}

pub(super) fn get(info: &Info<'_>) -> Result {
    let st = state(info.net())?;
    let mut sum = Counters::ZERO;
    st.totals(&mut sum, false);
    let msgs = st.msg_counts();
    let mut msg = Msg::new(Msg::goodsize(), bindings::GFP_KERNEL).ok_or(ENOMEM)?;
    let mut w = msg.reply_to(info)?;
    for c in stat::COUNTERS {
        match c.kind {
            CounterKind::Value(i) => w.uint(c.id.into(), value(st, i))?,
            CounterKind::Nest(_) => put_nest(&mut w, c.id, &sum, &msgs)?,
        }
    }
    w.end();
    msg.reply(info)
}

pub(super) fn reset(info: &Info<'_>) -> Result {
    let st = state(info.net())?;
    st.reset_counters();
    // Flow counters are never rewound: the totals restart from here.
    let mut sum = Counters::ZERO;
    st.totals(&mut sum, true);
    Ok(())
}
