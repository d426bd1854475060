// SPDX-License-Identifier: GPL-2.0
//! Bodies of the KUnit suite `crem_bench` (`kunit/crem_kunit.c`): they run the
//! workloads of `bench_work.rs` in kernel memory, timed with `ktime_get`, and
//! return the result line for the C case to print. They measure, never assert
//! on time; see `docs/perf.md` for the method and the figures.

use super::bench_work::{self as work, Arena};
use super::run;
use crate::kernel_ext::skb::Skb;
use core::ffi::{c_char, c_int};
use core::fmt::Write;

use kernel::prelude::*;

/// The monotonic clock in ns.
pub(super) fn now_ns() -> u64 {
    // SAFETY: `ktime_get` only reads the timekeeper; it may be called from
    // any context once timekeeping is up (long before modules load).
    let t = unsafe { kernel::bindings::ktime_get() };
    u64::try_from(t).unwrap_or(0)
}

/// Rounds of a per-packet benchmark through an entry point, and packets per
/// round (`flow_csf_per_packet`, `hook_csf_per_packet`).
const ROUNDS: u32 = 8;
pub(super) const ROUND_PACKETS: u32 = 256;
/// Packets all the rounds send.
pub(super) const ROUNDS_PACKETS: u32 = ROUNDS * ROUND_PACKETS;

/// [`ROUNDS`] rounds of [`ROUND_PACKETS`] PSNs (from `psn0` on): each
/// makes the round's packets first (timed apart), then gives them to
/// `push` one after the other, timed: so the figure holds no packet making
/// (an allocation, a route lookup), which costs more than the cheap paths
/// measured. Returns the best round's push time per packet, that round's
/// making time per packet, and the packets pushed in all rounds. The best
/// rather than the mean: under TCG on a shared machine a round can stall
/// for a while. `settle` runs before each round, untimed. Softirqs that
/// become due during a round (timers, the hook's own BH sections) run
/// inside it, as they would between packets in service.
pub(super) fn per_packet_rounds(
    psn0: u32,
    make: impl Fn(u32) -> Option<Skb>,
    mut push: impl FnMut(u32, Skb),
    mut settle: impl FnMut(),
) -> (u64, u64, u32) {
    let (mut best, mut best_make, mut made) = (u64::MAX, 0u64, 0u32);
    for r in 0..ROUNDS {
        settle();
        let first = psn0.wrapping_add(r * ROUND_PACKETS);
        // Atomic: callers may run the rounds with BH off (no flow timer
        // meanwhile), where nothing may sleep. One small array a round.
        let Ok(mut round) = KVec::with_capacity(ROUND_PACKETS as usize, GFP_ATOMIC) else {
            continue;
        };
        let t0 = now_ns();
        for i in 0..ROUND_PACKETS {
            let psn = first.wrapping_add(i) & 0xff_ffff;
            if let Some(skb) = make(psn) {
                // Within the capacity: cannot fail.
                let _ = round.push((psn, skb), GFP_ATOMIC);
            }
        }
        let t1 = now_ns();
        let n = round.len() as u64;
        for (psn, skb) in round {
            push(psn, skb);
        }
        let t2 = now_ns();
        made += n as u32;
        if n == 0 {
            continue;
        }
        let cost = t2.wrapping_sub(t1) / n;
        if cost < best {
            best = cost;
            best_make = t1.wrapping_sub(t0) / n;
        }
    }
    (if best == u64::MAX { 0 } else { best }, best_make, made)
}

/// Allocates and builds the workload arena with vmalloc (~190 KiB).
fn arena() -> Result<VBox<Arena>> {
    let mut a = VBox::<Arena>::new_uninit(GFP_KERNEL)?;
    // SAFETY: the allocation is valid for writes and aligned for `Arena`;
    // `init_at` leaves a valid `Arena` in it, so it is initialised.
    Ok(unsafe {
        Arena::init_at(a.as_mut_ptr());
        a.assume_init()
    })
}

/// Runs one workload in a fresh arena, its line (or failure) into `msg`.
fn bench(
    msg: *mut c_char,
    len: usize,
    body: impl FnOnce(&mut fn() -> u64, &mut Arena, &mut dyn Write) -> bool,
) -> c_int {
    run(msg, len, |w| {
        let Ok(mut a) = arena() else {
            let _ = write!(w, "allocation failed");
            return false;
        };
        let mut clock: fn() -> u64 = now_ns;
        body(&mut clock, &mut a, w)
    })
}

/// The backend the module chose at load (`crate::gf`), for the SIMD cases.
fn chosen() -> crate::gf::Coder {
    crate::gf::Coder::chosen()
}

#[no_mangle]
extern "C" fn crem_kunit_gf_mul_acc_throughput(msg: *mut c_char, len: usize) -> c_int {
    bench(msg, len, |c, a, w| work::gf_mul_acc(c, a, None, w))
}

#[no_mangle]
extern "C" fn crem_kunit_gf_mul_acc_throughput_chosen(msg: *mut c_char, len: usize) -> c_int {
    let gf = chosen();
    bench(msg, len, |c, a, w| {
        work::gf_mul_acc(c, a, Some((gf.name(), &gf)), w)
    })
}

#[no_mangle]
extern "C" fn crem_kunit_roce_parse_per_packet(msg: *mut c_char, len: usize) -> c_int {
    bench(msg, len, |c, a, w| work::roce_parse(c, a, w))
}

#[no_mangle]
extern "C" fn crem_kunit_csf_per_packet(msg: *mut c_char, len: usize) -> c_int {
    bench(msg, len, |c, a, w| work::csf_per_packet(c, a, 0, None, w))
}

#[no_mangle]
extern "C" fn crem_kunit_csf_per_packet_m4(msg: *mut c_char, len: usize) -> c_int {
    bench(msg, len, |c, a, w| work::csf_per_packet(c, a, 4, None, w))
}

/// m = 4 on the chosen backend, in the same run as the scalar case above:
/// the pair is the SIMD speed-up of the per-packet cost.
#[no_mangle]
extern "C" fn crem_kunit_csf_per_packet_m4_chosen(msg: *mut c_char, len: usize) -> c_int {
    let gf = chosen();
    bench(msg, len, |c, a, w| {
        work::csf_per_packet(c, a, 4, Some((gf.name(), &gf)), w)
    })
}
