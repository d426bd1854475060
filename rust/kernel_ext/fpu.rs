// SPDX-License-Identifier: GPL-2.0
//! x86 FPU/SIMD in the kernel: CPU feature tests and [`with_fpu`], a
//! `kernel_fpu_begin()`/`kernel_fpu_end()` section around a closure.
//!
//! The kernel saves the user's FPU state lazily; code that touches vector
//! registers must own the FPU for the whole time it does, and may only
//! take it where `irq_fpu_usable()` says so (not, for instance, in a
//! softirq that interrupted another kernel FPU user). The section disables
//! preemption and bottom halves, so nothing in it may sleep; this module's
//! sections only run arithmetic (see `crate::gf`).

use crate::ffi;

/// Runs `f` as the FPU's owner: `Some(f())`, or `None` without running it
/// when the FPU cannot be taken in this context (the caller falls back to
/// code that needs no vector registers).
pub(crate) fn with_fpu<R>(f: impl FnOnce() -> R) -> Option<R> {
    // SAFETY: `irq_fpu_usable` only reads per-CPU state; it may be called
    // from any context.
    if !unsafe { ffi::irq_fpu_usable() } {
        return None;
    }
    // SAFETY: usable, as just checked, and this CPU cannot change before
    // `kernel_fpu_begin` disables preemption: a task preempted in between
    // re-runs the check's outcome on a CPU whose FPU is equally usable
    // (being usable is a property of the context, not of the CPU).
    unsafe { ffi::crem_h_kernel_fpu_begin() };
    let r = f();
    // SAFETY: paired with the begin above, in the same context; `f`
    // cannot leave the section (the kernel does not unwind).
    unsafe { ffi::kernel_fpu_end() };
    Some(r)
}

/// An x86 CPU feature the kernel detected and left enabled
/// (`boot_cpu_has`), e.g. [`AVX2`].
#[derive(Clone, Copy)]
pub(crate) struct Feature(u32);

pub(crate) const SSSE3: Feature = Feature(ffi::X86_FEATURE_SSSE3);
pub(crate) const AVX: Feature = Feature(ffi::X86_FEATURE_AVX);
pub(crate) const AVX2: Feature = Feature(ffi::X86_FEATURE_AVX2);
pub(crate) const AVX512F: Feature = Feature(ffi::X86_FEATURE_AVX512F);
pub(crate) const GFNI: Feature = Feature(ffi::X86_FEATURE_GFNI);

/// Whether the boot CPU (and so every CPU) has `f`.
pub(crate) fn has(f: Feature) -> bool {
    // SAFETY: reads the boot CPU's capability words, set up long before
    // modules load.
    unsafe { ffi::crem_h_boot_cpu_has(f.0) }
}

/// Register state the kernel's XSAVE manages, as `cpu_has_xfeatures`
/// masks: SSE + YMM (AVX), and the three AVX-512 components.
pub(crate) const XSTATE_YMM: u64 =
    (1 << ffi::xfeature_XFEATURE_SSE) | (1 << ffi::xfeature_XFEATURE_YMM);
pub(crate) const XSTATE_ZMM: u64 = XSTATE_YMM
    | (1 << ffi::xfeature_XFEATURE_OPMASK)
    | (1 << ffi::xfeature_XFEATURE_ZMM_Hi256)
    | (1 << ffi::xfeature_XFEATURE_Hi16_ZMM);

/// Whether the kernel saves and restores all of `mask`'s register state.
pub(crate) fn xstate_has(mask: u64) -> bool {
    // SAFETY: reads the xstate configuration fixed at boot; a null name
    // pointer is allowed ("feature_name" is optional).
    unsafe { ffi::cpu_has_xfeatures(mask, core::ptr::null_mut()) != 0 }
}
