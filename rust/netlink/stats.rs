// SPDX-License-Identifier: GPL-2.0
//! The netns's counters over the family: stats-get (the hook's counters,
//! the datapath's, the flows' gauges and the sum of every flow's counters,
//! those gone included) and stats-reset.

use super::flow::{put_counters, put_msg_types};
use super::state;
use crate::ffi::{self, *};
use crate::kernel_ext::genl::{Info, Msg, Writer};
use crate::netns::{NetState, FS_N};
use core::ops::Range;
use kernel::bindings;
use kernel::error::{code::*, Result};

/// The datapath counters `dp` (`enum crem_dp`, a run in their order) as
/// the stats attributes from `first` on.
fn put_dp(w: &mut Writer<'_>, st: &NetState, first: u32, dp: Range<u32>) -> Result {
    for (a, i) in (first..u32::MAX).zip(dp) {
        w.u64(a, st.dp(i), CREM_A_STATS_PAD)?;
    }
    Ok(())
}

// Each run is the attributes in the datapath counters' order.
const _: () = assert!(
    CREM_A_STATS_DROP_SEND - CREM_A_STATS_FLOWS_CREATED
        == crem_dp_CREM_DROP_SEND - crem_dp_CREM_EV_FLOW_UP
);
const _: () = assert!(
    CREM_A_STATS_PATH_REPORTS - CREM_A_STATS_FLOWS_REMOVED
        == crem_dp_CREM_EV_PATH_REPORT - crem_dp_CREM_EV_FLOW_DOWN
);
const _: () = assert!(
    CREM_A_STATS_DROP_DEV_GONE - CREM_A_STATS_GSO_SEGMENTED
        == crem_dp_CREM_DROP_DEV_GONE - crem_dp_CREM_EV_GSO_SEGMENTED
);
const _: () = assert!(crem_dp_CREM_DROP_DEV_GONE + 1 == crem_dp_CREM_NR_DP);

pub(super) fn get(info: &Info<'_>) -> Result {
    let st = state(info.net())?;
    let hook = st.hook_counters();
    let mut sum = [0u64; FS_N];
    st.totals(&mut sum, false);
    let by_type = st.msg_counts();
    let (msgs_in, msgs_out) = by_type.split_at(ffi::CREM_MSG_SLOTS as usize);
    let mut msg = Msg::new(Msg::goodsize(), bindings::GFP_KERNEL).ok_or(ENOMEM)?;
    let mut w = msg.reply_to(info)?;
    w.nest(CREM_A_CMD_STATS, |w| {
        for (a, v) in (CREM_A_STATS_ROCE_LOCAL_IN..u32::MAX).zip(hook.iter()) {
            w.u64(a, *v, CREM_A_STATS_PAD)?;
        }
        put_dp(
            w,
            st,
            CREM_A_STATS_FLOWS_CREATED,
            crem_dp_CREM_EV_FLOW_UP..crem_dp_CREM_DROP_SEND + 1,
        )?;
        w.u64(
            CREM_A_STATS_FLOWS_ACTIVE,
            u64::from(st.flows_active()),
            CREM_A_STATS_PAD,
        )?;
        w.u64(CREM_A_STATS_MEMORY, st.memory_now(), CREM_A_STATS_PAD)?;
        put_counters(w, CREM_A_STATS_TOTALS, &sum)?;
        put_dp(
            w,
            st,
            CREM_A_STATS_FLOWS_REMOVED,
            crem_dp_CREM_EV_FLOW_DOWN..crem_dp_CREM_EV_PATH_REPORT + 1,
        )?;
        put_msg_types(w, CREM_A_STATS_MSGS_IN_BY_TYPE, msgs_in)?;
        put_msg_types(w, CREM_A_STATS_MSGS_OUT_BY_TYPE, msgs_out)?;
        put_dp(
            w,
            st,
            CREM_A_STATS_GSO_SEGMENTED,
            crem_dp_CREM_EV_GSO_SEGMENTED..crem_dp_CREM_NR_DP,
        )
    })?;
    w.end();
    msg.reply(info)
}

pub(super) fn reset(info: &Info<'_>) -> Result {
    let st = state(info.net())?;
    st.reset_counters();
    // Flow counters are never rewound: the totals restart from here.
    let mut sum = [0u64; FS_N];
    st.totals(&mut sum, true);
    Ok(())
}
