//! x86_64 SIMD multiply-accumulate, one implementation for the kernel
//! module and for user space.
//!
//! Backends ([`Isa`]): SSSE3 and AVX2 low/high-nibble `pshufb` loops (as in
//! the kernel's lib/raid6), and GFNI `vgf2p8affineqb` on 32-byte (VEX, needs
//! AVX) or 64-byte (EVEX, needs AVX-512F) vectors: one affine transform per
//! vector multiplies every byte by the constant, whatever the polynomial.
//!
//! The loops are inline `asm!` over general-purpose operands only. That is
//! what lets the same code build for the kernel's soft-float target, where
//! LLVM can neither lower SIMD intrinsics nor allocate a vector register
//! (so it holds no value in one that the loops could clobber; the kernel's
//! FPU state is the caller's, saved by `kernel_fpu_begin`). In user space,
//! where the compiler does use the vector registers, the asm declares
//! xmm0..xmm15 clobbered (the loops use no higher register; clobbering an
//! xmm register clobbers the ymm/zmm register it is the low part of).
//!
//! Two shapes, each at 1, 2 or 4 outputs per pass so that every source
//! vector is loaded once for up to four products:
//! * `mad`: several outputs += their coefficient · one source (the
//!   streaming encoder: each source packet updates its block's m repairs);
//! * `dot`: one output += Σ coefficient · source over up to [`DOT_MAX`]
//!   sources, accumulated in a register and stored once (decoding and
//!   coded retransmission, where all inputs are at hand).

use super::{common, MulAcc};

/// Most sources one `dot` pass accumulates before touching the output.
pub const DOT_MAX: usize = 8;

/// A SIMD instruction set the loops exist for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Isa {
    /// SSSE3 `pshufb`, 16 bytes per step.
    Ssse3,
    /// AVX2 `vpshufb`, 32 bytes per step.
    Avx2,
    /// GFNI affine on ymm (GFNI + AVX), 32 bytes per step.
    Gfni,
    /// GFNI affine on zmm (GFNI + AVX-512F), 64 bytes per step.
    Gfni512,
}

impl Isa {
    /// Every backend, slowest first (the order a load-time benchmark
    /// prints them in).
    pub const ALL: [Isa; 4] = [Isa::Ssse3, Isa::Avx2, Isa::Gfni, Isa::Gfni512];

    /// Short name, as the module's load message and the benchmarks print.
    pub const fn name(self) -> &'static str {
        match self {
            Isa::Ssse3 => "ssse3",
            Isa::Avx2 => "avx2",
            Isa::Gfni => "gfni",
            Isa::Gfni512 => "gfni-avx512",
        }
    }

    /// Bytes per vector step.
    pub const fn width(self) -> usize {
        match self {
            Isa::Ssse3 => 16,
            Isa::Avx2 | Isa::Gfni => 32,
            Isa::Gfni512 => 64,
        }
    }

    /// Whether the running CPU has it and the OS saves its register state
    /// (CPUID and XCR0). For user space (tests, benchmarks, tools): the
    /// kernel asks `boot_cpu_has` and `cpu_has_xfeatures`, which also
    /// honour features the kernel was told to disable.
    pub fn cpu_has(self) -> bool {
        // SAFETY: CPUID exists on every x86_64 CPU. (`__cpuid_count` is a
        // safe fn in newer Rust, unsafe in 1.85, hence the allow.)
        #[allow(unused_unsafe)]
        let (l1, l7) = unsafe {
            (
                core::arch::x86_64::__cpuid_count(1, 0),
                core::arch::x86_64::__cpuid_count(7, 0),
            )
        };
        let ssse3 = l1.ecx & (1 << 9) != 0;
        let osxsave = l1.ecx & (1 << 27) != 0;
        let avx = l1.ecx & (1 << 28) != 0;
        let avx2 = l7.ebx & (1 << 5) != 0;
        let avx512f = l7.ebx & (1 << 16) != 0;
        let gfni = l7.ecx & (1 << 8) != 0;
        let xcr0 = if osxsave { xcr0() } else { 0 };
        let ymm = avx && xcr0 & 0x6 == 0x6;
        let zmm = ymm && avx512f && xcr0 & 0xe6 == 0xe6;
        match self {
            Isa::Ssse3 => ssse3,
            Isa::Avx2 => ymm && avx2,
            Isa::Gfni => ymm && gfni,
            Isa::Gfni512 => zmm && gfni,
        }
    }
}

/// XCR0, the register state the OS saves (only called with OSXSAVE set).
fn xcr0() -> u64 {
    let (lo, hi): (u32, u32);
    // SAFETY: XGETBV with ECX = 0 is valid whenever CPUID reports OSXSAVE,
    // which the caller checked; it only reads a register.
    unsafe {
        core::arch::asm!("xgetbv", in("ecx") 0u32, out("eax") lo, out("edx") hi,
            options(nomem, nostack, preserves_flags));
    }
    (u64::from(hi) << 32) | u64::from(lo)
}

/// Nibble tables of every constant, 32 bytes each: `lo[x & 15] ^ hi[x >> 4]`
/// is c·x (built at compile time: 8 KiB of read-only data).
static NIBBLES: [[u8; 32]; 256] = build_nibbles();
/// GFNI affine matrices of every constant (2 KiB, compile time).
static AFFINE: [u64; 256] = build_affine();

const fn build_nibbles() -> [[u8; 32]; 256] {
    let mut t = [[0u8; 32]; 256];
    let mut c = 0;
    while c < 256 {
        let (lo, hi) = super::nibble_tables(c as u8);
        let mut x = 0;
        while x < 16 {
            t[c][x] = lo[x];
            t[c][16 + x] = hi[x];
            x += 1;
        }
        c += 1;
    }
    t
}

/// The 8×8 bit matrix A of x ↦ c·x in `vgf2p8affineqb`'s layout: bit i of
/// a result byte is the parity of `x & byte[7 − i]`, so byte 7 − i holds
/// bit i of c·2^j at bit j.
pub const fn affine_matrix(c: u8) -> u64 {
    let mut a = 0u64;
    let mut i = 0;
    while i < 8 {
        let mut row = 0u64;
        let mut j = 0;
        while j < 8 {
            let p = super::mul_bitwise(c, 1 << j);
            row |= (((p >> i) & 1) as u64) << j;
            j += 1;
        }
        a |= row << (8 * (7 - i));
        i += 1;
    }
    a
}

