// SPDX-License-Identifier: GPL-2.0
//! The flow's timer and lock abstractions (`kernel_ext/hrtimer.rs`,
//! `kernel_ext/bh.rs`), on a probe shaped like a flow: a soft hrtimer whose
//! callback takes the owner's `BhLock`. A flow relies on each property
//! checked here: an armed timer fires once, at or after its deadline; a
//! rearm replaces the deadline; a cancelled or dropped timer never runs its
//! callback again (a dropped flow's memory is gone); and the callback never
//! runs on a CPU while that CPU holds the lock with BH off (the rule that
//! `BhLock::lock` wants a `Bh` for).

use super::run;
use crate::kernel_ext::bh::{self, new_bh_lock, Bh, BhLock};
use crate::kernel_ext::hrtimer::HrTimer;
use core::ffi::{c_char, c_int};
use core::mem::offset_of;
use core::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use kernel::bindings;
use kernel::prelude::*;

const MS: u64 = 1_000_000;

/// Callbacks of every probe, counted outside any probe: one that ran on a
/// dropped probe shows here (and as a use-after-free under KASAN).
static CALLBACKS: AtomicU32 = AtomicU32::new(0);

#[pin_data]
struct Probe {
    #[pin]
    timer: HrTimer,
    /// Callbacks counted under the lock.
    #[pin]
    lock: BhLock<u32>,
    /// The same, without the lock (read while the lock is held).
    fired: AtomicU32,
    /// When the last callback ran.
    at: AtomicU64,
}

fn now() -> u64 {
    // SAFETY: `ktime_get` only reads the timekeeper.
    u64::try_from(unsafe { bindings::ktime_get() }).unwrap_or(0)
}

fn sleep_ms(ms: u32) {
    // SAFETY: KUnit cases run in process context, where sleeping is allowed.
    unsafe { bindings::msleep(ms) };
}

unsafe extern "C" fn probe_timer(t: *mut bindings::hrtimer) -> bindings::hrtimer_restart {
    // SAFETY: only `Probe::new` makes timers with this callback, so `t` is
    // a probe's `timer` field; the probe outlives it (the timer is its
    // first field, cancelled when dropped).
    let p = unsafe { &*t.cast::<u8>().sub(offset_of!(Probe, timer)).cast::<Probe>() };
    // SAFETY: soft hrtimers expire in softirq: BH is off.
    let bh = unsafe { Bh::assume() };
    CALLBACKS.fetch_add(1, Ordering::Relaxed);
    *p.lock.lock(&bh) += 1;
    p.at.store(now(), Ordering::Relaxed);
    p.fired.fetch_add(1, Ordering::Release);
    bindings::hrtimer_restart_HRTIMER_NORESTART
}

impl Probe {
    fn new() -> Option<Pin<KBox<Self>>> {
        KBox::pin_init(
            pin_init!(Probe {
                // SAFETY: the `timer` field of a `Probe`, which
                // `probe_timer` requires.
                timer <- unsafe { HrTimer::new(probe_timer) },
                lock <- new_bh_lock!(0, "crem_kunit_probe"),
                fired: AtomicU32::new(0),
                at: AtomicU64::new(0),
            }),
            GFP_KERNEL,
        )
        .ok()
    }

    fn fired(&self) -> u32 {
        self.fired.load(Ordering::Acquire)
    }

    fn counted(&self) -> u32 {
        *self.lock.lock(&bh::disable())
    }
}

/// Armed for 5 ms ahead, then rearmed for 2 ms ahead of a later time: it
/// fires once, not before the second deadline, and well before the first
/// would have been plus the margin the test sleeps.
#[no_mangle]
extern "C" fn crem_kunit_timer_fires_once(msg: *mut c_char, len: usize) -> c_int {
    run(msg, len, |w| {
        let Some(p) = Probe::new() else {
            let _ = write!(w, "no memory");
            return false;
        };
        let t0 = now();
        p.timer.start_abs(t0 + 500 * MS);
        let d = now() + 2 * MS;
        p.timer.start_abs(d);
        // The rearm moved the deadline 498 ms earlier: at 200 ms it fired.
        sleep_ms(200);
        let (fired, counted, at) = (p.fired(), p.counted(), p.at.load(Ordering::Relaxed));
        if fired != 1 || counted != 1 || at < d || at >= t0 + 500 * MS {
            let _ = write!(
                w,
                "fired {fired} (1), counted {counted} (1), at +{} ns (deadline +{} ns)",
                at.wrapping_sub(t0),
                d - t0
            );
            return false;
        }
        // Nothing more without a new start.
        sleep_ms(20);
        p.fired() == 1
    })
}

/// A timer cancelled before its deadline, or dropped while armed (the
/// flow freed with its timer pending), never runs its callback.
#[no_mangle]
extern "C" fn crem_kunit_timer_cancel_and_drop(msg: *mut c_char, len: usize) -> c_int {
    run(msg, len, |w| {
        let (Some(a), Some(b)) = (Probe::new(), Probe::new()) else {
            let _ = write!(w, "no memory");
            return false;
        };
        let before = CALLBACKS.load(Ordering::Relaxed);
        a.timer.start_abs(now() + 100 * MS);
        a.timer.cancel();
        // `b`'s callback would run on freed memory (KASAN on the debug
        // kernel) and show in `CALLBACKS` if the drop did not cancel it.
        b.timer.start_abs(now() + 100 * MS);
        drop(b);
        sleep_ms(300);
        let ran = CALLBACKS.load(Ordering::Relaxed).wrapping_sub(before);
        if a.fired() != 0 || ran != 0 {
            let _ = write!(w, "cancelled: fired {} (0); callbacks {ran} (0)", a.fired());
            return false;
        }
        // A cancelled timer starts again.
        a.timer.start_abs(now() + MS);
        sleep_ms(100);
        if a.fired() != 1 {
            let _ = write!(w, "restarted after cancel: fired {} (1)", a.fired());
            return false;
        }
        true
    })
}

/// While this CPU holds the lock with BH off, the timer's callback (a
/// softirq, which takes the same lock) does not run, though its deadline
/// has passed; it runs once the lock is released and BH is back on.
#[no_mangle]
extern "C" fn crem_kunit_timer_waits_for_bh_lock(msg: *mut c_char, len: usize) -> c_int {
    run(msg, len, |w| {
        let Some(p) = Probe::new() else {
            let _ = write!(w, "no memory");
            return false;
        };
        let during = {
            let bh = bh::disable();
            let g = p.lock.lock(&bh);
            p.timer.start_abs(now());
            // Spin 20 ms past the deadline (no sleeping with BH off).
            let end = now() + 20 * MS;
            while now() < end {
                core::hint::spin_loop();
            }
            let during = (p.fired(), *g);
            drop(g);
            during
        };
        sleep_ms(100);
        let after = (p.fired(), p.counted());
        if during != (0, 0) || after != (1, 1) {
            let _ = write!(
                w,
                "fired/counted while held {:?} ((0, 0)), after {:?} ((1, 1))",
                during, after
            );
            return false;
        }
        true
    })
}
