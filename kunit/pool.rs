// SPDX-License-Identifier: GPL-2.0
//! The spare pool (`rust/pool.rs`) of a netns state of its own: empty at
//! first (the first take falls back and starts the refill), then full on
//! both sides; every take gives a flow of the side asked for and is
//! refilled; once closed, nothing is taken and the spares are freed
//! (kmemleak on the debug kernel would report one that was not).

use super::run;
use crate::flow;
use crate::netns::{self, NetState};
use core::ffi::{c_char, c_int};
use core::fmt::Write;
use kernel::bindings;

const CSF: u8 = 0;
const CRF: u8 = 1;
const SPARE: usize = 4;

/// Waits up to 2 s (TCG) until both sides hold `n` spares.
fn settle(st: &NetState, n: usize) -> bool {
    for _ in 0..200 {
        if st.pool.count(CSF.into()) == n && st.pool.count(CRF.into()) == n {
            return true;
        }
        // SAFETY: KUnit cases run in process context.
        unsafe { bindings::msleep(10) };
    }
    false
}

/// A spare of `side` from the pool, checked and freed: whether there was
/// one and it had that side.
fn take(st: &NetState, side: u8, w: &mut dyn Write) -> Option<bool> {
    let f = st.pool.take(side)?.into_raw();
    // SAFETY: a flow of the pool's, ours alone until freed below.
    let got = unsafe { (*f).key.side };
    flow::crem_rs_flow_free(f);
    if got != side {
        let _ = write!(w, "a spare of side {got} for side {side}; ");
    }
    Some(got == side)
}

fn pool_fills_and_closes(w: &mut dyn Write) -> bool {
    // The initial netns (static): its address is all the flows keep.
    let net = core::ptr::addr_of_mut!(crate::ffi::init_net);
    let raw = netns::crem_rs_net_init(net);
    // SAFETY: a state of `crem_rs_net_init` (or null), freed at the end.
    let Some(st) = (unsafe { netns::state_opt(raw) }) else {
        let _ = write!(w, "no netns state");
        return false;
    };
    let mut ok = true;
    let mut check = |c: bool, what: &str, w: &mut dyn Write| {
        if !c {
            let _ = write!(w, "{what}; ");
            ok = false;
        }
    };
    check(
        st.pool.take(CSF).is_none(),
        "the first take found a spare",
        w,
    );
    check(settle(st, SPARE), "not filled after the first take", w);
    let mut all = true;
    for _ in 0..SPARE {
        all &= take(st, CSF, w) == Some(true);
    }
    all &= take(st, CRF, w) == Some(true);
    check(all, "a take failed or gave the wrong side", w);
    check(settle(st, SPARE), "not refilled after takes", w);
    st.pool.close();
    check(st.pool.take(CRF).is_none(), "a take after close", w);
    check(
        st.pool.count(CSF.into()) == 0 && st.pool.count(CRF.into()) == 0,
        "spares left after close",
        w,
    );
    netns::crem_rs_net_exit(raw);
    ok
}

#[no_mangle]
extern "C" fn crem_kunit_pool_fills_and_closes(msg: *mut c_char, len: usize) -> c_int {
    run(msg, len, pool_fills_and_closes)
}