const fn build_affine() -> [u64; 256] {
    let mut t = [0u64; 256];
    let mut c = 0;
    while c < 256 {
        t[c] = affine_matrix(c as u8);
        c += 1;
    }
    t
}

/// `asm!` with the vector registers declared clobbered where the compiler
/// uses them (user space) and not where it cannot (the soft-float kernel
/// target, which has no vector register class to name); see the module
/// comment.
macro_rules! vasm {
    ($($t:tt)*) => {
        #[cfg(target_feature = "sse2")]
        core::arch::asm!(
            $($t)*,
            out("xmm0") _, out("xmm1") _, out("xmm2") _, out("xmm3") _,
            out("xmm4") _, out("xmm5") _, out("xmm6") _, out("xmm7") _,
            out("xmm8") _, out("xmm9") _, out("xmm10") _, out("xmm11") _,
            out("xmm12") _, out("xmm13") _, out("xmm14") _, out("xmm15") _,
            options(nostack)
        );
        #[cfg(not(target_feature = "sse2"))]
        core::arch::asm!($($t)*, options(nostack));
    };
}

// ---------------------------------------------------------------------------
// The loops. Contract (callers in this file only): `len` is a non-zero
// multiple of the ISA's width; every pointer is valid for `len` bytes
// (reads for sources, reads and writes for outputs); outputs overlap
// neither each other nor a source; `tbl` holds one table per output (mad)
// or per source (dot): 32 bytes (nibble) or 8 (affine) each; the CPU has
// the ISA and, in the kernel, the FPU is owned. Register use: tables in
// v0..v7, source in v8 (low nibbles) and v9 (high), products in v10/v11,
// the nibble mask in v15. AVX loops end in `vzeroupper`, so SSE code that
// runs after them pays no transition penalty.
// ---------------------------------------------------------------------------

/// After the loop: if {v} is not null, run the loop body once more with
/// the vector at {v} as source and {at} as the outputs' offset ({s} is set
/// so that [{s} + {off}] is [{v}]; {len} 0 ends the loop after it).
macro_rules! end_step {
    () => {
        "test {v}, {v}\njz 4f\nmov {off}, {at}\nmov {s}, {v}\nsub {s}, {at}\nxor {len:e}, {len:e}\nxor {v:e}, {v:e}\njmp 2b\n4:\n"
    };
}

macro_rules! next {
    ($w:literal) => {
        concat!("add {off}, ", $w, "\ncmp {off}, {len}\njb 2b\n")
    };
}

// Nibble mask 0x0f.. in v15.
macro_rules! mask_sse {
    () => {
        "mov {k:e}, 0x0f0f0f0f\nmovd xmm15, {k:e}\npshufd xmm15, xmm15, 0\n"
    };
}
macro_rules! mask_avx2 {
    () => {
        "mov {k:e}, 0x0f0f0f0f\nvmovd xmm15, {k:e}\nvpbroadcastd ymm15, xmm15\n"
    };
}

// Nibble tables of one output: lo in v$lo, hi in v$hi, from tbl + $off.
macro_rules! tbl_sse {
    ($lo:literal, $hi:literal, $off:literal) => {
        concat!(
            "movdqu xmm",
            $lo,
            ", xmmword ptr [{t} + ",
            $off,
            "]\n",
            "movdqu xmm",
            $hi,
            ", xmmword ptr [{t} + ",
            $off,
            " + 16]\n"
        )
    };
}
macro_rules! tbl_avx2 {
    ($lo:literal, $hi:literal, $off:literal) => {
        concat!(
            "vbroadcasti128 ymm",
            $lo,
            ", xmmword ptr [{t} + ",
            $off,
            "]\n",
            "vbroadcasti128 ymm",
            $hi,
            ", xmmword ptr [{t} + ",
            $off,
            " + 16]\n"
        )
    };
}
// Affine matrix of one output in v$m, from tbl + $off.
macro_rules! tbl_aff {
    ($v:literal, $m:literal, $off:literal) => {
        concat!("vpbroadcastq ", $v, $m, ", qword ptr [{t} + ", $off, "]\n")
    };
}

// Source vector at {s} + {off}, split into nibbles (nibble ISAs) or whole.
macro_rules! split_sse {
    () => {
        "movdqu xmm8, xmmword ptr [{s} + {off}]\nmovdqa xmm9, xmm8\npsrlw xmm9, 4\npand xmm8, xmm15\npand xmm9, xmm15\n"
    };
}
macro_rules! split_avx2 {
    () => {
        "vmovdqu ymm8, ymmword ptr [{s} + {off}]\nvpsrlw ymm9, ymm8, 4\nvpand ymm8, ymm8, ymm15\nvpand ymm9, ymm9, ymm15\n"
    };
}
macro_rules! load_ymm {
    () => {
        "vmovdqu ymm8, ymmword ptr [{s} + {off}]\n"
    };
}
macro_rules! load_zmm {
    () => {
        "vmovdqu64 zmm8, zmmword ptr [{s} + {off}]\n"
    };
}

// One output of a mad step: [{$d} + {off}] ^= product.
macro_rules! out_sse {
    ($lo:literal, $hi:literal, $d:literal) => {
        concat!(
            "movdqa xmm10, xmm",
            $lo,
            "\npshufb xmm10, xmm8\n",
            "movdqa xmm11, xmm",
            $hi,
            "\npshufb xmm11, xmm9\n",
            "pxor xmm10, xmm11\n",
            "movdqu xmm11, xmmword ptr [{",
            $d,
            "} + {off}]\n",
            "pxor xmm10, xmm11\n",
            "movdqu xmmword ptr [{",
            $d,
            "} + {off}], xmm10\n"
        )
    };
}
/// [{$d} + {off}] ^= v10 (`$v` the register, `$x` its XOR, `$m` its move,
/// `$p` its memory operand size).
macro_rules! acc_out {
    ($v:literal, $x:literal, $m:literal, $p:literal, $d:literal) => {
        concat!(
            $x,
            " ",
            $v,
            "10, ",
            $v,
            "10, ",
            $p,
            " ptr [{",
            $d,
            "} + {off}]\n",
            $m,
            " ",
            $p,
            " ptr [{",
            $d,
            "} + {off}], ",
            $v,
            "10\n"
        )
    };
}
macro_rules! out_avx2 {
    ($lo:literal, $hi:literal, $d:literal) => {
        concat!(
            "vpshufb ymm10, ymm",
            $lo,
            ", ymm8\n",
            "vpshufb ymm11, ymm",
            $hi,
            ", ymm9\n",
            "vpxor ymm10, ymm10, ymm11\n",
            acc_out!("ymm", "vpxor", "vmovdqu", "ymmword", $d)
        )
    };
}
macro_rules! out_gfni {
    ($m:literal, $d:literal) => {
        concat!(
            "vgf2p8affineqb ymm10, ymm8, ymm",
            $m,
            ", 0\n",
            acc_out!("ymm", "vpxor", "vmovdqu", "ymmword", $d)
        )
    };
}
macro_rules! out_gfni512 {
    ($m:literal, $d:literal) => {
        concat!(
            "vgf2p8affineqb zmm10, zmm8, zmm", $m, ", 0\n",
            acc_out!("zmm", "vpxorq", "vmovdqu64", "zmmword", $d)
        )
    };
}

