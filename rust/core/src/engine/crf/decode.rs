//! Decoding one block.
//!
//! The store keeps source *packets* (in the kernel, skb references), not
//! T-octet source symbols, so the decoder is not handed the known sources.
//! Instead each selected repair symbol is first reduced in place — the
//! draft's "subtract the contributions of the source symbols it holds",
//! computed from the payload with its length prefix and implicit zero
//! padding — after which it covers exactly the unknown set U, and
//! [`fec::decode`] solves the u×u Cauchy system with no known sources. The
//! repairs are consumed by the decode (it cannot fail after validation),
//! so a repair is never reduced twice.

use super::super::super::fec::{self, BlockSymbols, Code};
use super::super::super::wire::Bitmap256;
use super::super::Nanos;
use super::blocks::{RepairMeta, Stage};
use super::window::{HAVE, KEPT};
use super::{inc, Crf, CrfHost, CrfStorage, MulAcc, Restored, SymbolStore, Workspace};

/// The selected, reduced repairs of one block as the decoder sees them:
/// the descriptors from slot `first` on (`metas` starts there), of which
/// those selected for `block`.
struct View<'a, S: SymbolStore + ?Sized> {
    store: &'a S,
    metas: &'a [RepairMeta],
    first: usize,
    block: usize,
}

impl<S: SymbolStore + ?Sized> BlockSymbols for View<'_, S> {
    fn source(&self, _j: u8) -> Option<&[u8]> {
        None
    }

    fn repair_count(&self) -> usize {
        self.metas.len()
    }

    fn repair(&self, n: usize) -> Option<fec::Repair<'_>> {
        let m = self.metas.get(n)?;
        if !m.live || !m.sel || m.block as usize != self.block {
            return None;
        }
        Some(fec::Repair {
            index: m.index,
            lost: None,
            data: self.store.repair(self.first.wrapping_add(n))?,
        })
    }
}

