//! A slot's PATH_REPORT, cut to the budget.

use super::super::psn::Psn;
use super::super::wire::{
    DroppedPsns, HopEntries, HopEntry, LossCause, Method, PathReport, HEADER_LEN, MAX_HOP_ENTRIES,
};
use super::aggregate::{Counters, Params, Slot};

/// Octets of a hop entry before its PSN words (wire/path.rs `HOP_FIXED`).
const HOP_FIXED: usize = 20;
/// Octets of one listed PSN.
const PSN_WORD: usize = 4;

const NO_ENTRY: HopEntry<'static> = HopEntry {
    node_id: 0,
    period: 0,
    lost_count: 0,
    queue_delay_change_us: 0,
    cause: LossCause::Unknown,
    dropped: DroppedPsns::EMPTY,
};

/// Encodes `s` into `out` (at most `out.len()` octets, which is the budget)
/// and returns the length; `None` if not even the header and one entry
/// fit. Own entries come first (cause 0, 1, 2), then the held ones in
/// arrival order. Over the budget, PSN lists are cut from the last entry
/// backwards, then (for budgets below 16 bare entries) whole entries from
/// the end. Left-out PSNs and entries are counted in `c`. Stack: the 16
/// entries and their lists, about 1 KiB (the kernel's timer runs this).
pub(super) fn report(s: &Slot, p: &Params, out: &mut [u8], c: &mut Counters) -> Option<usize> {
    let period = s.first_at.checked_div(p.interval).unwrap_or(0) as u32;
    let mut hops = [NO_ENTRY; MAX_HOP_ENTRIES];
    let mut lists: [&[Psn]; MAX_HOP_ENTRIES] = [&[]; MAX_HOP_ENTRIES];
    let mut k = 0usize;
    let mut truncated = s.omitted;
    let mut off = 0usize;
    // The cause index by hand: `enumerate` would compile in an overflow
    // check.
    let mut ci = 0u8;
    for (&lost, &n) in s.lost.iter().zip(s.n.iter()) {
        let cause = LossCause::from_u8(ci);
        ci = ci.wrapping_add(1);
        let n = usize::from(n);
        let list = s.psns.get(off..off.saturating_add(n)).unwrap_or(&[]);
        off = off.saturating_add(n);
        if lost == 0 {
            continue;
        }
        if let (Some(h), Some(l)) = (hops.get_mut(k), lists.get_mut(k)) {
            *h = HopEntry {
                node_id: p.node_id,
                period,
                lost_count: lost,
                queue_delay_change_us: 0,
                cause,
                dropped: DroppedPsns::EMPTY,
            };
            *l = list;
            k = k.saturating_add(1);
        }
    }
    for held in s.held.iter().take(usize::from(s.n_held)) {
        let start = usize::from(held.start);
        let list = s
            .held_psns
            .get(start..start.saturating_add(usize::from(held.n)))
            .unwrap_or(&[]);
        match (hops.get_mut(k), lists.get_mut(k)) {
            (Some(h), Some(l)) => {
                *h = HopEntry {
                    node_id: held.node_id,
                    period: held.period,
                    lost_count: held.lost,
                    queue_delay_change_us: held.qdc_us,
                    cause: held.cause,
                    dropped: DroppedPsns::EMPTY,
                };
                *l = list;
                k = k.saturating_add(1);
            }
            // Own entries added after a merge filled the 16.
            _ => {
                c.entries_over = c.entries_over.wrapping_add(1);
                c.psns_omitted = c.psns_omitted.wrapping_add(list.len() as u64);
                truncated |= !list.is_empty();
            }
        }
    }

    // The Length field is 16 bits, whatever the buffer.
    let budget = out.len().min(usize::from(u16::MAX));
    // Small bounded numbers (16 entries of at most 255 PSNs), saturating
    // only so that no overflow check is compiled in.
    let fixed = (HEADER_LEN + 4 + 4).saturating_add(s.addrs.wire_len());
    let mut len = lists.iter().take(k).fold(fixed, |a, l| {
        a.saturating_add(HOP_FIXED)
            .saturating_add(PSN_WORD.saturating_mul(l.len()))
    });
    for l in lists.iter_mut().take(k).rev() {
        if len <= budget {
            break;
        }
        let cut = len.saturating_sub(budget).div_ceil(PSN_WORD).min(l.len());
        *l = l.get(..l.len().saturating_sub(cut)).unwrap_or(&[]);
        len = len.saturating_sub(PSN_WORD.saturating_mul(cut));
        c.psns_omitted = c.psns_omitted.wrapping_add(cut as u64);
        truncated |= cut > 0;
    }
    // Every list is empty by now if this runs.
    while len > budget && k > 1 {
        k = k.saturating_sub(1);
        len = len.saturating_sub(HOP_FIXED);
        c.entries_over = c.entries_over.wrapping_add(1);
    }
    if len > budget || k == 0 {
        return None;
    }
    for (h, l) in hops.iter_mut().zip(lists.iter()).take(k) {
        h.dropped = DroppedPsns::from_slice(l);
    }
    let m = PathReport {
        truncated,
        method: Method::NodeLocalDrop,
        addrs: s.addrs,
        flow_label: s.dest_qp,
        hops: HopEntries::from_slice(hops.get(..k)?),
    };
    m.encode(out).ok()
}