/// One mad loop: `$n` outputs `[$d $i]` (operand name, index into `d`).
macro_rules! mad_fn {
    ($name:ident, $n:literal, [$($d:ident $i:literal),+], $tmpl:expr $(, $k:ident)?) => {
        unsafe fn $name(
            s: *const u8,
            len: usize,
            d: &[*mut u8; $n],
            tbl: *const u8,
            end: *const u8,
            at: usize,
        ) {
            // SAFETY: the loop contract above, which the callers check,
            // and, if `end` is not null, one more vector at `end` into the
            // outputs at offset `at`.
            unsafe {
                vasm!(
                    $tmpl,
                    s = inout(reg) s => _, len = inout(reg) len => _, t = in(reg) tbl,
                    $($d = in(reg) d[$i],)+
                    v = inout(reg) end => _, at = in(reg) at,
                    off = inout(reg) 0usize => _ $(, $k = out(reg) _)?
                );
            }
        }
    };
}

mad_fn!(mad1_ssse3, 1, [d0 0], concat!(
    mask_sse!(), tbl_sse!("0", "1", "0"),
    "2:\n", split_sse!(), out_sse!("0", "1", "d0"), next!("16"), end_step!()), k);
mad_fn!(mad2_ssse3, 2, [d0 0, d1 1], concat!(
    mask_sse!(), tbl_sse!("0", "1", "0"), tbl_sse!("2", "3", "32"),
    "2:\n", split_sse!(), out_sse!("0", "1", "d0"), out_sse!("2", "3", "d1"), next!("16"), end_step!()), k);
mad_fn!(mad4_ssse3, 4, [d0 0, d1 1, d2 2, d3 3], concat!(
    mask_sse!(), tbl_sse!("0", "1", "0"), tbl_sse!("2", "3", "32"),
    tbl_sse!("4", "5", "64"), tbl_sse!("6", "7", "96"),
    "2:\n", split_sse!(), out_sse!("0", "1", "d0"), out_sse!("2", "3", "d1"),
    out_sse!("4", "5", "d2"), out_sse!("6", "7", "d3"), next!("16"), end_step!()), k);

mad_fn!(mad1_avx2, 1, [d0 0], concat!(
    mask_avx2!(), tbl_avx2!("0", "1", "0"),
    "2:\n", split_avx2!(), out_avx2!("0", "1", "d0"), next!("32"), end_step!(), "vzeroupper\n"), k);
mad_fn!(mad2_avx2, 2, [d0 0, d1 1], concat!(
    mask_avx2!(), tbl_avx2!("0", "1", "0"), tbl_avx2!("2", "3", "32"),
    "2:\n", split_avx2!(), out_avx2!("0", "1", "d0"), out_avx2!("2", "3", "d1"),
    next!("32"), end_step!(), "vzeroupper\n"), k);
mad_fn!(mad4_avx2, 4, [d0 0, d1 1, d2 2, d3 3], concat!(
    mask_avx2!(), tbl_avx2!("0", "1", "0"), tbl_avx2!("2", "3", "32"),
    tbl_avx2!("4", "5", "64"), tbl_avx2!("6", "7", "96"),
    "2:\n", split_avx2!(), out_avx2!("0", "1", "d0"), out_avx2!("2", "3", "d1"),
    out_avx2!("4", "5", "d2"), out_avx2!("6", "7", "d3"), next!("32"), end_step!(), "vzeroupper\n"), k);

/// The three GFNI mad loops of one register width: `$v` "ymm" or "zmm",
/// `$w` the step, `$load` and `$out` its source load and output step.
macro_rules! aff_mads {
    ($f1:ident, $f2:ident, $f4:ident, $v:literal, $w:literal, $load:ident, $out:ident) => {
        mad_fn!($f1, 1, [d0 0], concat!(
            tbl_aff!($v, "0", "0"),
            "2:\n", $load!(), $out!("0", "d0"), next!($w), end_step!(), "vzeroupper\n"));
        mad_fn!($f2, 2, [d0 0, d1 1], concat!(
            tbl_aff!($v, "0", "0"), tbl_aff!($v, "1", "8"),
            "2:\n", $load!(), $out!("0", "d0"), $out!("1", "d1"), next!($w), end_step!(), "vzeroupper\n"));
        mad_fn!($f4, 4, [d0 0, d1 1, d2 2, d3 3], concat!(
            tbl_aff!($v, "0", "0"), tbl_aff!($v, "1", "8"),
            tbl_aff!($v, "2", "16"), tbl_aff!($v, "3", "24"),
            "2:\n", $load!(), $out!("0", "d0"), $out!("1", "d1"),
            $out!("2", "d2"), $out!("3", "d3"), next!($w), end_step!(), "vzeroupper\n"));
    };
}

aff_mads!(mad1_gfni, mad2_gfni, mad4_gfni, "ymm", "32", load_ymm, out_gfni);
aff_mads!(
    mad1_gfni512,
    mad2_gfni512,
    mad4_gfni512,
    "zmm",
    "64",
    load_zmm,
    out_gfni512
);

