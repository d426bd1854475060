//! The draft's "Coding Example" appendix, byte for byte.

use crem_core::fec::{
    build_source_symbol, coefficient, decode, encode_over, parse_source_symbol, Bitmap,
    BlockEncoder, Code, DecodeScratch, Error, Repair, Scheme, SliceSymbols,
};
use crem_core::gf::{self, MulTable, RowPerCall};

fn hex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

fn table() -> Box<MulTable> {
    let rows: Box<[[u8; 256]; 256]> = vec![[0u8; 256]; 256].into_boxed_slice().try_into().unwrap();
    // SAFETY: MulTable is repr(transparent) over [[u8; 256]; 256].
    let mut t: Box<MulTable> = unsafe { Box::from_raw(Box::into_raw(rows).cast()) };
    t.init();
    t
}

const T: usize = 16;

fn sources() -> Vec<Vec<u8>> {
    (0..4)
        .map(|j| {
            let mut s = vec![0u8; T];
            build_source_symbol(format!("RDMA-PKT-{j}").as_bytes(), T, &mut s).unwrap();
            s
        })
        .collect()
}

#[test]
fn coefficient_table() {
    let want = [
        [0xfd, 0x7e, 0xff, 0x7f],
        [0x7e, 0xfd, 0x7f, 0xff],
        [0xff, 0x7f, 0xfd, 0x7e],
    ];
    for (i, row) in want.iter().enumerate() {
        for (j, &c) in row.iter().enumerate() {
            assert_eq!(coefficient(i as u8, j as u8), Some(c), "C({i},{j})");
        }
    }
}

#[test]
fn source_symbols() {
    let s = sources();
    for (j, sym) in s.iter().enumerate() {
        assert_eq!(*sym, hex(&format!("000a52444d412d504b542d3{j}00000000")));
        assert_eq!(
            parse_source_symbol(sym).unwrap(),
            format!("RDMA-PKT-{j}").as_bytes()
        );
    }
}

const R0: &str = "001ef6ccd7c377f0ddfc774c00000000";
const R1: &str = "001ef6ccd7c377f0ddfc774f00000000";
const R2L: &str = "00354fdf6d4b40b57e5c400000000000";

#[test]
fn ordinary_repairs_streaming() {
    let s = sources();
    let code = Code::new(Scheme::CauchyRs, 4, T).unwrap();
    let t = table();
    let mut enc = BlockEncoder::new(code, 0, 2).unwrap();
    let mut buf = vec![0u8; enc.buffer_len()];
    // Sources in arbitrary arrival order: the sum does not care.
    for j in [2u8, 0, 3, 1] {
        enc.add_source(&*t, j, &s[j as usize], &mut buf).unwrap();
    }
    assert_eq!(enc.fed(), Bitmap::from_words(&[0xF000_0000]));
    assert_eq!(&buf[..T], &hex(R0)[..]);
    assert_eq!(&buf[T..], &hex(R1)[..]);
    assert_eq!(
        enc.add_source(&*t, 1, &s[1], &mut buf),
        Err(Error::DuplicateSource)
    );
}

#[test]
fn ordinary_repairs_from_payloads() {
    let code = Code::new(Scheme::CauchyRs, 4, T).unwrap();
    let mut enc = BlockEncoder::new(code, 0, 2).unwrap();
    let mut buf = vec![0u8; enc.buffer_len()];
    for j in [3u8, 1, 0, 2] {
        let p = format!("RDMA-PKT-{j}");
        enc.add_payload(&RowPerCall, j, p.as_bytes(), &mut buf)
            .unwrap();
    }
    assert_eq!(&buf[..T], &hex(R0)[..]);
    assert_eq!(&buf[T..], &hex(R1)[..]);
    assert_eq!(
        enc.add_payload(&RowPerCall, 1, b"x", &mut buf),
        Err(Error::DuplicateSource)
    );
    let mut enc = BlockEncoder::new(code, 0, 2).unwrap();
    assert_eq!(
        enc.add_payload(&RowPerCall, 0, &[0u8; T - 1], &mut buf),
        Err(Error::PayloadTooLong)
    );
    assert_eq!(
        enc.add_payload(&RowPerCall, 0, &[0u8; T - 2], &mut buf),
        Ok(())
    );
    assert_eq!(
        enc.add_payload(&RowPerCall, 1, &[], &mut buf[1..]),
        Err(Error::LengthMismatch)
    );
}

#[test]
fn coded_retransmission_symbol() {
    let s = sources();
    let code = Code::new(Scheme::CauchyRs, 4, T).unwrap();
    let mut out = [0u8; T];
    let l = encode_over(
        &RowPerCall,
        &code,
        2,
        (0..3u8).map(|j| (j, &s[j as usize][..])),
        &mut out,
    )
    .unwrap();
    assert_eq!(out[..], hex(R2L)[..]);
    assert_eq!(l, Bitmap::from_words(&[0xE000_0000]));
    // Same symbol from the streaming encoder fed with L only.
    let t = table();
    let mut enc = BlockEncoder::new(code, 2, 1).unwrap();
    let mut buf = [0u8; T];
    for j in 0..3u8 {
        enc.add_source(&*t, j, &s[j as usize], &mut buf).unwrap();
    }
    assert_eq!(buf[..], hex(R2L)[..]);
    assert_eq!(enc.fed(), l);
}

#[test]
fn recovery_from_s3_r0_r1_r2l() {
    let s = sources();
    let code = Code::new(Scheme::CauchyRs, 4, T).unwrap();
    let present = Bitmap::from_words(&[0xF000_0000]);
    let lost = Bitmap::from_words(&[0xE000_0000]);
    let (r0, r1, r2) = (hex(R0), hex(R1), hex(R2L));
    let held: [Option<&[u8]>; 4] = [None, None, None, Some(&s[3])];
    let repairs = [
        Repair {
            index: 0,
            lost: None,
            data: &r0,
        },
        Repair {
            index: 1,
            lost: None,
            data: &r1,
        },
        Repair {
            index: 2,
            lost: Some(&lost),
            data: &r2,
        },
    ];
    let syms = SliceSymbols {
        sources: &held,
        repairs: &repairs,
    };
    let mut scratch = DecodeScratch::new();
    let mut out = vec![0u8; 3 * T];
    for backend in [&RowPerCall as &dyn gf::MulAcc, &*table()] {
        out.fill(0xAA);
        let got = decode(backend, &code, &present, &syms, &mut scratch, &mut out).unwrap();
        assert_eq!(got, lost);
        for (n, chunk) in out.chunks(T).enumerate() {
            assert_eq!(chunk, &s[n][..]);
            assert_eq!(
                parse_source_symbol(chunk).unwrap(),
                format!("RDMA-PKT-{n}").as_bytes()
            );
        }
    }
    // Without the retransmission: 3 unknown, 2 repairs.
    let syms2 = SliceSymbols {
        sources: &held,
        repairs: &repairs[..2],
    };
    assert_eq!(
        decode(&RowPerCall, &code, &present, &syms2, &mut scratch, &mut out),
        Err(Error::Insufficient {
            unknown: 3,
            usable: 2
        })
    );
}
