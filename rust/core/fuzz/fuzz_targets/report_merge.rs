//! Fuzz the Path Reporter's merge: arbitrary octets offered as a downstream
//! PATH_REPORT (merged into an own report of its flow when they decode),
//! then the report emitted under a budget from the input. Nothing may panic;
//! what is emitted fits the budget, decodes, has at most 16 entries, a Lost
//! Count at least its PSN list, and Truncated when a known PSN is missing.
#![no_main]

use crem_core::psn::Psn;
use crem_core::report::{parse_drop, Aggregator, Budget, Dropped, Merge, Params, Slot};
use crem_core::wire::{LossCause, PathReport, MAX_HOP_ENTRIES};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&[b0, b1, b2, b3], msg)) = data.split_first_chunk::<4>() else {
        return;
    };
    let budget = usize::from(u16::from_be_bytes([b0, b1]) % 9100);
    let own = usize::from(b2 % 80);
    let params = Params {
        node_id: 7,
        psn_limit: usize::from(b3 % 70),
        ..Params::default()
    };
    let _ = parse_drop(msg);
    let mut slots = [Slot::EMPTY; 2];
    let mut a = Aggregator::new(&mut slots[..], params);
    let mut known = 0u64;
    let mut truncated_in = false;
    let mut reports = 0u64;
    if let Ok(r) = PathReport::decode(msg) {
        known = own as u64;
        reports = u64::from(own > 0);
        for i in 0..own {
            let d = Dropped {
                addrs: r.addrs,
                dest_qp: r.flow_label & 0xff_ffff,
                psn: Psn::new(i as u32),
                opcode: 4,
                is_source: true,
            };
            a.on_drop(0, &d, LossCause::from_u8(b2 % 4));
        }
        let merged = a.on_downstream_bytes(10, msg);
        let expect_merge = own > 0 && r.method.to_u8() == 3;
        assert_eq!(matches!(merged, Merge::Held(_)), expect_merge);
        if expect_merge {
            known += r.hops.iter().map(|h| h.dropped.len() as u64).sum::<u64>();
            truncated_in = r.truncated;
        }
    } else {
        assert_eq!(a.on_downstream_bytes(10, msg), Merge::Forward);
    }
    let mut out = vec![0u8; budget];
    let mut emitted = 0;
    a.poll(
        u64::MAX,
        &mut out,
        |_, _| Budget::Send(budget),
        |e| {
            emitted += 1;
            assert!(e.bytes.len() <= budget);
            let r = PathReport::decode(e.bytes).expect("an emitted report decodes");
            assert!(!r.hops.is_empty() && r.hops.len() <= MAX_HOP_ENTRIES);
            let mut listed = 0u64;
            for h in r.hops.iter() {
                assert!(h.lost_count as usize >= h.dropped.len());
                listed += h.dropped.len() as u64;
            }
            assert!(listed <= known);
            assert_eq!(r.truncated, listed < known || truncated_in);
        },
    );
    assert_eq!(emitted + a.counters().too_small, reports);
});