/// One dot loop: for each vector step, v0 = Σ over the `n` sources
/// (pointers at `p`, tables from `tbl` on, `$ts` bytes each) of the
/// product, then [{d} + {off}] ^= v0. `$body` turns the source vector at
/// {q} + {off} into the product in v1, using the table at {tp}.
macro_rules! dot_fn {
    ($name:ident, $w:literal, $ts:literal, $pro:expr, $zero:expr, $body:expr, $acc:expr,
     $store:expr, $epi:expr $(, $k:ident)?) => {
        unsafe fn $name(d: *mut u8, len: usize, p: *const *const u8, n: usize, tbl: *const u8) {
            // SAFETY: the loop contract above, and `n` >= 1 pointers at `p`.
            unsafe {
                vasm!(
                    concat!(
                        $pro,
                        "2:\n", $zero, "xor {i:e}, {i:e}\nmov {tp}, {t}\n",
                        "3:\n", "mov {q}, qword ptr [{p} + 8*{i}]\n", $body, $acc,
                        "add {tp}, ", $ts, "\ninc {i}\ncmp {i}, {n}\njb 3b\n",
                        $store, next!($w), $epi
                    ),
                    d = in(reg) d, len = in(reg) len, p = in(reg) p, n = in(reg) n,
                    t = in(reg) tbl, off = inout(reg) 0usize => _, i = out(reg) _,
                    tp = out(reg) _, q = out(reg) _ $(, $k = out(reg) _)?
                );
            }
        }
    };
}

dot_fn!(dot_ssse3, "16", "32", mask_sse!(), "pxor xmm0, xmm0\n",
    concat!(
        "movdqu xmm8, xmmword ptr [{q} + {off}]\nmovdqa xmm9, xmm8\npsrlw xmm9, 4\n",
        "pand xmm8, xmm15\npand xmm9, xmm15\n",
        "movdqu xmm1, xmmword ptr [{tp}]\nmovdqu xmm2, xmmword ptr [{tp} + 16]\n",
        "pshufb xmm1, xmm8\npshufb xmm2, xmm9\npxor xmm1, xmm2\n"
    ),
    "pxor xmm0, xmm1\n",
    "movdqu xmm1, xmmword ptr [{d} + {off}]\npxor xmm0, xmm1\nmovdqu xmmword ptr [{d} + {off}], xmm0\n",
    "", k);
dot_fn!(
    dot_avx2,
    "32",
    "32",
    mask_avx2!(),
    "vpxor ymm0, ymm0, ymm0\n",
    concat!(
        "vmovdqu ymm8, ymmword ptr [{q} + {off}]\nvpsrlw ymm9, ymm8, 4\n",
        "vpand ymm8, ymm8, ymm15\nvpand ymm9, ymm9, ymm15\n",
        "vbroadcasti128 ymm1, xmmword ptr [{tp}]\nvbroadcasti128 ymm2, xmmword ptr [{tp} + 16]\n",
        "vpshufb ymm1, ymm1, ymm8\nvpshufb ymm2, ymm2, ymm9\nvpxor ymm1, ymm1, ymm2\n"
    ),
    "vpxor ymm0, ymm0, ymm1\n",
    "vpxor ymm0, ymm0, ymmword ptr [{d} + {off}]\nvmovdqu ymmword ptr [{d} + {off}], ymm0\n",
    "vzeroupper\n",
    k
);
dot_fn!(
    dot_gfni,
    "32",
    "8",
    "",
    "vpxor ymm0, ymm0, ymm0\n",
    concat!(
        "vmovdqu ymm8, ymmword ptr [{q} + {off}]\nvpbroadcastq ymm1, qword ptr [{tp}]\n",
        "vgf2p8affineqb ymm1, ymm8, ymm1, 0\n"
    ),
    "vpxor ymm0, ymm0, ymm1\n",
    "vpxor ymm0, ymm0, ymmword ptr [{d} + {off}]\nvmovdqu ymmword ptr [{d} + {off}], ymm0\n",
    "vzeroupper\n"
);
dot_fn!(
    dot_gfni512,
    "64",
    "8",
    "",
    "vpxorq zmm0, zmm0, zmm0\n",
    concat!(
        "vmovdqu64 zmm8, zmmword ptr [{q} + {off}]\nvpbroadcastq zmm1, qword ptr [{tp}]\n",
        "vgf2p8affineqb zmm1, zmm8, zmm1, 0\n"
    ),
    "vpxorq zmm0, zmm0, zmm1\n",
    "vpxorq zmm0, zmm0, zmmword ptr [{d} + {off}]\nvmovdqu64 zmmword ptr [{d} + {off}], zmm0\n",
    "vzeroupper\n"
);

// Two vectors a step (v0 and v4 accumulate, {off} and {off} + width): half
// the loop overhead per byte of the single-vector loops above, which finish
// an odd vector. SSSE3 keeps the single loop.
dot_fn!(dot2_avx2, "64", "32", mask_avx2!(), "vpxor ymm0, ymm0, ymm0\nvpxor ymm4, ymm4, ymm4\n",
    concat!(
        "vbroadcasti128 ymm1, xmmword ptr [{tp}]\nvbroadcasti128 ymm2, xmmword ptr [{tp} + 16]\n",
        "vmovdqu ymm8, ymmword ptr [{q} + {off}]\nvpsrlw ymm9, ymm8, 4\n",
        "vpand ymm8, ymm8, ymm15\nvpand ymm9, ymm9, ymm15\n",
        "vpshufb ymm8, ymm1, ymm8\nvpshufb ymm9, ymm2, ymm9\nvpxor ymm0, ymm0, ymm8\n",
        "vmovdqu ymm10, ymmword ptr [{q} + {off} + 32]\nvpsrlw ymm11, ymm10, 4\n",
        "vpand ymm10, ymm10, ymm15\nvpand ymm11, ymm11, ymm15\n",
        "vpshufb ymm10, ymm1, ymm10\nvpshufb ymm11, ymm2, ymm11\nvpxor ymm4, ymm4, ymm10\n"
    ),
    "vpxor ymm0, ymm0, ymm9\nvpxor ymm4, ymm4, ymm11\n",
    concat!(
        "vpxor ymm0, ymm0, ymmword ptr [{d} + {off}]\nvmovdqu ymmword ptr [{d} + {off}], ymm0\n",
        "vpxor ymm4, ymm4, ymmword ptr [{d} + {off} + 32]\nvmovdqu ymmword ptr [{d} + {off} + 32], ymm4\n"
    ),
    "vzeroupper\n", k);
