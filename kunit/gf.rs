// SPDX-License-Identifier: GPL-2.0
//! GF(2^8) tables as the module builds them: in kernel memory, at run time.

use super::run;
use crate::crem_core::gf::{self, MulAcc, MulTable};
use core::ffi::{c_char, c_int};

use kernel::prelude::*;

/// Allocates and builds the 64 KiB product table the way the datapath will.
fn build_table() -> Result<KBox<MulTable>> {
    let mut t = KBox::<MulTable>::new_uninit(GFP_KERNEL)?;
    // SAFETY: MulTable is plain bytes, valid for any content; zero it first so
    // it is initialised before `init` overwrites every entry.
    let t = unsafe {
        core::ptr::write_bytes(t.as_mut_ptr(), 0, 1);
        t.assume_init()
    };
    let mut t = t;
    t.init();
    Ok(t)
}

/// Every entry equals the definition: carry-less product reduced mod 0x11D.
#[no_mangle]
extern "C" fn crem_kunit_gf_tables_match_definition(msg: *mut c_char, len: usize) -> c_int {
    run(msg, len, |w| {
        let Ok(t) = build_table() else {
            let _ = write!(w, "allocation failed");
            return false;
        };
        for a in 0..=255u8 {
            for b in 0..=255u8 {
                let (got, want) = (t.mul(a, b), gf::mul_bitwise(a, b));
                if got != want {
                    let _ = write!(w, "{a:#04x}*{b:#04x}: table {got:#04x}, definition {want:#04x}");
                    return false;
                }
            }
        }
        true
    })
}

/// The table-driven multiply-accumulate equals byte-wise definition products.
#[no_mangle]
extern "C" fn crem_kunit_gf_tables_mul_acc(msg: *mut c_char, len: usize) -> c_int {
    run(msg, len, |w| {
        let Ok(t) = build_table() else {
            let _ = write!(w, "allocation failed");
            return false;
        };
        let mut src = [0u8; 1027]; // odd length: exercises the tail handling
        for (i, s) in src.iter_mut().enumerate() {
            *s = (i * 7 + 3) as u8;
        }
        for c in [0u8, 1, 2, 0x1d, 0x8e, 0xff] {
            let mut dst = [0x5au8; 1027];
            t.mul_acc(&mut dst, &src, c);
            for (i, (&d, &s)) in dst.iter().zip(src.iter()).enumerate() {
                if d != 0x5a ^ gf::mul_bitwise(c, s) {
                    let _ = write!(w, "c={c:#04x} byte {i}: {d:#04x}");
                    return false;
                }
            }
        }
        true
    })
}

