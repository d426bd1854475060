//! Property tests for the CREM wire codecs: for every message type,
//! decode(encode(m)) == m and encode(decode(x)) == x for canonical x, mutated
//! messages either fail cleanly or re-encode to a fixed point, and arbitrary
//! bytes never panic.

use crem_core::psn::{Psn, PsnRange};
use crem_core::wire::{
    self, AddressFamily, Bitmap256, BlockRequest, Close, CloseReason, DroppedPsns, FecScheme,
    FlowAddrs, Hello, HelloAck, HopEntries, HopEntry, LossCause, LossReport, LostRanges, Message,
    Method, ParamAck, ParamStatus, ParamUpdate, PathReport, RangeRequest, Repair, RepairRequest,
    RequestKind, Segment, TcAeth, TcAethReport,
};
use proptest::prelude::*;

/// Encodes `m`, checks the size bookkeeping, and that decoding gives `m` back
/// and re-encoding gives the same octets.
fn roundtrip(m: &Message<'_>) -> Result<Vec<u8>, TestCaseError> {
    let len = m.encoded_len();
    let mut buf = vec![0u8; len + 7];
    let n = m
        .encode(&mut buf)
        .map_err(|e| TestCaseError::fail(format!("encode {e:?} for {m:?}")))?;
    prop_assert_eq!(n, len);
    buf.truncate(n);
    // Too small a buffer is reported with the size needed.
    let mut small = vec![0u8; n - 1];
    prop_assert_eq!(
        m.encode(&mut small),
        Err(wire::Error::BufferTooSmall { needed: n })
    );
    let d =
        wire::decode(&buf).map_err(|e| TestCaseError::fail(format!("decode {e:?} for {m:?}")))?;
    prop_assert_eq!(&d, m);
    let mut again = vec![0u8; n];
    prop_assert_eq!(d.encode(&mut again), Ok(n));
    prop_assert_eq!(&again, &buf);
    // Trailing octets after Length are not part of the message.
    let mut padded = buf.clone();
    padded.extend_from_slice(&[0xAA; 5]);
    prop_assert_eq!(wire::decode(&padded), Ok(d));
    // Every strict prefix is rejected.
    for cut in 0..n {
        prop_assert!(wire::decode(&buf[..cut]).is_err());
    }
    Ok(buf)
}

/// Decoding a mutated message never panics; when it succeeds, encoding the
/// result and decoding again is a fixed point.
fn mutated_is_stable(buf: &[u8], idx: usize, val: u8) -> Result<(), TestCaseError> {
    let mut b = buf.to_vec();
    let i = idx % b.len();
    b[i] = val;
    if let Ok(m) = wire::decode(&b) {
        let mut out = vec![0u8; m.encoded_len()];
        let n = m
            .encode(&mut out)
            .map_err(|e| TestCaseError::fail(format!("re-encode {e:?}")))?;
        prop_assert_eq!(wire::decode(&out[..n]), Ok(m));
    }
    Ok(())
}

fn bitmap_within(k: u8) -> impl Strategy<Value = Bitmap256> {
    (prop::array::uniform8(any::<u32>()), any::<u8>()).prop_map(move |(w, extra)| {
        let mut b = Bitmap256::from_words(w);
        b.truncate(k as usize);
        b.set(extra as usize % k as usize);
        b
    })
}

fn scheme() -> impl Strategy<Value = FecScheme> {
    prop_oneof![
        Just(FecScheme::SourceCopy),
        Just(FecScheme::CauchyRs),
        Just(FecScheme::XorParity),
        any::<u8>().prop_map(FecScheme::from_u8),
    ]
}

fn addrs() -> impl Strategy<Value = FlowAddrs> {
    prop_oneof![
        (any::<[u8; 4]>(), any::<[u8; 4]>()).prop_map(|(src, dst)| FlowAddrs::V4 { src, dst }),
        (any::<[u8; 16]>(), any::<[u8; 16]>()).prop_map(|(src, dst)| FlowAddrs::V6 { src, dst }),
    ]
}

fn psn() -> impl Strategy<Value = Psn> {
    any::<u32>().prop_map(Psn::new)
}

#[derive(Debug, Clone)]
struct RepairSpec {
    flow_id: u32,
    last: bool,
    info: bool,
    config_id: u8,
    scheme: FecScheme,
    k: u8,
    idx_seed: u8,
    block_start: Psn,
    session_id: u16,
    present: Bitmap256,
    lost_mask: Option<Bitmap256>,
    symbol: Vec<u8>,
}