dot_fn!(dot2_gfni, "64", "8", "", "vpxor ymm0, ymm0, ymm0\nvpxor ymm4, ymm4, ymm4\n",
    concat!(
        "vpbroadcastq ymm1, qword ptr [{tp}]\n",
        "vmovdqu ymm8, ymmword ptr [{q} + {off}]\n",
        "vmovdqu ymm9, ymmword ptr [{q} + {off} + 32]\n",
        "vgf2p8affineqb ymm2, ymm8, ymm1, 0\nvgf2p8affineqb ymm3, ymm9, ymm1, 0\n"
    ),
    "vpxor ymm0, ymm0, ymm2\nvpxor ymm4, ymm4, ymm3\n",
    concat!(
        "vpxor ymm0, ymm0, ymmword ptr [{d} + {off}]\nvmovdqu ymmword ptr [{d} + {off}], ymm0\n",
        "vpxor ymm4, ymm4, ymmword ptr [{d} + {off} + 32]\nvmovdqu ymmword ptr [{d} + {off} + 32], ymm4\n"
    ),
    "vzeroupper\n");
dot_fn!(dot2_gfni512, "128", "8", "", "vpxorq zmm0, zmm0, zmm0\nvpxorq zmm4, zmm4, zmm4\n",
    concat!(
        "vpbroadcastq zmm1, qword ptr [{tp}]\n",
        "vmovdqu64 zmm8, zmmword ptr [{q} + {off}]\n",
        "vmovdqu64 zmm9, zmmword ptr [{q} + {off} + 64]\n",
        "vgf2p8affineqb zmm2, zmm8, zmm1, 0\nvgf2p8affineqb zmm3, zmm9, zmm1, 0\n"
    ),
    "vpxorq zmm0, zmm0, zmm2\nvpxorq zmm4, zmm4, zmm3\n",
    concat!(
        "vpxorq zmm0, zmm0, zmmword ptr [{d} + {off}]\nvmovdqu64 zmmword ptr [{d} + {off}], zmm0\n",
        "vpxorq zmm4, zmm4, zmmword ptr [{d} + {off} + 64]\nvmovdqu64 zmmword ptr [{d} + {off} + 64], zmm4\n"
    ),
    "vzeroupper\n");

/// Four-output dot loops: for each vector step, v0..v3 = Σ over the `n`
/// sources of the source times its four tables (`tbl` holds, per source,
/// the tables of rows 0..4 in turn, `$ts` bytes for all four), then
/// [{dR} + {off}] ^= vR. Each source vector is loaded once for four rows.
macro_rules! dot4_fn {
    ($name:ident, $w:literal, $ts:literal, $pro:expr, $zero:expr, $body:expr, $store:expr,
     $epi:expr) => {
        unsafe fn $name(
            d: &[*mut u8; 4],
            len: usize,
            p: *const *const u8,
            n: usize,
            tbl: *const u8,
        ) {
            // SAFETY: the loop contract above, and `n` >= 1 pointers at `p`.
            unsafe {
                vasm!(
                    concat!(
                        $pro,
                        "2:\n", $zero, "xor {i:e}, {i:e}\nmov {tp}, {t}\n",
                        "3:\n", "mov {q}, qword ptr [{p} + 8*{i}]\n", $body,
                        "add {tp}, ", $ts, "\ninc {i}\ncmp {i}, {n}\njb 3b\n",
                        $store, next!($w), $epi
                    ),
                    d0 = in(reg) d[0], d1 = in(reg) d[1], d2 = in(reg) d[2], d3 = in(reg) d[3],
                    len = in(reg) len, p = in(reg) p, n = in(reg) n,
                    t = in(reg) tbl, off = inout(reg) 0usize => _, i = out(reg) _,
                    tp = out(reg) _, q = out(reg) _
                );
            }
        }
    };
}

/// One row of a four-output dot step: vR ^= source · table at {tp} + $o
/// (`$x` the register width's XOR: VEX `vpxor` for ymm, EVEX `vpxorq`
/// for zmm).
macro_rules! dot4_row_aff {
    ($v:literal, $x:literal, $r:literal, $o:literal) => {
        concat!(
            "vpbroadcastq ",
            $v,
            "9, qword ptr [{tp} + ",
            $o,
            "]\n",
            "vgf2p8affineqb ",
            $v,
            "10, ",
            $v,
            "8, ",
            $v,
            "9, 0\n",
            $x,
            " ",
            $v,
            $r,
            ", ",
            $v,
            $r,
            ", ",
            $v,
            "10\n"
        )
    };
}
macro_rules! dot4_row_nib {
    ($r:literal, $o:literal) => {
        concat!(
            "vbroadcasti128 ymm10, xmmword ptr [{tp} + ",
            $o,
            "]\n",
            "vbroadcasti128 ymm11, xmmword ptr [{tp} + ",
            $o,
            " + 16]\n",
            "vpshufb ymm10, ymm10, ymm8\nvpshufb ymm11, ymm11, ymm9\n",
            "vpxor ymm",
            $r,
            ", ymm",
            $r,
            ", ymm10\nvpxor ymm",
            $r,
            ", ymm",
            $r,
            ", ymm11\n"
        )
    };
}
/// Zeroes v0..v3.
macro_rules! dot4_zero {
    ($v:literal, $x:literal) => {
        concat!(
            $x, " ", $v, "0, ", $v, "0, ", $v, "0\n", $x, " ", $v, "1, ", $v, "1, ", $v, "1\n", $x,
            " ", $v, "2, ", $v, "2, ", $v, "2\n", $x, " ", $v, "3, ", $v, "3, ", $v, "3\n"
        )
    };
}
/// [{dR} + {off}] ^= vR for the four rows (`$m` the width's move, `$p` its
/// memory operand size).
macro_rules! dot4_store {
    ($v:literal, $x:literal, $m:literal, $p:literal) => {
        concat!(
            $x,
            " ",
            $v,
            "0, ",
            $v,
            "0, ",
            $p,
            " ptr [{d0} + {off}]\n",
            $m,
            " ",
            $p,
            " ptr [{d0} + {off}], ",
            $v,
            "0\n",
            $x,
            " ",
            $v,
            "1, ",
            $v,
            "1, ",
            $p,
            " ptr [{d1} + {off}]\n",
            $m,
            " ",
            $p,
            " ptr [{d1} + {off}], ",
            $v,
            "1\n",
            $x,
            " ",
            $v,
            "2, ",
            $v,
            "2, ",
            $p,
            " ptr [{d2} + {off}]\n",
            $m,
            " ",
            $p,
            " ptr [{d2} + {off}], ",
            $v,
            "2\n",
            $x,
            " ",
            $v,
            "3, ",
            $v,
            "3, ",
            $p,
            " ptr [{d3} + {off}]\n",
            $m,
            " ",
            $p,
            " ptr [{d3} + {off}], ",
            $v,
            "3\n"
        )
    };
}
/// The GFNI four-output dot loop of one register width.
macro_rules! dot4_aff_fn {
    ($name:ident, $w:literal, $v:literal, $x:literal, $m:literal, $p:literal) => {
        dot4_fn!(
            $name,
            $w,
            "32",
            "",
            dot4_zero!($v, $x),
            concat!(
                $m,
                " ",
                $v,
                "8, ",
                $p,
                " ptr [{q} + {off}]\n",
                dot4_row_aff!($v, $x, "0", "0"),
                dot4_row_aff!($v, $x, "1", "8"),
                dot4_row_aff!($v, $x, "2", "16"),
                dot4_row_aff!($v, $x, "3", "24")
            ),
            dot4_store!($v, $x, $m, $p),
            "vzeroupper\n"
        );
    };
}

