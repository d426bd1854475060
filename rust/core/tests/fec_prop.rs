//! Property tests of the FEC coder: MDS recovery over mixes of ordinary and
//! coded-retransmission repairs, Insufficient instead of mis-decoding, no
//! panics on garbage, and the source symbol round trip.

use crem_core::fec::{
    add_to_repair, build_source_symbol, check_decodable, coefficient, decode, encode_over,
    parse_source_symbol, Bitmap, BlockEncoder, BlockSymbols, Code, DecodeScratch, Error, Repair,
    Scheme, SliceSymbols,
};
use crem_core::gf::{self, MulAcc, MulTable, RowPerCall};
use proptest::prelude::*;
use std::sync::OnceLock;

fn table() -> &'static MulTable {
    static T: OnceLock<Box<MulTable>> = OnceLock::new();
    T.get_or_init(|| {
        let rows: Box<[[u8; 256]; 256]> =
            vec![[0u8; 256]; 256].into_boxed_slice().try_into().unwrap();
        // SAFETY: MulTable is repr(transparent) over [[u8; 256]; 256].
        let mut t: Box<MulTable> = unsafe { Box::from_raw(Box::into_raw(rows).cast()) };
        t.init();
        t
    })
}

/// The SIMD backends this CPU has (user space: no FPU section needed).
fn simd_backends() -> Vec<gf::x86::Simd> {
    use gf::x86::{Isa, Simd};
    Isa::ALL
        .into_iter()
        .filter(|&i| i.cpu_has())
        // SAFETY: detected above.
        .map(|i| unsafe { Simd::new_unchecked(i) })
        .collect()
}

/// The encoder's backend for a scenario: the table or one of the SIMD ones,
/// by seed, so the properties below cover every backend's encoder.
fn encoder_backend(seed: u64) -> Box<dyn MulAcc> {
    let simd = simd_backends();
    match (seed % (simd.len() as u64 + 1)) as usize {
        0 => Box::new(table()),
        n => Box::new(simd[n - 1]),
    }
}

/// splitmix64: scenario generation from one proptest seed.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        if n == 0 {
            0
        } else {
            self.next() % n
        }
    }
    fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
    fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.next() as u8).collect()
    }
    fn shuffle<T>(&mut self, v: &mut [T]) {
        for i in (1..v.len()).rev() {
            let j = self.below(i as u64 + 1) as usize;
            v.swap(i, j);
        }
    }
}

struct HeldRepair {
    index: u8,
    lost: Option<Bitmap>,
    data: Vec<u8>,
}

/// What a CRF holds for a block.
struct Held {
    sources: Vec<Option<Vec<u8>>>,
    repairs: Vec<HeldRepair>,
}

impl BlockSymbols for Held {
    fn source(&self, j: u8) -> Option<&[u8]> {
        self.sources.get(j as usize)?.as_deref()
    }
    fn repair_count(&self) -> usize {
        self.repairs.len()
    }
    fn repair(&self, n: usize) -> Option<Repair<'_>> {
        let r = self.repairs.get(n)?;
        Some(Repair {
            index: r.index,
            lost: r.lost.as_ref(),
            data: &r.data,
        })
    }
}

/// Test oracle: subtract known sources, then Gauss-Jordan on the u×u
/// system (O(u³)), straight from the draft's description.
fn oracle_decode(code: &Code, present: &Bitmap, held: &Held) -> Option<Vec<Vec<u8>>> {
    let t = code.t();
    let unknown: Vec<u8> = present
        .iter()
        .filter(|&j| held.source(j).is_none())
        .collect();
    let u = unknown.len();
    let reps: Vec<&HeldRepair> = held.repairs.iter().take(u).collect();
    if reps.len() < u {
        return None;
    }
    // Augmented rows: [A | b], b = R − Σ_known C·S.
    let mut a: Vec<Vec<u8>> = Vec::new();
    let mut b: Vec<Vec<u8>> = Vec::new();
    for r in &reps {
        let l = r.lost.unwrap_or(*present);
        let mut rhs = r.data.clone();
        for j in l.intersection(present).iter() {
            if let Some(s) = held.source(j) {
                let c = code.coefficient(r.index, j).unwrap();
                gf::mul_acc(&mut rhs, s, c);
            }
        }
        a.push(
            unknown
                .iter()
                .map(|&j| code.coefficient(r.index, j).unwrap())
                .collect(),
        );
        b.push(rhs);
    }
    for col in 0..u {
        let piv = (col..u).find(|&r| a[r][col] != 0)?;
        a.swap(col, piv);
        b.swap(col, piv);
        let f = gf::inv(a[col][col]);
        for x in a[col].iter_mut() {
            *x = gf::mul(*x, f);
        }
        let row = b[col].clone();
        let mut scaled = vec![0u8; t];
        gf::mul_acc(&mut scaled, &row, f);
        b[col] = scaled;
        for r in 0..u {
            if r != col && a[r][col] != 0 {
                let g = a[r][col];
                let prow = a[col].clone();
                for (x, p) in a[r].iter_mut().zip(&prow) {
                    *x ^= gf::mul(g, *p);
                }
                let pb = b[col].clone();
                gf::mul_acc(&mut b[r], &pb, g);
            }
        }
    }
    Some(b)
}