fn repair_spec() -> impl Strategy<Value = RepairSpec> {
    (1u8..=255).prop_flat_map(|k| {
        (
            (
                any::<u32>(),
                any::<bool>(),
                any::<bool>(),
                any::<u8>(),
                scheme(),
            ),
            (any::<u8>(), psn(), any::<u16>(), bitmap_within(k)),
            (
                prop::option::of(bitmap_within(k)),
                prop::collection::vec(any::<u8>(), 1..80),
            ),
        )
            .prop_map(
                move |(
                    (flow_id, last, info, config_id, scheme),
                    (idx_seed, block_start, session_id, present),
                    (lost_mask, symbol),
                )| RepairSpec {
                    flow_id,
                    last,
                    info,
                    config_id,
                    scheme,
                    k,
                    idx_seed,
                    block_start,
                    session_id,
                    present,
                    lost_mask,
                    symbol,
                },
            )
    })
}

impl RepairSpec {
    /// Builds a message that satisfies every rule.
    fn build(&self) -> Repair<'_> {
        let k = self.k;
        let mut lost = if self.info || self.scheme == FecScheme::XorParity {
            None
        } else {
            self.lost_mask.map(|m| m.and(&self.present))
        };
        if let Some(l) = &lost {
            if l.is_empty() {
                lost = Some(Bitmap256::from_iter(self.present.first()));
            }
        }
        let repair_index = match self.scheme {
            FecScheme::CauchyRs => self.idx_seed % (256 - k as u16) as u8,
            FecScheme::SourceCopy => {
                let n = self.present.count() as usize;
                self.present.nth_set(self.idx_seed as usize % n).unwrap() as u8
            }
            FecScheme::XorParity => 0,
            FecScheme::Other(_) => self.idx_seed,
        };
        Repair {
            flow_id: self.flow_id,
            last: self.last,
            info: self.info,
            config_id: self.config_id,
            scheme: self.scheme,
            k,
            repair_index,
            block_start: self.block_start,
            session_id: self.session_id,
            present: self.present,
            lost,
            symbol: if self.info { &[] } else { &self.symbol },
        }
    }
}

fn hello() -> impl Strategy<Value = Hello> {
    (
        1u8..=255,
        any::<u16>(),
        any::<u8>(),
        any::<u8>(),
        any::<u16>(),
        any::<u16>(),
        any::<u64>(),
        addrs(),
        any::<u32>(),
    )
        .prop_map(
            |(
                flow_kind,
                supported_schemes,
                max_k,
                max_m,
                max_t,
                rdma_mtu,
                nonce,
                addrs,
                flow_label,
            )| Hello {
                flow_kind,
                supported_schemes,
                max_k,
                max_m,
                max_t,
                rdma_mtu,
                nonce,
                addrs,
                flow_label,
            },
        )
}

fn hello_ack() -> impl Strategy<Value = HelloAck> {
    (
        any::<u32>(),
        1u8..=255,
        prop_oneof![Just(AddressFamily::V4), Just(AddressFamily::V6)],
        any::<u16>(),
        any::<u8>(),
        any::<u8>(),
        any::<u16>(),
        any::<u16>(),
        any::<u64>(),
        any::<u16>(),
    )
        .prop_map(
            |(
                flow_id,
                flow_kind,
                af,
                supported_schemes,
                max_k,
                max_m,
                max_t,
                rdma_mtu,
                nonce,
                max_open_blocks,
            )| HelloAck {
                flow_id,
                flow_kind,
                af,
                supported_schemes,
                max_k,
                max_m,
                max_t,
                rdma_mtu,
                nonce,
                max_open_blocks,
            },
        )
}

fn block_request() -> impl Strategy<Value = BlockRequest> {
    (1u8..=255).prop_flat_map(|k| {
        (
            any::<u8>(),
            scheme(),
            any::<u8>(),
            psn(),
            any::<u8>(),
            any::<u16>(),
            bitmap_within(k),
        )
            .prop_map(
                move |(config_id, scheme, repairs_held, block_start, ms, request_id, lost)| {
                    BlockRequest {
                        config_id,
                        scheme,
                        k,
                        repairs_held,
                        block_start,
                        suggested_m: (ms as u32 % (lost.count() + 1)) as u8,
                        request_id,
                        lost,
                    }
                },
            )
    })
}

fn ranges() -> impl Strategy<Value = Vec<PsnRange>> {
    prop::collection::vec(
        (psn(), 1u32..=255).prop_map(|(s, c)| PsnRange::new(s, c)),
        1..40,
    )
}

#[derive(Debug, Clone)]
struct HopSpec {
    node_id: u32,
    period: u32,
    lost_count: u32,
    qdc: i32,
    cause: u8,
    dropped: Vec<Psn>,
}