dot4_fn!(
    dot4_avx2,
    "32",
    "128",
    "mov {q:e}, 0x0f0f0f0f\nvmovd xmm15, {q:e}\nvpbroadcastd ymm15, xmm15\n",
    dot4_zero!("ymm", "vpxor"),
    concat!(
        "vmovdqu ymm8, ymmword ptr [{q} + {off}]\nvpsrlw ymm9, ymm8, 4\n",
        "vpand ymm8, ymm8, ymm15\nvpand ymm9, ymm9, ymm15\n",
        dot4_row_nib!("0", "0"),
        dot4_row_nib!("1", "32"),
        dot4_row_nib!("2", "64"),
        dot4_row_nib!("3", "96")
    ),
    dot4_store!("ymm", "vpxor", "vmovdqu", "ymmword"),
    "vzeroupper\n"
);
dot4_aff_fn!(dot4_gfni, "32", "ymm", "vpxor", "vmovdqu", "ymmword");
dot4_aff_fn!(dot4_gfni512, "64", "zmm", "vpxorq", "vmovdqu64", "zmmword");

/// A [`MulAcc`] backend over one [`Isa`]'s loops. Holding one is the proof
/// that the ISA may be used here, hence the unsafe constructor.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Simd(Isa);

impl Simd {
    /// # Safety
    /// The CPU (and OS) must support `isa`, and in the kernel the value may
    /// only be used while the FPU is owned (`kernel_fpu_begin`).
    pub const unsafe fn new_unchecked(isa: Isa) -> Self {
        Simd(isa)
    }

    /// The instruction set.
    pub const fn isa(self) -> Isa {
        self.0
    }

    /// The tables of `coefs` (at most N) in the layout this ISA's loops
    /// read; only that layout is built.
    fn tables<const N: usize>(self, coefs: &[u8]) -> Tables<N> {
        if matches!(self.0, Isa::Ssse3 | Isa::Avx2) {
            let mut t = [[0u8; 32]; N];
            for (x, &c) in t.iter_mut().zip(coefs) {
                *x = NIBBLES[c as usize];
            }
            Tables::Nibble(t)
        } else {
            let mut t = [0u64; N];
            for (x, &c) in t.iter_mut().zip(coefs) {
                *x = AFFINE[c as usize];
            }
            Tables::Affine(t)
        }
    }

    /// The mad loop for `d.len()` (1, 2 or 4) outputs over `n` bytes.
    ///
    /// # Safety
    /// The loop contract (see above) for `s`, `d`, `n` and `tbl`.
    unsafe fn mad(self, s: *const u8, n: usize, d: &[*mut u8], tbl: *const u8, end: End) {
        let (v, at) = end.unwrap_or((core::ptr::null(), 0));
        // SAFETY: the caller's contract.
        unsafe {
            match (self.0, d) {
                (Isa::Ssse3, [a]) => mad1_ssse3(s, n, &[*a], tbl, v, at),
                (Isa::Ssse3, [a, b]) => mad2_ssse3(s, n, &[*a, *b], tbl, v, at),
                (Isa::Ssse3, [a, b, c, e]) => mad4_ssse3(s, n, &[*a, *b, *c, *e], tbl, v, at),
                (Isa::Avx2, [a]) => mad1_avx2(s, n, &[*a], tbl, v, at),
                (Isa::Avx2, [a, b]) => mad2_avx2(s, n, &[*a, *b], tbl, v, at),
                (Isa::Avx2, [a, b, c, e]) => mad4_avx2(s, n, &[*a, *b, *c, *e], tbl, v, at),
                (Isa::Gfni, [a]) => mad1_gfni(s, n, &[*a], tbl, v, at),
                (Isa::Gfni, [a, b]) => mad2_gfni(s, n, &[*a, *b], tbl, v, at),
                (Isa::Gfni, [a, b, c, e]) => mad4_gfni(s, n, &[*a, *b, *c, *e], tbl, v, at),
                (Isa::Gfni512, [a]) => mad1_gfni512(s, n, &[*a], tbl, v, at),
                (Isa::Gfni512, [a, b]) => mad2_gfni512(s, n, &[*a, *b], tbl, v, at),
                (Isa::Gfni512, [a, b, c, e]) => mad4_gfni512(s, n, &[*a, *b, *c, *e], tbl, v, at),
                _ => {}
            }
        }
    }

    /// The dot loop of this ISA: `d` ^= Σ products of the first `n`
    /// sources at `p` (tables at `tbl`) over `len` bytes.
    ///
    /// # Safety
    /// The loop contract for `d`, `len`, the `n` >= 1 pointers and `tbl`.
    unsafe fn dot(
        self,
        d: *mut u8,
        len: usize,
        p: &[*const u8; DOT_MAX],
        n: usize,
        tbl: *const u8,
    ) {
        let n = n.min(DOT_MAX);
        let w = self.0.width();
        // Pairs of vectors, then the odd one (SSSE3: all single).
        let pairs = match self.0 {
            Isa::Ssse3 => 0,
            _ => len & !(w.wrapping_mul(2).wrapping_sub(1)),
        };
        let pp = p.as_ptr();
        // SAFETY: the caller's contract, over [0, pairs) and [pairs, len).
        unsafe {
            if pairs > 0 {
                match self.0 {
                    Isa::Ssse3 => {}
                    Isa::Avx2 => dot2_avx2(d, pairs, pp, n, tbl),
                    Isa::Gfni => dot2_gfni(d, pairs, pp, n, tbl),
                    Isa::Gfni512 => dot2_gfni512(d, pairs, pp, n, tbl),
                }
            }
            if pairs == len {
                return;
            }
            let mut rest = [core::ptr::null::<u8>(); DOT_MAX];
            for (r, &q) in rest.iter_mut().zip(p) {
                *r = q.wrapping_add(pairs);
            }
            let (d, len, pp) = (d.add(pairs), len.wrapping_sub(pairs), rest.as_ptr());
            match self.0 {
                Isa::Ssse3 => dot_ssse3(d, len, pp, n, tbl),
                Isa::Avx2 => dot_avx2(d, len, pp, n, tbl),
                Isa::Gfni => dot_gfni(d, len, pp, n, tbl),
                Isa::Gfni512 => dot_gfni512(d, len, pp, n, tbl),
            }
        }
    }

