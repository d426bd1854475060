// SPDX-License-Identifier: GPL-2.0
//! Host mode's delivery order (`rust/backlog.rs`): which packets a flow
//! takes for its own coming back from the backlog, and for how long it
//! waits for them.

use super::run;
use crate::backlog::{Backlog, AHEAD, LIFETIME};
use crate::crem_core::engine::MS;
use crate::kernel_ext::skb::sk_buff;
use core::ffi::{c_char, c_int};

fn at(a: usize) -> *const sk_buff {
    a as *const sk_buff
}

/// Queued packets are ahead until each comes back (in queue order; one
/// that comes back takes those before it, which went another way), or
/// until LIFETIME has passed; a packet never queued, or at a queued one's
/// address with another PSN, is not ours; past AHEAD, packets go
/// unrecognised, and `room` says so (both counted); the ring wraps.
#[no_mangle]
extern "C" fn crem_kunit_backlog_recognises_its_own(msg: *mut c_char, len: usize) -> c_int {
    run(msg, len, |w| {
        let (Ok(mut b), Ok(mut full)) = (Backlog::new(AHEAD), Backlog::new(AHEAD)) else {
            let _ = write!(w, "no memory");
            return false;
        };
        let steps = [
            b.queued(at(0x100), 1, 0),
            b.queued(at(0x200), 2, MS),
            b.queued(at(0x300), 3, MS),
            b.ahead(2 * MS),
            !b.returned(at(0x999), 2, 2 * MS),
            !b.returned(at(0x200), 9, 2 * MS),
            b.returned(at(0x200), 2, 2 * MS),
            b.ahead(2 * MS),
            !b.returned(at(0x100), 1, 2 * MS),
            b.returned(at(0x300), 3, 2 * MS),
            !b.ahead(2 * MS),
            b.queued(at(0x400), 4, 3 * MS),
            b.ahead(3 * MS + LIFETIME),
            !b.ahead(3 * MS + LIFETIME + 1),
            !b.returned(at(0x400), 4, 4 * MS + LIFETIME),
            b.unreturned == 2,
        ];
        if let Some(i) = steps.iter().position(|ok| !ok) {
            let _ = write!(w, "step {i} of the sequence failed");
            return false;
        }
        let fits = (0..AHEAD).all(|i| full.queued(at(0x1000 + i), i as u32, 0));
        let over = full.queued(at(0x9000), 0, 0);
        let room = full.room();
        if !fits || over || room || full.untracked != 2 {
            let _ = write!(
                w,
                "{AHEAD} fit: {fits}; one more refused: {}; room: {room}; untracked {} (2)",
                !over, full.untracked
            );
            return false;
        }
        // The ring wraps: the first back makes room for one more, which is
        // recognised behind the other AHEAD - 1; the last of those back
        // passes the AHEAD - 2 before it (counted unreturned).
        let wraps = full.returned(at(0x1000), 0, 0)
            && full.queued(at(0xa000), 99, 0)
            && full.returned(at(0x1000 + AHEAD - 1), AHEAD as u32 - 1, 0)
            && full.ahead(0)
            && full.returned(at(0xa000), 99, 0)
            && !full.ahead(0)
            && full.unreturned == AHEAD as u64 - 2;
        if !wraps {
            let _ = write!(w, "the full ring did not wrap as expected");
            return false;
        }
        true
    })
}