impl<St: CrfStorage> Crf<St> {
    /// Decodes block `b` for the positions `unknown` (the caller checked
    /// there are enough usable repairs) and delivers the restored packets.
    /// Verification failures are requested with FALLBACK.
    pub(super) fn try_decode<H: CrfHost + ?Sized, G: MulAcc + ?Sized>(
        &mut self,
        b: usize,
        unknown: Bitmap256,
        now: Nanos,
        host: &mut H,
        ws: &mut Workspace<'_, G>,
    ) {
        let Some(x) = self.blocks.as_ref().get(b).copied().filter(|x| x.live) else {
            return;
        };
        let u = unknown.count() as usize;
        if u == 0 {
            return;
        }
        let Ok(code) = Code::new(x.scheme, x.k, x.t as usize) else {
            self.set_undecodable(b);
            inc(&mut self.counters.decode_fail_codec);
            return;
        };
        let t = code.t();
        inc(&mut self.counters.decodes);
        if ws.out.len() < u.saturating_mul(t) {
            inc(&mut self.counters.decode_fail_buffer);
            self.set_undecodable(b);
            return;
        }
        // Select the first u repairs whose L contains U (the block's, in
        // slot order; only they are read as selected below).
        let mut chosen = 0usize;
        let (mut lo, mut hi) = (usize::MAX, 0usize);
        let mut i = self.first_repair(b);
        while let Some(r) = self.repairs.as_mut().get_mut(i as usize) {
            r.sel = false;
            if chosen < u && r.live && r.block as usize == b && unknown.is_subset_of(&r.lost) {
                r.sel = true;
                chosen = chosen.wrapping_add(1);
                lo = lo.min(i as usize);
                hi = hi.max(i as usize);
            }
            i = r.next;
        }
        if chosen < u {
            return;
        }
        // Every known source the reduction reads must be there and fit T.
        let mut needed = Bitmap256::EMPTY;
        let mut i = self.first_repair(b);
        while let Some(r) = self.repairs.as_ref().get(i as usize) {
            if r.sel {
                needed = needed.or(&r.lost.and_not(&unknown));
            }
            i = r.next;
        }
        let mut missing = false;
        for j in needed.iter() {
            let p = x.start.wrapping_add(j as u32);
            let Some(s) = self.win.slot(p) else {
                missing = true;
                continue;
            };
            let ok = self.win.at(s) & KEPT != 0
                && host
                    .source(s)
                    .is_some_and(|src| src.len().saturating_add(fec::LENGTH_PREFIX) <= t);
            if !ok {
                // Treat it as unknown from now on and retry later.
                if self.win.at(s) & KEPT != 0 {
                    host.drop_source(s);
                }
                self.win.clear(p, KEPT);
                missing = true;
            }
        }
        if missing {
            inc(&mut self.counters.decode_fail_source);
            if let Some(y) = self.blocks.as_mut().get_mut(b) {
                y.decode_pending = true;
                self.decode_pending = true;
            }
            return;
        }
        // Reduce: R_i -= Σ_{j ∈ L_i \ U} C(i, j)·S_j.
        let mut next = self.first_repair(b);
        while let Some(m) = self.repairs.as_ref().get(next as usize).copied() {
            let ri = next as usize;
            next = m.next;
            if !m.sel {
                continue;
            }
            for j in m.lost.and_not(&unknown).iter() {
                let p = x.start.wrapping_add(j as u32);
                let (Some(s), Some(c)) = (self.win.slot(p), code.coefficient(m.index, j as u8))
                else {
                    continue;
                };
                if let (Some(src), Some(rep)) = host.source_and_repair_mut(s, ri) {
                    let prefix = (src.len() as u16).to_be_bytes();
                    if let Some((head, body)) = rep.split_at_mut_checked(fec::LENGTH_PREFIX) {
                        ws.gf.mul_acc(head, &prefix, c);
                        ws.gf.mul_acc(body, src, c);
                    }
                }
            }
            if let Some(r) = self.repairs.as_mut().get_mut(ri) {
                r.lost = unknown;
            }
        }
        let present = fec::Bitmap::from_words(&unknown.words());
        let res = {
            // The selected lie in slots lo..=hi (u >= 1 were chosen).
            let metas = self.repairs.as_ref();
            let view = View {
                store: &*host,
                metas: metas.get(lo..=hi).unwrap_or(&[]),
                first: lo,
                block: b,
            };
            fec::decode(ws.gf, &code, &present, &view, ws.scratch, ws.out)
        };
        self.drop_repairs(b, host);
        let decoded = match res {
            Ok(d) => d,
            Err(_) => {
                inc(&mut self.counters.decode_fail_codec);
                self.set_undecodable(b);
                return;
            }
        };
        let mut failed = Bitmap256::EMPTY;
        for (n, j) in decoded.iter().enumerate() {
            let p = x.start.wrapping_add(j as u32);
            if self.win.get(p) & HAVE != 0 {
                continue;
            }
            let from = n.saturating_mul(t);
            let Some(sym) = ws.out.get(from..from.saturating_add(t)) else {
                continue;
            };
            let r = match fec::parse_source_symbol(sym) {
                Ok(payload) => self.restore_one(p, payload, now, host),
                Err(_) => {
                    inc(&mut self.counters.restore_malformed);
                    Restored::IcrcFailed
                }
            };
            // Only a packet that is not what was sent is worth a Source
            // Copy: one the host could not build or keep would fare no
            // better as a copy.
            if r == Restored::IcrcFailed {
                failed.set(j as usize);
            }
        }
        if failed.is_empty() {
            return;
        }
        if let Some(y) = self.blocks.as_mut().get_mut(b).filter(|y| y.live) {
            y.failed = y.failed.or(&failed);
        }
        if self.cfg.coded_retx && self.cfg.fallback_source_copy {
            self.send_block_request(b, true, host);
            inc(&mut self.counters.requests_fallback_icrc);
            inc(&mut self.counters.blocks_fell_back);
            let deadline = now.saturating_add(self.round_timeout());
            if let Some(y) = self.blocks.as_mut().get_mut(b).filter(|y| y.live) {
                y.stage = Stage::Fallback;
                y.counted_incomplete = true;
                self.set_deadline(b, deadline);
            }
        } else {
            self.abandon_block(b, host);
        }
    }

    fn set_undecodable(&mut self, b: usize) {
        if let Some(y) = self.blocks.as_mut().get_mut(b) {
            y.undecodable = true;
        }
    }
}