    /// The four-output dot loop (not SSSE3, which callers route to the
    /// one-output loop): `d[r]` ^= Σ products of the first `n` sources at
    /// `p` with the tables at `tbl` ([source][row] order) over `len` bytes.
    ///
    /// # Safety
    /// The loop contract for the four outputs, `len`, the `n` >= 1
    /// pointers and `tbl`.
    unsafe fn dot4(
        self,
        d: &[*mut u8; 4],
        len: usize,
        p: &[*const u8; DOT_MAX],
        n: usize,
        tbl: *const u8,
    ) {
        let n = n.min(DOT_MAX);
        // SAFETY: the caller's contract.
        unsafe {
            match self.0 {
                Isa::Ssse3 => {}
                Isa::Avx2 => dot4_avx2(d, len, p.as_ptr(), n, tbl),
                Isa::Gfni => dot4_gfni(d, len, p.as_ptr(), n, tbl),
                Isa::Gfni512 => dot4_gfni512(d, len, p.as_ptr(), n, tbl),
            }
        }
    }

    /// Splits `len` into the vector part and the byte tail.
    fn bulk(self, len: usize) -> usize {
        // Widths are powers of two.
        len & !(self.0.width().wrapping_sub(1))
    }
}

/// dst ^= c·src byte by byte with the nibble table (lengths below a width).
fn tail_bytes(dst: &mut [u8], src: &[u8], c: u8) {
    let t = &NIBBLES[c as usize];
    for (d, s) in dst.iter_mut().zip(src) {
        *d ^= t[(*s & 15) as usize] ^ t[16 + (*s >> 4) as usize];
    }
}

impl Simd {
    /// The mad loops over rows `base + r·stride` (r < coefs.len()), four,
    /// two or one at a time, for the `n` bytes from `s` and then, if
    /// `end` is given, once more for its vector at offset `at` of each row.
    ///
    /// # Safety
    /// `n` is a non-zero multiple of the width, `s` valid for `n` bytes of reads,
    /// each row for `n` (and `at` + width) bytes of reads and writes; rows
    /// are disjoint and overlap neither `s` nor `end`;
    /// `new_unchecked`'s contract.
    unsafe fn rows_at(
        self,
        s: *const u8,
        n: usize,
        end: End,
        base: *mut u8,
        stride: usize,
        coefs: &[u8],
    ) {
        let rows = coefs.len();
        let mut r = 0;
        while r < rows {
            let g = match rows.wrapping_sub(r) {
                1 => 1,
                2 | 3 => 2,
                _ => 4,
            };
            let mut d = [base; 4];
            for (x, p) in (0..g).zip(d.iter_mut()) {
                // SAFETY: row r + x is one of the caller's rows.
                *p = unsafe { base.add(r.wrapping_add(x).wrapping_mul(stride)) };
            }
            let (Some(dg), Some(cg)) = (d.get_mut(..g), coefs.get(r..r.wrapping_add(g))) else {
                break;
            };
            let t = self.tables::<4>(cg);
            // SAFETY: the caller's contract.
            unsafe { self.mad(s, n, dg, t.as_ptr(), end) };
            r = r.wrapping_add(g); // <= rows
        }
    }
}

/// A last vector for the mad loops: its address and the outputs' offset.
type End = Option<(*const u8, usize)>;

/// Multiplication tables of a few coefficients, as one ISA's loops read
/// them: 32 nibble bytes or one affine matrix per coefficient.
enum Tables<const N: usize> {
    Nibble([[u8; 32]; N]),
    Affine([u64; N]),
}

impl<const N: usize> Tables<N> {
    fn as_ptr(&self) -> *const u8 {
        match self {
            Tables::Nibble(t) => t.as_ptr().cast(),
            Tables::Affine(t) => t.as_ptr().cast(),
        }
    }
}

/// The last `w` bytes of `src`, with all but the last `tail` zeroed: a
/// source vector whose product is zero over bytes a loop already did, so
/// one more full-width step finishes a length that is not a multiple of
/// the width (xoring zero into the overlap leaves it as it was), instead
/// of a byte-at-a-time tail. `src.len() >= w`, `tail < w <= 64`.
fn masked_end(src: &[u8], w: usize, tail: usize) -> [u8; 64] {
    let mut v = [0u8; 64];
    let start = src.len().wrapping_sub(tail);
    let keep = w.wrapping_sub(tail);
    if let (Some(d), Some(s)) = (v.get_mut(keep..w), src.get(start..)) {
        d.copy_from_slice(s);
    }
    v
}

impl MulAcc for Simd {
    fn as_dyn(&self) -> &dyn MulAcc {
        self
    }
    fn mul_acc(&self, dst: &mut [u8], src: &[u8], c: u8) {
        let (dst, src) = common(dst, src);
        if c != 0 {
            self.mul_acc_rows(dst, src.len(), src, &[c]);
        }
    }

    fn mul_acc_rows(&self, dst: &mut [u8], stride: usize, src: &[u8], coefs: &[u8]) {
        let len = src.len();
        let rows = coefs.len();
        // The loops need disjoint, whole rows; anything else takes the
        // row-at-a-time definition.
        let fits = rows
            .checked_sub(1)
            .and_then(|r| r.checked_mul(stride))
            .and_then(|x| x.checked_add(len))
            .is_some_and(|end| end <= dst.len());
        if stride < len || !fits {
            return super::mul_acc_rows_each(self, dst, stride, src, coefs);
        }
        let (w, bulk) = (self.0.width(), self.bulk(len));
        let tail = len.wrapping_sub(bulk);
        if len >= w {
            let v = (tail > 0).then(|| masked_end(src, w, tail));
            let end = v.as_ref().map(|v| (v.as_ptr(), len.wrapping_sub(w)));
            // SAFETY: `fits` and stride >= len make the rows disjoint parts
            // of `dst`, which (borrowed mutably) overlaps neither `src` nor
            // the local `v`; the window [len − w, len) is inside each row.
            unsafe { self.rows_at(src.as_ptr(), bulk, end, dst.as_mut_ptr(), stride, coefs) };
            return;
        }
        for (r, &c) in (0..rows).zip(coefs) {
            // Inside `dst` (`fits`): no wrap.
            let at = r.wrapping_mul(stride).wrapping_add(bulk);
            if let (Some(d), Some(s)) = (dst.get_mut(at..at.wrapping_add(tail)), src.get(bulk..)) {
                tail_bytes(d, s, c);
            }
        }
    }

