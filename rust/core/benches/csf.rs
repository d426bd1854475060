//! The KUnit `crem_bench` workloads in host user space, for the kernel / user
//! space ratios of `docs/perf.md`: the very same code (`kunit/bench_work.rs`,
//! shared with the kernel suite), timed with `Instant` instead of
//! `ktime_get`. Plain `main`: `cargo bench -p crem-core --bench csf`. The
//! binary also runs unchanged inside the test VM (`vm/bench-kernel.sh`), which
//! separates the cost of the emulator from that of the kernel.
//!
//! Prints `crem-bench: gf_mul_acc MB/s=..`, `crem-bench: roce_parse ns=..`
//! and `crem-bench: csf_per_packet k=32 m=0|4 ns=..` lines, as the kernel does.

use crem_core as cc;
use std::time::Instant;

#[path = "../../../kunit/bench_work.rs"]
mod work;

fn main() {
    let mut a = Box::<work::Arena>::new_uninit();
    // SAFETY: a fresh allocation of the right size and alignment; `init_at`
    // leaves a valid `Arena` in it.
    let mut a = unsafe {
        work::Arena::init_at(a.as_mut_ptr());
        a.assume_init()
    };
    let t0 = Instant::now();
    let mut clock = || t0.elapsed().as_nanos() as u64;
    let mut ok = true;
    for case in 0..4 {
        let mut line = String::new();
        ok &= match case {
            0 => work::gf_mul_acc(&mut clock, &mut a, &mut line),
            1 => work::roce_parse(&mut clock, &mut a, &mut line),
            2 => work::csf_per_packet(&mut clock, &mut a, 0, &mut line),
            _ => work::csf_per_packet(&mut clock, &mut a, 4, &mut line),
        };
        println!("{line}");
    }
    if !ok {
        std::process::exit(1);
    }
}