#[derive(Debug, Clone)]
struct Outcome {
    unknown: usize,
    usable: usize,
    retx_held: usize,
}

/// One block through the CSF and the CRF: ordinary repairs, random loss,
/// up to two coded-retransmission rounds with late arrivals in between.
fn run_scenario(seed: u64, k: u8, t: usize, scheme: Scheme) -> Outcome {
    let mut rng = Rng(seed);
    let code = Code::new(scheme, k, t).unwrap();
    let enc_backend = encoder_backend(seed >> 32);
    let gfb = &*enc_backend;

    // Present positions (absent ones are never coded).
    let present_pct = if rng.chance(30) {
        100
    } else {
        50 + rng.below(50)
    };
    let present: Bitmap = (0..k).filter(|_| rng.chance(present_pct)).collect();
    let sources: Vec<Vec<u8>> = (0..k as usize)
        .map(|j| {
            if present.contains(j as u8) {
                rng.bytes(t)
            } else {
                Vec::new()
            }
        })
        .collect();

    // Ordinary repairs, streamed in a random source order.
    let max_m = code.index_count() as u64;
    let m = match scheme {
        Scheme::Xor => rng.below(2) as u8,
        _ => rng.below((max_m).min(12) + 1) as u8,
    };
    let mut enc = BlockEncoder::new(code, 0, m).unwrap();
    let mut buf = vec![0u8; enc.buffer_len()];
    let mut order: Vec<u8> = present.iter().collect();
    rng.shuffle(&mut order);
    for &j in &order {
        enc.add_source(gfb, j, &sources[j as usize], &mut buf)
            .unwrap();
    }
    assert_eq!(enc.fed(), present);

    // Loss.
    let loss_pct = rng.below(60);
    let mut held = Held {
        sources: (0..k as usize)
            .map(|j| {
                (present.contains(j as u8) && !rng.chance(loss_pct)).then(|| sources[j].clone())
            })
            .collect(),
        repairs: Vec::new(),
    };
    for (n, chunk) in buf.chunks(t).enumerate() {
        if !rng.chance(loss_pct) {
            held.repairs.push(HeldRepair {
                index: n as u8,
                lost: None,
                data: chunk.to_vec(),
            });
        }
    }
    let mut next_index = m as u16;

    // Coded retransmission rounds (Cauchy only).
    if scheme == Scheme::CauchyRs {
        for _round in 0..2 {
            let lost: Bitmap = present
                .iter()
                .filter(|&j| held.sources[j as usize].is_none())
                .collect();
            let x = lost.len() as i64;
            let r = held.repairs.len() as i64;
            if x <= r || rng.chance(15) {
                break;
            }
            let delta = rng.below(3) as i64 - 1;
            let mut big_m = (x - r + delta).clamp(0, x) as u16;
            big_m = big_m.min(cauchy_left(k, next_index));
            // Sources of L that arrive late, after the request was sent.
            for j in lost.iter() {
                if rng.chance(15) {
                    held.sources[j as usize] = Some(sources[j as usize].clone());
                }
            }
            let first = next_index as u8;
            if big_m > 0 {
                if rng.chance(50) {
                    let mut enc = BlockEncoder::new(code, first, big_m as u8).unwrap();
                    let mut rb = vec![0u8; enc.buffer_len()];
                    for j in lost.iter() {
                        enc.add_source(gfb, j, &sources[j as usize], &mut rb)
                            .unwrap();
                    }
                    assert_eq!(enc.fed(), lost);
                    for (n, chunk) in rb.chunks(t).enumerate() {
                        if !rng.chance(loss_pct / 2) {
                            held.repairs.push(HeldRepair {
                                index: first + n as u8,
                                lost: Some(lost),
                                data: chunk.to_vec(),
                            });
                        }
                    }
                } else {
                    for n in 0..big_m {
                        let i = first + n as u8;
                        let mut out = vec![0u8; t];
                        let l = encode_over(
                            &RowPerCall,
                            &code,
                            i,
                            lost.iter().map(|j| (j, &sources[j as usize][..])),
                            &mut out,
                        )
                        .unwrap();
                        assert_eq!(l, lost);
                        if !rng.chance(loss_pct / 2) {
                            held.repairs.push(HeldRepair {
                                index: i,
                                lost: Some(lost),
                                data: out,
                            });
                        }
                    }
                }
            }
            next_index += big_m;
        }
    }
    // A few more late arrivals after the last request.
    for j in present.iter() {
        if held.sources[j as usize].is_none() && rng.chance(10) {
            held.sources[j as usize] = Some(sources[j as usize].clone());
        }
    }
    rng.shuffle(&mut held.repairs);
    let retx_held = held.repairs.iter().filter(|r| r.lost.is_some()).count();

    let unknown: Bitmap = present
        .iter()
        .filter(|&j| held.sources[j as usize].is_none())
        .collect();
    let u = unknown.len();
    let usable = held.repairs.len();
    let mut scratch = DecodeScratch::new();
    let mut out = vec![0x5Au8; u * t + 3];
    let res = decode(gfb, &code, &present, &held, &mut scratch, &mut out);
    if usable >= u {
        assert_eq!(res, Ok(unknown), "u={u} usable={usable}");
        for (n, j) in unknown.iter().enumerate() {
            assert_eq!(
                &out[n * t..(n + 1) * t],
                &sources[j as usize][..],
                "position {j}"
            );
        }
        assert_eq!(&out[u * t..], &[0x5A; 3], "wrote past u*T");
        let oracle = oracle_decode(&code, &present, &held).expect("oracle singular: not MDS");
        for (n, o) in oracle.iter().enumerate() {
            assert_eq!(&out[n * t..(n + 1) * t], &o[..]);
        }
        // The other backend agrees.
        let mut out2 = vec![0u8; u * t];
        assert_eq!(
            decode(&RowPerCall, &code, &present, &held, &mut scratch, &mut out2),
            Ok(unknown)
        );
        assert_eq!(out2[..], out[..u * t]);
        for b in simd_backends() {
            out2.fill(0);
            assert_eq!(
                decode(&b, &code, &present, &held, &mut scratch, &mut out2),
                Ok(unknown)
            );
            assert_eq!(out2[..], out[..u * t], "{:?}", b.isa());
        }
    } else {
        assert_eq!(
            res,
            Err(Error::Insufficient {
                unknown: u as u8,
                usable: usable as u8
            })
        );
        assert!(out.iter().all(|&b| b == 0x5A), "wrote output on failure");
    }
    Outcome {
        unknown: u,
        usable,
        retx_held,
    }
}

