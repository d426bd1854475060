//! The KUnit `crem_bench` workloads in host user space, for the kernel / user
//! space ratios of `docs/perf.md`: the very same code (`kunit/bench_work.rs`,
//! shared with the kernel suite), timed with `Instant` instead of
//! `ktime_get`. Plain `main`: `cargo bench -p crem-core --bench csf`. The
//! binary also runs unchanged inside the test VM (`vm/bench-kernel.sh`), which
//! separates the cost of the emulator from that of the kernel.
//!
//! Prints `crem-bench: gf_mul_acc MB/s=..`, `crem-bench: roce_parse ns=..`
//! and `crem-bench: csf_per_packet k=32 m=0|4 gf=.. ns=..` lines, as the
//! kernel does, for the scalar table and every SIMD backend this CPU has.

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
    // The SIMD backends this CPU has, as the module would time them; the
    // m = 4 case runs on the table and on each, in this one run.
    #[cfg(target_arch = "x86_64")]
    let simd: Vec<cc::gf::x86::Simd> = cc::gf::x86::Isa::ALL
        .into_iter()
        .filter(|i| i.cpu_has())
        // SAFETY: detected; user space needs no FPU section.
        .map(|i| unsafe { cc::gf::x86::Simd::new_unchecked(i) })
        .collect();
    #[cfg(not(target_arch = "x86_64"))]
    let simd: Vec<cc::gf::RowPerCall> = Vec::new();
    let named: Vec<(&str, &dyn cc::gf::MulAcc)> = simd
        .iter()
        .map(|s| (s.isa().name(), s as &dyn cc::gf::MulAcc))
        .collect();
    let mut ok = true;
    let mut line = String::new();
    ok &= work::gf_mul_acc(&mut clock, &mut a, None, &mut line);
    println!("{line}");
    for &g in &named {
        line.clear();
        ok &= work::gf_mul_acc(&mut clock, &mut a, Some(g), &mut line);
        println!("{line}");
    }
    line.clear();
    ok &= work::roce_parse(&mut clock, &mut a, &mut line);
    println!("{line}");
    for m in [0u8, 4] {
        line.clear();
        ok &= work::csf_per_packet(&mut clock, &mut a, m, None, &mut line);
        println!("{line}");
    }
    for &g in &named {
        line.clear();
        ok &= work::csf_per_packet(&mut clock, &mut a, 4, Some(g), &mut line);
        println!("{line}");
    }
    if !ok {
        std::process::exit(1);
    }
}