    fn dot_acc_rows(&self, dst: &mut [u8], srcs: &[&[u8]], coefs: &[u8]) {
        let n = srcs.len();
        let rows = coefs.len().checked_div(n).unwrap_or(0);
        let Some(len) = dst.len().checked_div(rows) else {
            return;
        };
        let w = self.0.width();
        if self.0 == Isa::Ssse3 || rows < 4 || len < w || srcs.iter().any(|s| s.len() < len) {
            return super::dot_acc_rows_each(self, dst, srcs, coefs);
        }
        let bulk = self.bulk(len);
        let tail = len.wrapping_sub(bulk);
        let base = dst.as_mut_ptr();
        let mut r = 0;
        // Four rows at a time; the rest one by one below.
        while rows.wrapping_sub(r) >= 4 {
            let mut d = [base; 4];
            for (x, dp) in (0..4usize).zip(d.iter_mut()) {
                // SAFETY: row r + x < rows starts inside `dst`.
                *dp = unsafe { base.add(r.wrapping_add(x).wrapping_mul(len)) };
            }
            let mut at = 0;
            while at < n {
                let nb = n.wrapping_sub(at).min(DOT_MAX);
                let mut p = [core::ptr::null::<u8>(); DOT_MAX];
                let mut cl = [0u8; 4 * DOT_MAX];
                for (j, pp) in (0..nb).zip(p.iter_mut()) {
                    let sj = at.wrapping_add(j); // < n
                    if let Some(s) = srcs.get(sj) {
                        *pp = s.as_ptr();
                    }
                    for x in 0..4usize {
                        // Coefficient of source sj in row r + x: < coefs.len().
                        let ci = r.wrapping_add(x).wrapping_mul(n).wrapping_add(sj);
                        if let (Some(c), Some(&v)) =
                            (cl.get_mut(j.wrapping_mul(4).wrapping_add(x)), coefs.get(ci))
                        {
                            *c = v;
                        }
                    }
                }
                let tables = self.tables::<{ 4 * DOT_MAX }>(&cl);
                // SAFETY: four disjoint rows of `len` >= `bulk` bytes inside
                // the mutable `dst`; nb >= 1 shared sources of at least
                // `len` bytes; `new_unchecked`'s contract.
                unsafe {
                    if bulk > 0 {
                        self.dot4(&d, bulk, &p, nb, tables.as_ptr());
                    }
                    if tail > 0 {
                        let mut ends = [[0u8; 64]; DOT_MAX];
                        for (j, (e, pp)) in (0..nb).zip(ends.iter_mut().zip(p.iter_mut())) {
                            if let Some(s) = srcs.get(at.wrapping_add(j)) {
                                *e = masked_end(s.get(..len).unwrap_or(s), w, tail);
                                *pp = e.as_ptr();
                            }
                        }
                        let dt = d.map(|x| x.add(len.wrapping_sub(w)));
                        self.dot4(&dt, w, &p, nb, tables.as_ptr());
                    }
                }
                at = at.wrapping_add(nb); // <= n
            }
            r = r.wrapping_add(4);
        }
        while r < rows {
            let (lo, hi) = (r.wrapping_mul(len), r.wrapping_add(1).wrapping_mul(len));
            let (cl, ch) = (r.wrapping_mul(n), r.wrapping_add(1).wrapping_mul(n));
            if let (Some(row), Some(cs)) = (dst.get_mut(lo..hi), coefs.get(cl..ch)) {
                self.dot_acc(row, srcs, cs);
            }
            r = r.wrapping_add(1);
        }
    }

    fn dot_acc(&self, dst: &mut [u8], srcs: &[&[u8]], coefs: &[u8]) {
        let len = dst.len();
        if srcs.iter().any(|s| s.len() < len) {
            return super::dot_acc_each(self, dst, srcs, coefs);
        }
        let (w, bulk) = (self.0.width(), self.bulk(len));
        let tail = len.wrapping_sub(bulk);
        let total = srcs.len().min(coefs.len());
        let mut at = 0;
        // Batches of DOT_MAX (not `chunks().zip()`, whose indexing carries
        // an overflow check into the kernel build).
        while at < total {
            let n = total.wrapping_sub(at).min(DOT_MAX);
            let next = at.wrapping_add(n); // <= total
            let (Some(ss), Some(cs)) = (srcs.get(at..next), coefs.get(at..next)) else {
                break;
            };
            at = next;
            let mut p = [core::ptr::null::<u8>(); DOT_MAX];
            for (pp, s) in p.iter_mut().zip(ss) {
                *pp = s.as_ptr();
            }
            let tables = self.tables::<DOT_MAX>(cs);
            let tbl = tables.as_ptr();
            if bulk > 0 {
                // SAFETY: n >= 1 sources of at least `len` >= `bulk` bytes,
                // shared borrows that cannot overlap the mutable `dst`.
                unsafe { self.dot(dst.as_mut_ptr(), bulk, &p, n, tbl) };
            }
            if tail == 0 {
                continue;
            }
            if len >= w {
                let mut ends = [[0u8; 64]; DOT_MAX];
                for ((e, pp), s) in ends.iter_mut().zip(p.iter_mut()).zip(ss) {
                    *e = masked_end(s.get(..len).unwrap_or(s), w, tail);
                    *pp = e.as_ptr();
                }
                // SAFETY: the window [len − w, len) of `dst`; `ends` holds
                // n vectors of w bytes; see `masked_end`.
                unsafe { self.dot(dst.as_mut_ptr().add(len.wrapping_sub(w)), w, &p, n, tbl) };
            } else if let Some(d) = dst.get_mut(bulk..) {
                for (s, &c) in ss.iter().zip(cs) {
                    if let Some(s) = s.get(bulk..) {
                        tail_bytes(d, s, c);
                    }
                }
            }
        }
    }
}
