//! The FEC decoder on symbol sets derived from the fuzz input.
//!
//! The input drives a whole block: parameters, source contents, present
//! positions, loss of sources and repairs, coded retransmissions over the
//! lost set, late arrivals, repair order and duplicates. In "consistent"
//! mode every symbol is a true encoding of the sources, so a reported
//! success must reproduce the sources exactly and Insufficient must mean
//! too few repairs. In "garbage" mode indices, sets and lengths are
//! corrupted too, and the only requirement is not to panic.
#![no_main]

use crem_core::fec::{
    check_decodable, decode, encode_over, Bitmap, BlockEncoder, Code, DecodeScratch, Error, Repair,
    Scheme, SliceSymbols,
};
use crem_core::gf::RowPerCall;
use libfuzzer_sys::fuzz_target;

struct Input<'a>(&'a [u8], usize);
impl Input<'_> {
    fn byte(&mut self) -> u8 {
        let b = if self.0.is_empty() {
            0
        } else {
            self.0[self.1 % self.0.len()]
        };
        self.1 += 1;
        // Mix the position in so short inputs still vary.
        b ^ (self.1 as u8).wrapping_mul(0x9D)
    }
    fn chance(&mut self, per256: u8) -> bool {
        self.byte() < per256
    }
}

struct Rep {
    index: u8,
    lost: Option<Bitmap>,
    data: Vec<u8>,
}

fuzz_target!(|data: &[u8]| {
    let mut inp = Input(data, 0);
    let garbage = inp.chance(48);
    let scheme = match inp.byte() % 8 {
        0 => Scheme::Xor,
        1 => Scheme::SourceCopy,
        _ => Scheme::CauchyRs,
    };
    let k = 1 + inp.byte() % if inp.chance(32) { 255 } else { 48 };
    let t = 2 + (inp.byte() % 24) as usize;
    let Ok(code) = Code::new(scheme, k, t) else {
        return;
    };

    let present: Bitmap = (0..k).filter(|_| !inp.chance(40)).collect();
    let sources: Vec<Vec<u8>> = (0..k)
        .map(|_| (0..t).map(|_| inp.byte()).collect())
        .collect();

    // Ordinary repairs.
    let m = (inp.byte() as u16 % (code.index_count().min(10) + 1)) as u8;
    let mut enc = BlockEncoder::new(code, 0, m).unwrap();
    let mut buf = vec![0u8; enc.buffer_len()];
    for j in present.iter() {
        enc.add_source(&RowPerCall, j, &sources[j as usize], &mut buf)
            .unwrap();
    }
    let loss = inp.byte() / 2;
    let mut held: Vec<Option<Vec<u8>>> = (0..k as usize)
        .map(|j| (present.contains(j as u8) && !inp.chance(loss)).then(|| sources[j].clone()))
        .collect();
    let mut reps: Vec<Rep> = Vec::new();
    for (n, d) in buf.chunks(t).enumerate() {
        if !inp.chance(loss) {
            reps.push(Rep {
                index: n as u8,
                lost: None,
                data: d.to_vec(),
            });
        }
    }

    // Up to two coded-retransmission rounds over the lost set.
    let mut next = m as u16;
    if scheme == Scheme::CauchyRs {
        for _ in 0..2 {
            let lost: Bitmap = present
                .iter()
                .filter(|&j| held[j as usize].is_none())
                .collect();
            let want =
                (lost.len() as u16).saturating_sub(reps.len() as u16) + (inp.byte() % 2) as u16;
            let mm = want
                .min(lost.len() as u16)
                .min(code.index_count().saturating_sub(next));
            for j in lost.iter() {
                if inp.chance(30) {
                    held[j as usize] = Some(sources[j as usize].clone());
                }
            }
            for n in 0..mm {
                let i = (next + n) as u8;
                let mut out = vec![0u8; t];
                encode_over(
                    &RowPerCall,
                    &code,
                    i,
                    lost.iter().map(|j| (j, &sources[j as usize][..])),
                    &mut out,
                )
                .unwrap();
                if !inp.chance(loss / 2) {
                    reps.push(Rep {
                        index: i,
                        lost: Some(lost),
                        data: out,
                    });
                }
            }
            next += mm;
        }
    }

    // Order and duplicates.
    let nrep = reps.len();
    for n in 0..nrep {
        let a = inp.byte() as usize % nrep;
        reps.swap(n, a);
    }
    if nrep > 0 && inp.chance(20) {
        let d = inp.byte() as usize % nrep;
        reps.push(Rep {
            index: reps[d].index,
            lost: reps[d].lost,
            data: reps[d].data.clone(),
        });
    }
    if garbage {
        for r in reps.iter_mut() {
            if inp.chance(40) {
                r.index = inp.byte();
            }
            if inp.chance(40) {
                r.lost = Some(Bitmap::from_words(&[
                    u32::from_be_bytes([inp.byte(), inp.byte(), inp.byte(), inp.byte()]),
                    u32::from_be_bytes([inp.byte(), inp.byte(), inp.byte(), inp.byte()]),
                ]));
            }
            if inp.chance(20) {
                r.data.truncate(inp.byte() as usize % (t + 1));
            }
            if inp.chance(20) {
                r.data.push(inp.byte());
            }
        }
        for h in held.iter_mut() {
            if inp.chance(10) {
                *h = Some((0..inp.byte() % 30).map(|_| inp.byte()).collect());
            }
        }
    }

    let unknown: Bitmap = present
        .iter()
        .filter(|&j| held[j as usize].is_none())
        .collect();
    let u = unknown.len();
    let srcs: Vec<Option<&[u8]>> = held.iter().map(|h| h.as_deref()).collect();
    let repairs: Vec<Repair> = reps
        .iter()
        .map(|r| Repair {
            index: r.index,
            lost: r.lost.as_ref(),
            data: &r.data,
        })
        .collect();
    let syms = SliceSymbols {
        sources: &srcs,
        repairs: &repairs,
    };
    let outlen = if garbage {
        inp.byte() as usize * t / 16
    } else {
        u * t
    };
    let mut out = vec![0u8; outlen];
    let mut scratch = DecodeScratch::new();
    let checked = check_decodable(&code, &present, &syms);
    let res = decode(&RowPerCall, &code, &present, &syms, &mut scratch, &mut out);
    match (&checked, &res) {
        (Ok(a), Ok(b)) => assert_eq!(a, b),
        (Ok(_), Err(e)) => assert_eq!(*e, Error::BufferTooSmall),
        (Err(a), Err(b)) => assert_eq!(a, b),
        (Err(_), Ok(_)) => panic!("decode succeeded where check_decodable failed"),
    }
    if garbage {
        return;
    }
    match res {
        Ok(got) => {
            assert_eq!(got, unknown);
            for (n, j) in unknown.iter().enumerate() {
                assert_eq!(
                    &out[n * t..(n + 1) * t],
                    &sources[j as usize][..],
                    "wrong symbol at {j}"
                );
            }
        }
        Err(Error::Insufficient {
            unknown: eu,
            usable,
        }) => {
            assert_eq!(eu as usize, u);
            assert!((usable as usize) < u);
            let distinct: Bitmap = reps.iter().map(|r| r.index).collect();
            if scheme != Scheme::SourceCopy && distinct.len() == reps.len() {
                assert_eq!(usable as usize, reps.len());
            }
        }
        Err(Error::DuplicateRepair) => assert!(reps.len() > nrep),
        Err(e) => panic!("consistent input rejected: {e:?}"),
    }
});
