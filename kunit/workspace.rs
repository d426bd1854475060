// SPDX-License-Identifier: GPL-2.0
//! The per-CPU decode workspace the datapath decodes in.
//!
//! Its scratch area is crem-core's `DecodeScratch`, whose size changes with
//! crem-core: when C sized it by a constant, a larger scratch made every
//! `workspace()` call fail and the CRF ignore all messages (HELLOs unanswered)
//! with nothing in the tests below the wire noticing. Now Rust allocates it
//! (`rust/workspace.rs`) and lends it to one user at a time.

use super::run;
use crate::crem_core::fec::{build_source_symbol, decode, Bitmap, BlockEncoder, Code, Repair};
use crate::crem_core::fec::{Scheme, SliceSymbols};
use crate::gf::Coder;
use crate::kernel_ext::bh;
use core::ffi::{c_char, c_int};

const K: usize = 8;
const M: usize = 4;
const T: usize = 64;

/// This CPU's workspace exists, and a decode of the most outputs the decoder
/// computes at once (four lost sources of eight) runs in it and is right.
#[no_mangle]
extern "C" fn crem_kunit_workspace_decodes(msg: *mut c_char, len: usize) -> c_int {
    run(msg, len, |w| {
        let mut src = [[0u8; T]; K];
        for (j, sym) in src.iter_mut().enumerate() {
            let payload = [j as u8 ^ 0x5a; 40];
            if build_source_symbol(&payload[..20 + j], T, sym).is_err() {
                let _ = write!(w, "source symbol {j}");
                return false;
            }
        }
        let Ok(code) = Code::new(Scheme::CauchyRs, K as u8, T) else {
            let _ = write!(w, "code");
            return false;
        };
        let gf = Coder::chosen();
        let mut rep = [0u8; M * T];
        let Ok(mut enc) = BlockEncoder::new(code, 0, M as u8) else {
            let _ = write!(w, "encoder");
            return false;
        };
        for (j, sym) in src.iter().enumerate() {
            if enc.add_source(&gf, j as u8, sym, &mut rep).is_err() {
                let _ = write!(w, "add_source {j}");
                return false;
            }
        }
        // Sources 1, 3, 4 and 6 are lost; the four repairs stand in for them.
        let lost = [1usize, 3, 4, 6];
        let mut held: [Option<&[u8]>; K] = [None; K];
        for (j, h) in held.iter_mut().enumerate() {
            if !lost.contains(&j) {
                *h = Some(&src[j]);
            }
        }
        let repairs: [Repair<'_>; M] = core::array::from_fn(|i| Repair {
            index: i as u8,
            lost: None,
            data: &rep[i * T..(i + 1) * T],
        });
        let syms = SliceSymbols {
            sources: &held,
            repairs: &repairs,
        };
        let present = Bitmap::from_words(&[0xFF00_0000]);
        let bh = bh::disable();
        let r = crate::workspace::with(&bh, |ws| {
            let got = match decode(&gf, &code, &present, &syms, &mut ws.scratch, &mut ws.out) {
                Ok(b) => b,
                Err(e) => {
                    let _ = write!(w, "decode: {e:?}");
                    return false;
                }
            };
            for (n, &j) in lost.iter().enumerate() {
                if !got.contains(j as u8) {
                    let _ = write!(w, "source {j} not recovered");
                    return false;
                }
                if ws.out.get(n * T..(n + 1) * T) != Some(&src[j][..]) {
                    let _ = write!(w, "source {j} recovered wrong");
                    return false;
                }
            }
            true
        });
        r.unwrap_or_else(|| {
            let _ = write!(
                w,
                "no workspace on this CPU: the datapath would drop every message"
            );
            false
        })
    })
}

/// A CPU's workspace is lent to one user at a time: a second `with` on the
/// same CPU while the first runs gets none (two `&mut` to one buffer would
/// be undefined behaviour), and the workspace is free again afterwards.
#[no_mangle]
extern "C" fn crem_kunit_workspace_one_user(msg: *mut c_char, len: usize) -> c_int {
    run(msg, len, |w| {
        let bh = bh::disable();
        let nested = crate::workspace::with(&bh, |ws| {
            ws.msg[0] = 0xa5;
            crate::workspace::with(&bh, |_| ()).is_some()
        });
        let again = crate::workspace::with(&bh, |ws| ws.msg[0]);
        match (nested, again) {
            (Some(false), Some(0xa5)) => true,
            _ => {
                let _ = write!(
                    w,
                    "outer {:?} (Some(false): the nested use refused), afterwards {:?} (Some(0xa5))",
                    nested, again
                );
                false
            }
        }
    })
}