/// The scenarios are not vacuous: they decode multi-loss blocks with RETX
/// repairs and late arrivals, and they hit Insufficient.
#[test]
fn scenario_coverage() {
    let (mut ok_retx, mut ok_multi, mut insufficient) = (0, 0, 0);
    for seed in 0..400u64 {
        let o = run_scenario(
            seed.wrapping_mul(0x1234_5678_9ABC_DEF1),
            1 + (seed % 60) as u8,
            5,
            Scheme::CauchyRs,
        );
        if o.usable >= o.unknown && o.unknown >= 2 {
            ok_multi += 1;
            if o.retx_held > 0 {
                ok_retx += 1;
            }
        }
        if o.usable < o.unknown {
            insufficient += 1;
        }
    }
    eprintln!("coverage: {ok_multi} {ok_retx} {insufficient}");
    assert!(
        ok_multi > 100 && ok_retx > 30 && insufficient > 20,
        "{ok_multi} {ok_retx} {insufficient}"
    );
}

fn cauchy_left(k: u8, next: u16) -> u16 {
    (256 - k as u16).saturating_sub(next)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn mds_small_blocks(seed in any::<u64>(), k in 1u8..=40, t in 2usize..=40) {
        run_scenario(seed, k, t, Scheme::CauchyRs);
    }

    #[test]
    fn mds_packet_sized(seed in any::<u64>(), k in 1u8..=64, t in 60usize..=1100) {
        run_scenario(seed, k, t, Scheme::CauchyRs);
    }

    #[test]
    fn mds_any_k(seed in any::<u64>(), k in 1u8..=255, t in 2usize..=6) {
        run_scenario(seed, k, t, Scheme::CauchyRs);
    }

    #[test]
    fn xor_parity(seed in any::<u64>(), k in 1u8..=64, t in 2usize..=24) {
        let o = run_scenario(seed, k, t, Scheme::Xor);
        prop_assert!(o.usable <= 1);
    }

    #[test]
    fn source_symbol_round_trip(payload in proptest::collection::vec(any::<u8>(), 0..300),
                                extra in 0usize..40, slack in 0usize..4) {
        let t = payload.len() + 2 + extra;
        let mut buf = vec![0xEEu8; t + slack];
        build_source_symbol(&payload, t, &mut buf).unwrap();
        prop_assert_eq!(&buf[t..], &vec![0xEEu8; slack][..]);
        prop_assert_eq!(parse_source_symbol(&buf[..t]).unwrap(), &payload[..]);
        // Too small a T, too small a buffer.
        if t > 2 + payload.len() {
            prop_assert!(build_source_symbol(&payload, t, &mut buf[..t - 1]).is_err());
        }
        prop_assert_eq!(
            build_source_symbol(&payload, payload.len() + 1, &mut buf),
            Err(Error::PayloadTooLong)
        );
        // Any non-zero padding octet is rejected.
        if extra > 0 {
            let mut bad = buf[..t].to_vec();
            let p = 2 + payload.len() + (payload.len() % extra);
            bad[p] = 1;
            prop_assert_eq!(parse_source_symbol(&bad), Err(Error::NonZeroPadding));
        }
    }

    #[test]
    fn payload_feed_equals_symbol_feed(seed in any::<u64>(), k in 1u8..=40, t in 2usize..=40,
                                        m in 0u8..=6) {
        let mut rng = Rng(seed);
        let code = Code::new(Scheme::CauchyRs, k, t).unwrap();
        let mut a = BlockEncoder::new(code, 3, m).unwrap();
        let mut b = a;
        let mut ra = vec![0u8; a.buffer_len()];
        let mut rb = ra.clone();
        for j in 0..k {
            if rng.chance(30) {
                continue;
            }
            let n = rng.below(t as u64 - 1) as usize;
            let p = rng.bytes(n);
            let mut sym = vec![0u8; t];
            build_source_symbol(&p, t, &mut sym).unwrap();
            a.add_source(table(), j, &sym, &mut ra).unwrap();
            b.add_payload(&RowPerCall, j, &p, &mut rb).unwrap();
        }
        prop_assert_eq!(ra, rb);
        prop_assert_eq!(a.fed(), b.fed());
    }

    #[test]
    fn parse_arbitrary_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..80)) {
        // Never panics; whatever parses rebuilds to the same octets.
        if let Ok(p) = parse_source_symbol(&bytes) {
            let mut again = vec![0u8; bytes.len()];
            build_source_symbol(p, bytes.len(), &mut again).unwrap();
            prop_assert_eq!(again, bytes);
        }
    }

    #[test]
    fn garbage_never_panics(seed in any::<u64>(), k in 0u8..=255, t in 0usize..12,
                            nrep in 0usize..12, outlen in 0usize..200) {
        let mut rng = Rng(seed);
        let scheme = Scheme::try_from(rng.below(3) as u8).unwrap();
        let present = Bitmap::from_words(&[rng.next() as u32, rng.next() as u32, rng.next() as u32]);
        let sources: Vec<Option<Vec<u8>>> = (0..256)
            .map(|_| rng.chance(50).then(|| {
                let n = if rng.chance(80) { t } else { rng.below(20) as usize };
                rng.bytes(n)
            }))
            .collect();
        let mut sets = Vec::new();
        for _ in 0..nrep {
            sets.push(Bitmap::from_words(&[rng.next() as u32, rng.next() as u32]));
        }
        let datas: Vec<Vec<u8>> = (0..nrep)
            .map(|_| { let n = if rng.chance(80) { t } else { rng.below(20) as usize }; rng.bytes(n) })
            .collect();
        let repairs: Vec<Repair> = (0..nrep)
            .map(|n| Repair {
                index: if rng.chance(50) { rng.below(8) as u8 } else { rng.next() as u8 },
                lost: rng.chance(50).then_some(&sets[n]),
                data: &datas[n],
            })
            .collect();
        let srcs: Vec<Option<&[u8]>> = sources.iter().map(|s| s.as_deref()).collect();
        let syms = SliceSymbols { sources: &srcs, repairs: &repairs };
        let mut out = vec![0u8; outlen];
        let mut scratch = DecodeScratch::new();
        match Code::new(scheme, k, t) {
            Err(e) => prop_assert_eq!(e, Error::InvalidParameters),
            Ok(code) => {
                let chk = check_decodable(&code, &present, &syms);
                let res = decode(table(), &code, &present, &syms, &mut scratch, &mut out);
                match (chk, res) {
                    (Ok(u), Ok(v)) => {
                        prop_assert_eq!(u, v);
                        prop_assert!(u.len() * t <= outlen);
                    }
                    (Ok(_), Err(e)) => prop_assert_eq!(e, Error::BufferTooSmall),
                    (Err(e1), Err(e2)) => prop_assert_eq!(e1, e2),
                    (Err(_), Ok(_)) => prop_assert!(false, "decode succeeded where check failed"),
                }
                // Encoders on the same garbage.
                let i = rng.next() as u8;
                let j = rng.next() as u8;
                let mut r = vec![0u8; t];
                let _ = encode_over(table(), &code, i,
                    srcs.iter().enumerate().filter_map(|(j, s)| s.map(|s| (j as u8, s))), &mut r);
                if let Ok(mut enc) = BlockEncoder::new(code, i, rng.below(4) as u8) {
                    let mut b = vec![0u8; rng.below(3 * t as u64 + 2) as usize];
                    let _ = enc.add_source(table(), j, &datas.first().cloned().unwrap_or_default(), &mut b);
                    let n = rng.below(2 * t as u64 + 2) as usize;
                    let p = rng.bytes(n);
                    let _ = enc.add_payload(table(), j.wrapping_add(1), &p, &mut b);
                    let _ = add_to_repair(table(), &code, i, j, &p, &mut b);
                }
            }
        }
    }
}

