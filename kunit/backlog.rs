// SPDX-License-Identifier: GPL-2.0
//! Host mode's delivery order (`rust/backlog.rs`): which packets a flow
//! takes for its own coming back from the backlog, and for how long it
//! waits for them.

use super::run;
use crate::backlog::{Backlog, AHEAD};
use crate::crem_core::engine::MS;
use crate::kernel_ext::skb::sk_buff;
use core::ffi::{c_char, c_int};

fn at(a: usize) -> *const sk_buff {
    a as *const sk_buff
}

/// Queued packets are ahead until each comes back (in queue order; one
/// that comes back takes those before it, which went another way), or
/// until 10 ms have passed; a packet never queued is not ours; past
/// AHEAD, packets go unrecognised.
#[no_mangle]
extern "C" fn crem_kunit_backlog_recognises_its_own(msg: *mut c_char, len: usize) -> c_int {
    run(msg, len, |w| {
        let mut b = Backlog::new();
        let steps = [
            b.queued(at(0x100), 0),
            b.queued(at(0x200), MS),
            b.queued(at(0x300), MS),
            b.ahead(2 * MS),
            !b.returned(at(0x999), 2 * MS),
            b.returned(at(0x200), 2 * MS),
            b.ahead(2 * MS),
            !b.returned(at(0x100), 2 * MS),
            b.returned(at(0x300), 2 * MS),
            !b.ahead(2 * MS),
            b.queued(at(0x400), 3 * MS),
            b.ahead(13 * MS),
            !b.ahead(13 * MS + 1),
            !b.returned(at(0x400), 14 * MS),
        ];
        if let Some(i) = steps.iter().position(|ok| !ok) {
            let _ = write!(w, "step {i} of the sequence failed");
            return false;
        }
        let mut full = Backlog::new();
        let fits = (0..AHEAD).all(|i| full.queued(at(0x1000 + i), 0));
        let over = full.queued(at(0x9000), 0);
        if !fits || over {
            let _ = write!(w, "{AHEAD} fit: {fits}; one more refused: {}", !over);
            return false;
        }
        true
    })
}