fn hops() -> impl Strategy<Value = Vec<HopSpec>> {
    prop::collection::vec(
        (
            any::<u32>(),
            any::<u32>(),
            any::<u32>(),
            any::<i32>(),
            any::<u8>(),
            prop::collection::vec(psn(), 0..20),
        )
            .prop_map(
                |(node_id, period, lost_count, qdc, cause, dropped)| HopSpec {
                    node_id,
                    period,
                    lost_count,
                    qdc,
                    cause,
                    dropped,
                },
            ),
        0..=16,
    )
}

fn tc_aeth() -> impl Strategy<Value = TcAeth> {
    (
        psn(),
        prop::collection::vec((1u32..1000, 0u32..1000), 0..=3),
    )
        .prop_map(|(lf, gaps)| {
            let mut segs = Vec::new();
            let mut end = lf;
            for (gap, len) in gaps {
                let left = end + 1 + gap;
                let right = left + len;
                segs.push(Segment { left, right });
                end = right;
            }
            TcAeth::new(lf, &segs).unwrap()
        })
}

fn method() -> impl Strategy<Value = Method> {
    (1u8..=255).prop_map(|v| Method::from_u8(v).unwrap())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn repair_roundtrip(spec in repair_spec(), idx in any::<usize>(), val in any::<u8>()) {
        let m = spec.build();
        let buf = roundtrip(&Message::Repair(m))?;
        // Header-only encoding leaves room for an in-place symbol.
        let mut b2 = vec![0u8; buf.len()];
        let hl = m.encode_header(m.symbol.len(), &mut b2).unwrap();
        prop_assert_eq!(hl, m.header_len());
        b2[hl..].copy_from_slice(m.symbol);
        prop_assert_eq!(&b2, &buf);
        mutated_is_stable(&buf, idx, val)?;
    }

    #[test]
    fn repair_arbitrary_fields_encode_iff_decode(
        k in any::<u8>(), i in any::<u8>(), s in any::<u8>(), flags in any::<u8>(),
        pw in prop::array::uniform8(any::<u32>()), lw in prop::array::uniform8(any::<u32>()),
        sym in prop::collection::vec(any::<u8>(), 0..8),
    ) {
        let m = Repair {
            flow_id: 1, last: flags & 1 != 0, info: flags & 2 != 0, config_id: 0,
            scheme: FecScheme::from_u8(s), k, repair_index: i, block_start: Psn::ZERO, session_id: 0,
            present: Bitmap256::from_words(pw),
            lost: if flags & 4 != 0 { Some(Bitmap256::from_words(lw)) } else { None },
            symbol: &sym,
        };
        let mut buf = vec![0u8; 400];
        if let Ok(n) = m.encode(&mut buf) {
            prop_assert_eq!(Repair::decode(&buf[..n]), Ok(m));
        }
    }

    #[test]
    fn hello_roundtrip(m in hello(), idx in any::<usize>(), val in any::<u8>()) {
        let buf = roundtrip(&Message::Hello(m))?;
        prop_assert!(buf.len() == 40 || buf.len() == 64);
        prop_assert!(HelloAck::LEN <= buf.len());
        mutated_is_stable(&buf, idx, val)?;
    }

    #[test]
    fn hello_ack_roundtrip(m in hello_ack(), h in hello(), idx in any::<usize>(), val in any::<u8>()) {
        let buf = roundtrip(&Message::HelloAck(m))?;
        // HELLO_ACK is never larger than any HELLO.
        prop_assert!(buf.len() <= h.encoded_len());
        mutated_is_stable(&buf, idx, val)?;
    }

    #[test]
    fn param_roundtrip(
        flow_id in any::<u32>(), config_id in any::<u8>(), sch in scheme(), k in 1u8..=255, mm in any::<u8>(),
        t in any::<u16>(), eff in psn(), status in any::<u8>(), idx in any::<usize>(), val in any::<u8>(),
    ) {
        let up = ParamUpdate { flow_id, config_id, scheme: sch, k, m: mm, t, effective_psn: eff };
        let buf = roundtrip(&Message::ParamUpdate(up))?;
        mutated_is_stable(&buf, idx, val)?;
        let ack = ParamAck { flow_id, config_id, status: ParamStatus::from_u8(status) };
        let buf = roundtrip(&Message::ParamAck(ack))?;
        mutated_is_stable(&buf, idx, val)?;
    }

    #[test]
    fn repair_request_block_roundtrip(
        flow_id in any::<u32>(), fallback in any::<bool>(), b in block_request(), idx in any::<usize>(), val in any::<u8>(),
    ) {
        let m = RepairRequest { flow_id, fallback, kind: RequestKind::Block(b) };
        let buf = roundtrip(&Message::RepairRequest(m))?;
        mutated_is_stable(&buf, idx, val)?;
    }

    #[test]
    fn repair_request_ranges_roundtrip(
        flow_id in any::<u32>(), fallback in any::<bool>(), request_id in any::<u16>(), r in ranges(),
        idx in any::<usize>(), val in any::<u8>(),
    ) {
        let m = RepairRequest {
            flow_id, fallback,
            kind: RequestKind::Ranges(RangeRequest { request_id, ranges: LostRanges::from_slice(&r) }),
        };
        let buf = roundtrip(&Message::RepairRequest(m))?;
        prop_assert_eq!(buf.len(), 12 + 4 * r.len());
        mutated_is_stable(&buf, idx, val)?;
    }

    #[test]
    fn loss_report_roundtrip(v in prop::array::uniform9(any::<u32>()), idx in any::<usize>(), val in any::<u8>()) {
        let m = LossReport {
            flow_id: v[0], interval_us: v[1], expected: v[2], received: v[3], restored: v[4],
            incomplete_blocks: v[5], ce_marked: v[6], repairs_received: v[7], repairs_ce_marked: v[8],
        };
        let buf = roundtrip(&Message::LossReport(m))?;
        mutated_is_stable(&buf, idx, val)?;
    }

    #[test]
    fn path_report_roundtrip(
        truncated in any::<bool>(), method in method(), addrs in addrs(), flow_label in any::<u32>(), hs in hops(),
        idx in any::<usize>(), val in any::<u8>(),
    ) {
        let entries: Vec<HopEntry<'_>> = hs.iter().map(|h| HopEntry {
            node_id: h.node_id, period: h.period, lost_count: h.lost_count, queue_delay_change_us: h.qdc,
            cause: LossCause::from_u8(h.cause), dropped: DroppedPsns::from_slice(&h.dropped),
        }).collect();
        let m = PathReport { truncated, method, addrs, flow_label, hops: HopEntries::from_slice(&entries) };
        let buf = roundtrip(&Message::PathReport(m))?;
        if let Ok(Message::PathReport(d)) = wire::decode(&buf) {
            for (a, b) in d.hops.iter().zip(hs.iter()) {
                prop_assert_eq!(a.dropped.iter().collect::<Vec<_>>(), b.dropped.clone());
            }
        }
        mutated_is_stable(&buf, idx, val)?;
    }

    #[test]
    fn close_roundtrip(flow_id in any::<u32>(), reason in any::<u16>(), idx in any::<usize>(), val in any::<u8>()) {
        let m = Close { flow_id, reason: CloseReason::from_u16(reason) };
        let buf = roundtrip(&Message::Close(m))?;
        mutated_is_stable(&buf, idx, val)?;
    }

    #[test]
    fn tc_aeth_roundtrip(flow_id in any::<u32>(), seq in any::<u16>(), f in tc_aeth(), idx in any::<usize>(), val in any::<u8>()) {
        let m = TcAethReport { flow_id, seq, fragment: f };
        let buf = roundtrip(&Message::TcAeth(m))?;
        prop_assert_eq!(TcAeth::decode(&buf[8..]), Ok(f));
        let gaps: u32 = f.lost_ranges().map(|r| r.count).sum();
        prop_assert!(gaps >= f.segments().len() as u32);
        mutated_is_stable(&buf, idx, val)?;
    }

    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..400)) {
        let _ = wire::decode(&bytes);
        let _ = wire::Header::decode(&bytes);
        let _ = TcAeth::decode(&bytes);
    }

    #[test]
    fn plausible_headers_never_panic(ty in 0u8..16, flags in any::<u8>(), body in prop::collection::vec(any::<u8>(), 0..400), slack in 0usize..4) {
        // Valid version and a Length that matches the buffer, so decoders get
        // past the common header and into the type-specific body.
        let mut b = vec![0x10 | ty, flags, 0, 0, 0, 0, 0, 0];
        b.extend_from_slice(&body);
        let len = (b.len() as u16).to_be_bytes();
        b[2] = len[0];
        b[3] = len[1];
        b[4..8].fill(0);
        b.extend(std::iter::repeat_n(0u8, slack));
        if let Ok(m) = wire::decode(&b) {
            let mut out = vec![0u8; m.encoded_len()];
            let n = m.encode(&mut out).unwrap();
            prop_assert_eq!(wire::decode(&out[..n]), Ok(m));
        }
    }
}
