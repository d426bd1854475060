// SPDX-License-Identifier: GPL-2.0
//! Flow notifications to the events group: flow-up (`create.rs`),
//! flow-down (`removal.rs`) and flow-change (circuit breaker tripped or
//! cleared, CLOSE received). The engines report a change under the flow's
//! lock, in softirq; its notification is built in process context (it
//! allocates, and it reads the flow under the same lock), so the event is
//! marked on the flow (`host.rs`) and the netns's work item here sends what
//! is marked. Two of a kind in a row before the work runs are sent once
//! (the flow nest shows the state then). The messages themselves are
//! built by the netlink side (`glue/crem_nl_flow.c`).

use crate::ffi;
use crate::flow::Flow;
use crate::kernel_ext::rcu;
use crate::kernel_ext::skb::Skb;
use crate::kernel_ext::work::Work;
use crate::netns::NetState;
use core::ffi::c_int;
use core::ptr;
use kernel::bindings;
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
            // Allocated ahead, outside RCU (null: no listener; counted).
            let mut msg = self.ntf_alloc(true);
            let sent = {
                let g = rcu::read_lock();
                let mut sent = false;
                self.flows.walk(&mut Default::default(), &g, |f| {
                    let Some((ev, reason)) = f.take_event() else {
                        return false;
                    };
                    let m = core::mem::replace(&mut msg, ptr::null_mut());
                    self.ntf_send(m, f, Notification::Change(ev, reason));
                    sent = true;
                    true
                });
                sent
            };
            if !sent {
                // Unused: not a drop.
                // SAFETY: `ntf_alloc`'s, ours (null: none).
                drop(unsafe { Skb::from_raw(msg) });
                return;
            }
            // SAFETY: process context (a work item), no lock held.
            unsafe { ffi::crem_h_cond_resched() };
        }
    }

    /// A notification allocated ahead (`may_sleep`: GFP_KERNEL), null if no
    /// one listens, if memory ran out (counted) or for a netns state
    /// without C's (KUnit).
    pub(crate) fn ntf_alloc(&self, may_sleep: bool) -> *mut bindings::sk_buff {
        let gfp = if may_sleep {
            bindings::GFP_KERNEL
        } else {
            bindings::GFP_ATOMIC
        };
        self.c_net().map_or(ptr::null_mut(), |cn| {
            // SAFETY: the netns's C state, live while its Rust state is;
            // GFP_KERNEL only if the caller may sleep.
            unsafe { ffi::crem_nl_flow_ntf_alloc(cn, gfp) }
        })
    }

    /// Sends `n` about `f` in `msg` (of [`Self::ntf_alloc`], taken: sent or
    /// freed; null: nothing is sent). Any context; `f` stays alive for the
    /// call (the caller is in an RCU read-side section, or owns it).
    pub(crate) fn ntf_send(&self, msg: *mut bindings::sk_buff, f: &Flow, n: Notification) {
        let Some(cn) = self.c_net() else {
            // SAFETY: `ntf_alloc`'s (null for a state without C's).
            drop(unsafe { Skb::from_raw(msg) });
            return;
        };
        let (kind, ev, reason) = match n {
            Notification::Up => (ffi::crem_ntf_CREM_NTF_UP, -1, 0),
            Notification::Down => (ffi::crem_ntf_CREM_NTF_DOWN, -1, 0),
            Notification::Change(e, r) => (ffi::crem_ntf_CREM_NTF_CHANGE, c_int::from(e), r),
        };
        // SAFETY: C's live state of this netns; `f`, live for the call; C
        // takes `msg`.
        unsafe { ffi::crem_nl_flow_notify(cn, msg, f.as_c(), kind, ev, reason) };
    }

    /// Allocates and sends `n` about `f` (process context).
    pub(crate) fn notify(&self, f: &Flow, n: Notification) {
        self.ntf_send(self.ntf_alloc(true), f, n);
    }
}