fn block(k: u8, t: usize, seed: u64) -> (Code, Vec<Vec<u8>>) {
    let mut rng = Rng(seed);
    (
        Code::new(Scheme::CauchyRs, k, t).unwrap(),
        (0..k).map(|_| rng.bytes(t)).collect(),
    )
}

fn repair(code: &Code, srcs: &[Vec<u8>], i: u8, l: &Bitmap) -> Vec<u8> {
    let mut out = vec![0u8; code.t()];
    encode_over(
        &RowPerCall,
        code,
        i,
        l.iter().map(|j| (j, &srcs[j as usize][..])),
        &mut out,
    )
    .unwrap();
    out
}

#[test]
fn error_cases() {
    let (code, s) = block(8, 8, 1);
    let present = Bitmap::first(8);
    let lost: Bitmap = [1u8, 2].into_iter().collect();
    let mut held: Vec<Option<&[u8]>> = s.iter().map(|x| Some(&x[..])).collect();
    held[1] = None;
    held[2] = None;
    let r0 = repair(&code, &s, 0, &present);
    let r1 = repair(&code, &s, 1, &present);
    let r5l = repair(&code, &s, 5, &lost);
    let only2: Bitmap = [2u8].into_iter().collect();
    let mut scratch = DecodeScratch::new();
    let mut out = vec![0u8; 16];
    let dec = |reps: &[Repair],
               present: &Bitmap,
               held: &[Option<&[u8]>],
               out: &mut [u8],
               scratch: &mut DecodeScratch| {
        decode(
            table(),
            &code,
            present,
            &SliceSymbols {
                sources: held,
                repairs: reps,
            },
            scratch,
            out,
        )
    };

    // Success with one ordinary and one RETX repair.
    let ok = [
        Repair {
            index: 0,
            lost: None,
            data: &r0,
        },
        Repair {
            index: 5,
            lost: Some(&lost),
            data: &r5l,
        },
    ];
    assert_eq!(dec(&ok, &present, &held, &mut out, &mut scratch), Ok(lost));
    assert_eq!(out[..8], s[1][..]);
    assert_eq!(out[8..], s[2][..]);
    // Output too small.
    assert_eq!(
        dec(&ok, &present, &held, &mut out[..15], &mut scratch),
        Err(Error::BufferTooSmall)
    );
    // Duplicate index.
    let dup = [
        Repair {
            index: 0,
            lost: None,
            data: &r0,
        },
        Repair {
            index: 0,
            lost: None,
            data: &r1,
        },
    ];
    assert_eq!(
        dec(&dup, &present, &held, &mut out, &mut scratch),
        Err(Error::DuplicateRepair)
    );
    // L missing an unknown.
    let miss = [
        Repair {
            index: 0,
            lost: None,
            data: &r0,
        },
        Repair {
            index: 5,
            lost: Some(&only2),
            data: &r5l,
        },
    ];
    assert_eq!(
        dec(&miss, &present, &held, &mut out, &mut scratch),
        Err(Error::SetMissesUnknown)
    );
    // i + k > 255.
    let bad_i = [Repair {
        index: 248,
        lost: None,
        data: &r0,
    }];
    assert_eq!(
        dec(&bad_i, &present, &held, &mut out, &mut scratch),
        Err(Error::InvalidRepairIndex)
    );
    // Wrong lengths.
    let short = [Repair {
        index: 0,
        lost: None,
        data: &r0[..7],
    }];
    assert_eq!(
        dec(&short, &present, &held, &mut out, &mut scratch),
        Err(Error::LengthMismatch)
    );
    let mut held_bad = held.clone();
    held_bad[0] = Some(&s[0][..3]);
    assert_eq!(
        dec(&ok, &present, &held_bad, &mut out, &mut scratch),
        Err(Error::LengthMismatch)
    );
    // Present beyond k, L beyond k.
    assert_eq!(
        dec(&ok, &Bitmap::first(9), &held, &mut out, &mut scratch),
        Err(Error::InvalidPosition)
    );
    let wide = Bitmap::first(20);
    let wide_l = [Repair {
        index: 0,
        lost: Some(&wide),
        data: &r0,
    }];
    assert_eq!(
        dec(&wide_l, &present, &held, &mut out, &mut scratch),
        Err(Error::InvalidPosition)
    );
    // Insufficient.
    assert_eq!(
        dec(&ok[..1], &present, &held, &mut out, &mut scratch),
        Err(Error::Insufficient {
            unknown: 2,
            usable: 1
        })
    );
    // Nothing unknown: nothing to do, nothing written.
    let all: Vec<Option<&[u8]>> = s.iter().map(|x| Some(&x[..])).collect();
    let mut empty: [u8; 0] = [];
    assert_eq!(
        dec(&[], &present, &all, &mut empty, &mut scratch),
        Ok(Bitmap::EMPTY)
    );
    // Absent positions are neither coded nor expected.
    let partial: Bitmap = [0u8, 3, 4, 7].into_iter().collect();
    let rp = repair(&code, &s, 3, &partial);
    let mut held_p: Vec<Option<&[u8]>> = vec![None; 8];
    for j in [0usize, 4, 7] {
        held_p[j] = Some(&s[j]);
    }
    let reps = [Repair {
        index: 3,
        lost: None,
        data: &rp,
    }];
    assert_eq!(
        dec(&reps, &partial, &held_p, &mut out, &mut scratch),
        Ok([3u8].into_iter().collect())
    );
    assert_eq!(out[..8], s[3][..]);
}

