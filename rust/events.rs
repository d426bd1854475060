// SPDX-License-Identifier: GPL-2.0
//! Flow notifications to the events group: flow-up (`create.rs`),
//! flow-down (`removal.rs`) and flow-change (circuit breaker tripped or
//! cleared, CLOSE received). The engines report a change under the flow's
//! lock, in softirq; its notification is built in process context (it
//! allocates, and it reads the flow under the same lock), so the event is
//! marked on the flow (`host.rs`) and the netns's work item here sends what
//! is marked. Two of a kind in a row before the work runs are sent once
//! (the flow's attributes show the state then). They are written by the
//! netlink side (`crate::netlink`).

use crate::crem_core::nl::stat;
use crate::ffi;
use crate::flow::Flow;
use crate::flow_info::FlowInfo;
use crate::kernel_ext::genl::{self, Group, Msg};
use crate::kernel_ext::rcu;
use crate::kernel_ext::work::Work;
use crate::netlink::{put_flow, FLOW_MSG_SIZE};
use crate::netns::NetState;
use kernel::bindings;
use kernel::error::code::ESRCH;
use kernel::prelude::*;

/// The netns's flow-change work (`NetState::events`).
///
/// # Safety
///
/// The item is the `events` field of a `NetState`.
pub(crate) unsafe fn work() -> impl PinInit<Work> {
    // SAFETY: `send_marked` finds the `NetState` the item is a field of
    // (the caller's contract).
    unsafe { Work::new(send_marked) }
}

/// The events work of every netns.
unsafe extern "C" fn send_marked(w: *mut bindings::work_struct) {
    // SAFETY: only `work` makes work items with this callback, the
    // `events` field of a `NetState` (its contract); the state lives until
    // the work is cancelled (`exit_flows`, or the drop of the field), which
    // waits for this callback.
    let st = unsafe { &*kernel::container_of!(w.cast::<Work>(), NetState, events) };
    st.send_marked();
}

/// A flow notification to the events group.
#[derive(Clone, Copy)]
pub(crate) enum Notification {
    Up,
    Down,
    /// A flow-change event (`CREM_FLOW_EVENT_*`) with its close-received
    /// reason.
    Change(u8, u16),
}

impl NetState {
    /// `f` marked a flow-change event (any context, under its lock): the
    /// work sends it.
    pub(crate) fn flow_event(&self) {
        if !self.removal.closing() {
            self.events.schedule();
        }
    }

    /// Sends the marked events, one flow at a time (the work item).
    fn send_marked(&self) {
        loop {
            // Allocated ahead, outside RCU (None: no listener; counted).
            let mut msg = self.ntf_alloc(true);
            let sent = {
                let g = rcu::read_lock();
                let mut sent = false;
                self.flows.walk(&mut Default::default(), &g, |f| {
                    let Some((ev, reason)) = f.take_event() else {
                        return false;
                    };
                    self.ntf_send(msg.take(), f, Notification::Change(ev, reason));
                    sent = true;
                    true
                });
                sent
            };
            if !sent {
                if let Some(m) = msg {
                    m.unused();
                }
                return;
            }
            // SAFETY: process context (a work item), no lock held.
            unsafe { ffi::crem_h_cond_resched() };
        }
    }

    /// A notification allocated ahead (`may_sleep`: GFP_KERNEL), None if
    /// no one listens, if memory ran out (counted) or for a netns state
    /// of a KUnit case (which no one hears).
    pub(crate) fn ntf_alloc(&self, may_sleep: bool) -> Option<Msg> {
        let gfp = if may_sleep {
            bindings::GFP_KERNEL
        } else {
            bindings::GFP_ATOMIC
        };
        if !self.own() || !genl::has_listeners(self.net().as_ptr(), Group::Events) {
            return None;
        }
        // Sized to the flow: many queue up at a listener during churn.
        let m = Msg::new(FLOW_MSG_SIZE, gfp);
        if m.is_none() {
            self.count(stat::DROP_NOTIFY);
        }
        m
    }

    /// Sends `n` about `f` in `msg` (of [`Self::ntf_alloc`]; None: nothing
    /// is sent). Any context; `f` stays alive for the call (the caller is
    /// in an RCU read-side section, or owns it).
    pub(crate) fn ntf_send(&self, msg: Option<Msg>, f: &Flow, n: Notification) {
        let Some(mut msg) = msg else {
            return;
        };
        let (cmd, ev) = match n {
            Notification::Up => (ffi::CREM_CMD_FLOW_UP_NTF, None),
            Notification::Down => (ffi::CREM_CMD_FLOW_DOWN_NTF, None),
            Notification::Change(e, r) => (ffi::CREM_CMD_FLOW_CHANGE_NTF, Some((e, r))),
        };
        // On the stack: callers may hold RCU, no allocation here. (About
        // 560 octets: identity, state and the counters.)
        let mut fi = FlowInfo::default();
        let built = msg.notification(cmd as u8).and_then(|mut w| {
            // The ids too: only CAP_NET_ADMIN may join the group.
            put_flow(&mut w, f, &mut fi, ev, true)?;
            w.end();
            Ok(())
        });
        if built.is_err() {
            self.count(stat::DROP_NOTIFY);
            return;
        }
        // GFP_ATOMIC: the creation path sends under RCU. ESRCH: the
        // listeners left meanwhile, not a drop.
        match genl::multicast(
            msg,
            self.net().as_ptr(),
            Group::Events,
            bindings::GFP_ATOMIC,
        ) {
            Err(e) if e != ESRCH => self.count(stat::DROP_NOTIFY),
            _ => {}
        }
    }

    /// Allocates and sends `n` about `f` (process context).
    pub(crate) fn notify(&self, f: &Flow, n: Notification) {
        self.ntf_send(self.ntf_alloc(true), f, n);
    }
}