#[test]
fn encoder_errors() {
    let code = Code::new(Scheme::CauchyRs, 250, 4).unwrap();
    assert!(BlockEncoder::new(code, 0, 6).is_ok());
    assert_eq!(
        BlockEncoder::new(code, 0, 7),
        Err(Error::InvalidRepairIndex)
    );
    assert_eq!(
        BlockEncoder::new(code, 255, 1),
        Err(Error::InvalidRepairIndex)
    );
    let xor = Code::new(Scheme::Xor, 10, 4).unwrap();
    assert!(BlockEncoder::new(xor, 0, 1).is_ok());
    assert_eq!(BlockEncoder::new(xor, 0, 2), Err(Error::InvalidRepairIndex));
    let mut enc = BlockEncoder::new(code, 0, 2).unwrap();
    let mut buf = vec![0u8; 8];
    assert_eq!(
        enc.add_source(table(), 250, &[0; 4], &mut buf),
        Err(Error::InvalidPosition)
    );
    assert_eq!(
        enc.add_source(table(), 0, &[0; 5], &mut buf),
        Err(Error::LengthMismatch)
    );
    assert_eq!(
        enc.add_source(table(), 0, &[0; 4], &mut buf[..7]),
        Err(Error::LengthMismatch)
    );
    assert_eq!(enc.add_source(table(), 0, &[1; 4], &mut buf), Ok(()));
    assert_eq!(
        enc.add_source(table(), 0, &[1; 4], &mut buf),
        Err(Error::DuplicateSource)
    );
    assert_eq!(buf[..4], [coefficient(0, 0).unwrap(); 4]);
    enc.reset();
    assert_eq!(enc.fed(), Bitmap::EMPTY);
    assert_eq!(
        Code::new(Scheme::CauchyRs, 0, 4),
        Err(Error::InvalidParameters)
    );
    assert_eq!(
        Code::new(Scheme::CauchyRs, 1, 1),
        Err(Error::InvalidParameters)
    );
    assert_eq!(
        Code::new(Scheme::CauchyRs, 1, 65536),
        Err(Error::InvalidParameters)
    );
    assert!(Code::new(Scheme::CauchyRs, 255, 65535).is_ok());
    let mut out = [0u8; 4];
    assert_eq!(
        encode_over(
            table(),
            &code,
            0,
            [(1u8, &[0u8; 4][..]), (1, &[0; 4][..])],
            &mut out
        ),
        Err(Error::DuplicateSource)
    );
    assert_eq!(
        encode_over(table(), &code, 6, [], &mut out),
        Err(Error::InvalidRepairIndex)
    );
}

#[test]
fn source_copy_scheme() {
    let code = Code::new(Scheme::SourceCopy, 4, 4).unwrap();
    let s: Vec<Vec<u8>> = (0..4u8).map(|j| vec![j + 1; 4]).collect();
    let mut enc = BlockEncoder::new(code, 1, 2).unwrap();
    let mut buf = vec![0u8; 8];
    for j in 0..4u8 {
        enc.add_source(table(), j, &s[j as usize], &mut buf)
            .unwrap();
    }
    assert_eq!(buf, [s[1].clone(), s[2].clone()].concat());
    let present = Bitmap::first(4);
    let held = [Some(&s[0][..]), None, None, Some(&s[3][..])];
    let reps = [
        Repair {
            index: 2,
            lost: None,
            data: &s[2],
        },
        Repair {
            index: 1,
            lost: None,
            data: &s[1],
        },
    ];
    let mut out = [0u8; 8];
    let got = decode(
        table(),
        &code,
        &present,
        &SliceSymbols {
            sources: &held,
            repairs: &reps,
        },
        &mut DecodeScratch::new(),
        &mut out,
    );
    assert_eq!(got, Ok([1u8, 2].into_iter().collect()));
    assert_eq!(out[..], [s[1].clone(), s[2].clone()].concat()[..]);
    let reps = [
        Repair {
            index: 3,
            lost: None,
            data: &s[3],
        },
        Repair {
            index: 1,
            lost: None,
            data: &s[1],
        },
    ];
    let got = decode(
        table(),
        &code,
        &present,
        &SliceSymbols {
            sources: &held,
            repairs: &reps,
        },
        &mut DecodeScratch::new(),
        &mut out,
    );
    assert_eq!(
        got,
        Err(Error::Insufficient {
            unknown: 2,
            usable: 1
        })
    );
}

/// Largest possible system: u unknowns need u distinct indices i <= 255 - k
/// and u <= k, so u <= 128; here k = 128, every source lost, repairs 0..=127.
#[test]
fn large_u() {
    let k = 128u8;
    let t = 3;
    let (code, s) = block(k, t, 7);
    let present = Bitmap::first(k as usize);
    let data: Vec<Vec<u8>> = (0..k).map(|i| repair(&code, &s, i, &present)).collect();
    let reps: Vec<Repair> = (0..k)
        .map(|i| Repair {
            index: i,
            lost: None,
            data: &data[i as usize],
        })
        .collect();
    let held: Vec<Option<&[u8]>> = vec![None; k as usize];
    let mut out = vec![0u8; k as usize * t];
    let got = decode(
        table(),
        &code,
        &present,
        &SliceSymbols {
            sources: &held,
            repairs: &reps,
        },
        &mut DecodeScratch::new(),
        &mut out,
    )
    .unwrap();
    assert_eq!(got, present);
    assert_eq!(out, s.concat());
}
