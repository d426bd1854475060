//! Building and sending REPAIR messages: ordinary (from the accumulators),
//! coded retransmission and proactive (computed from the retained sources),
//! Source Copy, and INFO.
//!
//! Every message is built in the caller's scratch: the header with
//! [`Repair::encode_header`], then the symbol computed or copied in place
//! right behind it, then one [`Sink::send`].

use super::super::super::fec::{build_source_symbol, Bitmap, BlockEncoder, Code, Scheme};
use super::super::super::gf::MulAcc;
use super::super::super::psn::Psn;
use super::super::super::wire::{Bitmap256, Error as WireError, FecScheme, Repair};
use super::super::Sink;
use super::ring::Block;
use super::{Csf, CsfIo, CsfStorage, SourceStore};

/// Outcome of one message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Emitted {
    /// Sent, this many octets.
    Sent(usize),
    /// The scratch is too small.
    NoRoom,
    /// The codec refused the header or the symbol could not be computed.
    Failed,
}

/// What kind of symbol a message carries (for the counters).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Kind {
    Ordinary,
    Retx,
    SourceCopy,
    Info,
    /// A proactive answer's symbol (coded or Source Copy): paid from the
    /// retransmission budget like `Retx` and `SourceCopy`, counted apart.
    Proactive,
}

/// Outcome of a coded retransmission answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Coded {
    /// The M symbols were sent.
    Sent,
    /// A source of L is not held: nothing sent (Source Copy may still do).
    SourceMissing,
    /// The retransmission budget cannot pay for M symbols: nothing sent.
    OverBudget,
}

/// What a Source Copy answer did with the positions asked for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Copied {
    /// Positions copied (the L of the messages).
    pub(super) sent: Bitmap,
    /// Positions held but left out: the retransmission budget was spent.
    pub(super) over_budget: Bitmap,
}

/// The REPAIR header fields for `blk`.
#[allow(clippy::too_many_arguments)]
pub(super) fn header(
    flow_id: u32,
    blk: &Block,
    scheme: Scheme,
    index: u8,
    last: bool,
    session: u16,
    lost: Option<&Bitmap>,
    info: bool,
) -> Repair<'static> {
    Repair {
        flow_id,
        last,
        info,
        config_id: blk.cfg.id,
        scheme: FecScheme::from_u8(u8::from(scheme)),
        k: blk.covered,
        repair_index: index,
        block_start: blk.start,
        session_id: session,
        present: Bitmap256::from_words(blk.present.words()),
        lost: lost.map(|l| Bitmap256::from_words(l.words())),
        symbol: &[],
    }
}

/// Encodes `hdr` with a T-octet symbol that `fill` writes in place, and
/// sends the message.
pub(super) fn emit<K: Sink + ?Sized>(
    sink: &mut K,
    scratch: &mut [u8],
    hdr: &Repair<'_>,
    t: usize,
    fill: impl FnOnce(&mut [u8]) -> bool,
) -> Emitted {
    let hl = match hdr.encode_header(t, scratch) {
        Ok(hl) => hl,
        Err(WireError::BufferTooSmall { .. }) => return Emitted::NoRoom,
        Err(_) => return Emitted::Failed,
    };
    let end = hl.saturating_add(t);
    let Some(sym) = scratch.get_mut(hl..end) else {
        return Emitted::NoRoom;
    };
    if !fill(sym) {
        return Emitted::Failed;
    }
    match scratch.get(..end) {
        Some(msg) => {
            sink.send(msg);
            Emitted::Sent(end)
        }
        None => Emitted::NoRoom,
    }
}

/// `sym = R_i[L]` over the retained sources of `blk` at positions `set`,
/// read from the store. False if a source is missing or malformed.
fn encode_from_store<G, S>(
    gf: &G,
    store: &S,
    blk: &Block,
    i: u8,
    set: &Bitmap,
    sym: &mut [u8],
) -> bool
where
    G: MulAcc + ?Sized,
    S: Sources + ?Sized,
{
    let Ok(code) = Code::new(blk.cfg.scheme, blk.covered, blk.cfg.t as usize) else {
        return false;
    };
    let Ok(mut enc) = BlockEncoder::new(code, i, 1) else {
        return false;
    };
    sym.fill(0);
    set.iter().all(|j| {
        store
            .source(blk.start.wrapping_add(j as u32))
            .is_some_and(|p| enc.add_payload(gf, j, p, sym).is_ok())
    })
}

/// Where symbols are computed from: a [`SourceStore`], or one plus the
/// source being added (not stored until the CSF call returns).
trait Sources {
    fn source(&self, psn: Psn) -> Option<&[u8]>;
}

impl<S: SourceStore + ?Sized> Sources for S {
    fn source(&self, psn: Psn) -> Option<&[u8]> {
        SourceStore::source(self, psn)
    }
}

struct WithSource<'a, S: ?Sized> {
    store: &'a S,
    this: Option<(Psn, &'a [u8])>,
}

impl<S: SourceStore + ?Sized> Sources for WithSource<'_, S> {
    fn source(&self, psn: Psn) -> Option<&[u8]> {
        match self.this {
            Some((p, bytes)) if p == psn => Some(bytes),
            _ => self.store.source(psn),
        }
    }
}

/// Whether the store holds every source of `set`.
fn all_held<S: Sources + ?Sized>(store: &S, blk: &Block, set: &Bitmap) -> bool {
    set.iter()
        .all(|j| store.source(blk.start.wrapping_add(j as u32)).is_some())
}

impl<St: CsfStorage> Csf<St> {
    /// Counts one message and pays for coded and Source Copy ones from the
    /// retransmission budget; true if it was sent.
    pub(super) fn account(&mut self, e: Emitted, kind: Kind) -> bool {
        match e {
            Emitted::Sent(n) => {
                if matches!(kind, Kind::Retx | Kind::SourceCopy | Kind::Proactive) {
                    self.retx_budget.spend(n);
                }
                let c = &mut self.counters;
                c.repair_octets = c.repair_octets.wrapping_add(n as u64);
                let k = match kind {
                    Kind::Ordinary => &mut c.repairs_ordinary,
                    Kind::Retx => &mut c.repairs_retx,
                    Kind::SourceCopy => &mut c.repairs_source_copy,
                    Kind::Info => &mut c.repairs_info,
                    Kind::Proactive => &mut c.repairs_proactive,
                };
                *k = k.wrapping_add(1);
                true
            }
            Emitted::NoRoom => {
                let c = &mut self.counters;
                c.drops.scratch_too_small = c.drops.scratch_too_small.wrapping_add(1);
                false
            }
            Emitted::Failed => {
                let c = &mut self.counters;
                c.drops.encode_error = c.drops.encode_error.wrapping_add(1);
                false
            }
        }
    }

    /// Sends the next pending ordinary repair, if any.
    pub(super) fn send_pending_one<G, K, S>(&mut self, io: &mut CsfIo<'_, G, K, S>)
    where
        G: MulAcc + ?Sized,
        K: Sink + ?Sized,
        S: SourceStore + ?Sized,
    {
        let Some(p) = self.pending.as_mut() else {
            return;
        };
        if p.next >= p.m {
            self.pending = None;
            return;
        }
        let n = p.next;
        p.next = n.saturating_add(1);
        let p = *p;
        if p.next >= p.m {
            self.pending = None;
        }
        if !self.bucket.take() {
            let c = &mut self.counters.drops;
            if self.params.spread {
                c.repair_rate_limited = c.repair_rate_limited.wrapping_add(1);
            } else {
                // Back to back nothing refills the bucket: the rest of the
                // round is over the rate too.
                c.repair_rate_limited = c
                    .repair_rate_limited
                    .wrapping_add(p.m.saturating_sub(n) as u64);
                self.pending = None;
            }
            return;
        }
        let last = p.next >= p.m || (!self.params.spread && self.bucket.available() == 0);
        let start = p.block.start;
        let t = p.block.cfg.t as usize;
        let hdr = header(
            self.flow_id,
            &p.block,
            p.block.cfg.scheme,
            n,
            last,
            0,
            None,
            false,
        );
        let lo = (n as usize).saturating_mul(t);
        let src = self
            .acc
            .get(p.slot)
            .and_then(|a| a.as_ref().get(lo..lo.saturating_add(t)));
        let e = emit(io.sink, io.scratch, &hdr, t, |sym| match src {
            Some(s) if s.len() == sym.len() => {
                // zip, not copy_from_slice: no length-mismatch panic path.
                for (d, x) in sym.iter_mut().zip(s) {
                    *d = *x;
                }
                true
            }
            _ => false,
        });
        if self.account(e, Kind::Ordinary) && last {
            if let Some(b) = self
                .ring
                .find_start(start)
                .and_then(|n| self.ring.get_mut(n))
            {
                b.told = true;
            }
        }
    }

    /// The m_eff ordinary repairs of closed block `n`, opened under a
    /// provisional configuration, computed from the retained sources (the
    /// same symbols the accumulator would have built: R_i over the present
    /// positions). Back to back, within the token bucket: the block's
    /// sources banked their m/k for them (`Bucket::earn_banked`), so only
    /// a bucket another kind of repair emptied limits them.
    pub(super) fn send_deferred<G, K, S>(
        &mut self,
        n: usize,
        this: Option<(Psn, &[u8])>,
        io: &mut CsfIo<'_, G, K, S>,
    ) where
        G: MulAcc + ?Sized,
        K: Sink + ?Sized,
        S: SourceStore + ?Sized,
    {
        let Some(b) = self.ring.get_mut(n).filter(|b| b.deferred) else {
            return;
        };
        b.deferred = false;
        let blk = *b;
        if blk.m_eff == 0 || blk.present.is_empty() {
            return;
        }
        let store = WithSource {
            store: &*io.store,
            this,
        };
        if !all_held(&store, &blk, &blk.present) {
            self.counters.drops.source_missing = self.counters.drops.source_missing.wrapping_add(1);
            return;
        }
        let m = self.take_ordinary(u16::from(blk.m_eff));
        let t = blk.cfg.t as usize;
        for i in 0..m as u8 {
            let last = u16::from(i).saturating_add(1) == m;
            let hdr = header(self.flow_id, &blk, blk.cfg.scheme, i, last, 0, None, false);
            let e = emit(io.sink, io.scratch, &hdr, t, |sym| {
                encode_from_store(io.gf, &store, &blk, i, &blk.present, sym)
            });
            if self.account(e, Kind::Ordinary) && last {
                if let Some(b) = self.ring.get_mut(n) {
                    b.told = true;
                }
            }
        }
    }

    /// Up to `n` ordinary repairs' worth of the m/k bucket; the rest are
    /// counted as rate-limited.
    fn take_ordinary(&mut self, n: u16) -> u16 {
        let got = self.bucket.take_up_to(n);
        let c = &mut self.counters.drops;
        c.repair_rate_limited = c
            .repair_rate_limited
            .wrapping_add(u64::from(n.saturating_sub(got)));
        got
    }

    /// Sends every pending ordinary repair now.
    pub(super) fn flush_pending<G, K, S>(&mut self, io: &mut CsfIo<'_, G, K, S>)
    where
        G: MulAcc + ?Sized,
        K: Sink + ?Sized,
        S: SourceStore + ?Sized,
    {
        // At most 255 rounds; each call advances or clears `pending`.
        for _ in 0..256 {
            if self.pending.is_none() {
                break;
            }
            self.send_pending_one(io);
        }
    }

    /// Source Copy of the held sources of `set` in block `n`, as many as
    /// the retransmission budget pays for, in position order (RETX, L =
    /// the positions copied, LAST on the last), counted as `kind`.
    pub(super) fn send_source_copies<G, K, S>(
        &mut self,
        n: usize,
        set: &Bitmap,
        session: u16,
        kind: Kind,
        io: &mut CsfIo<'_, G, K, S>,
    ) -> Copied
    where
        G: MulAcc + ?Sized,
        K: Sink + ?Sized,
        S: SourceStore + ?Sized,
    {
        let Some(blk) = self.ring.get(n).copied() else {
            return Copied {
                sent: Bitmap::EMPTY,
                over_budget: Bitmap::EMPTY,
            };
        };
        let held: Bitmap = set
            .iter()
            .filter(|&j| io.store.source(blk.start.wrapping_add(j as u32)).is_some())
            .collect();
        let missing = set.len().saturating_sub(held.len());
        if missing > 0 {
            self.counters.drops.source_missing = self
                .counters
                .drops
                .source_missing
                .wrapping_add(missing as u64);
        }
        let allowed = (held.len() as u64).min(self.retx_affordable(blk.cfg.t)) as usize;
        self.count_retx_limited(held.len().saturating_sub(allowed));
        // A counted loop, not `take`/`skip`: their folds keep overflow
        // panic paths in the kernel build.
        let mut copied = Copied {
            sent: Bitmap::EMPTY,
            over_budget: Bitmap::EMPTY,
        };
        let mut left = allowed;
        for j in held.iter() {
            if left > 0 {
                left = left.wrapping_sub(1);
                copied.sent.insert(j);
            } else {
                copied.over_budget.insert(j);
            }
        }
        let held = copied.sent;
        let total = held.len();
        let t = blk.cfg.t as usize;
        let mut q = 0usize;
        for j in held.iter() {
            q = q.wrapping_add(1);
            let last = q == total;
            let hdr = header(
                self.flow_id,
                &blk,
                Scheme::SourceCopy,
                j,
                last,
                session,
                Some(&held),
                false,
            );
            let store = &*io.store;
            let e = emit(io.sink, io.scratch, &hdr, t, |sym| {
                store
                    .source(blk.start.wrapping_add(j as u32))
                    .is_some_and(|p| build_source_symbol(p, t, sym).is_ok())
            });
            self.account(e, kind);
        }
        copied
    }

    /// `m` coded retransmission symbols over `lost` for block `n` with
    /// fresh indices (the caller checked there are enough), all or none:
    /// fewer than M would not decode. Counted as `kind`.
    pub(super) fn send_coded<G, K, S>(
        &mut self,
        n: usize,
        lost: &Bitmap,
        m: u16,
        session: u16,
        kind: Kind,
        io: &mut CsfIo<'_, G, K, S>,
    ) -> Coded
    where
        G: MulAcc + ?Sized,
        K: Sink + ?Sized,
        S: SourceStore + ?Sized,
    {
        let Some(blk) = self.ring.get(n).copied() else {
            return Coded::SourceMissing;
        };
        if !all_held(&*io.store, &blk, lost) {
            self.counters.drops.source_missing = self.counters.drops.source_missing.wrapping_add(1);
            return Coded::SourceMissing;
        }
        if self.retx_affordable(blk.cfg.t) < u64::from(m) {
            self.count_retx_limited(m as usize);
            return Coded::OverBudget;
        }
        self.send_fresh(n, &blk, lost, m, session, kind, io);
        Coded::Sent
    }

    /// Sends `m` symbols R_i[set] with the block's next fresh indices and
    /// marks them used. `Retx` and `Proactive` messages carry `set` as the
    /// Lost Source Bitmap (RETX).
    #[allow(clippy::too_many_arguments)]
    fn send_fresh<G, K, S>(
        &mut self,
        n: usize,
        blk: &Block,
        set: &Bitmap,
        m: u16,
        session: u16,
        kind: Kind,
        io: &mut CsfIo<'_, G, K, S>,
    ) where
        G: MulAcc + ?Sized,
        K: Sink + ?Sized,
        S: SourceStore + ?Sized,
    {
        if let Some(b) = self.ring.get_mut(n) {
            b.next_index = b.next_index.saturating_add(m);
        }
        let lost = matches!(kind, Kind::Retx | Kind::Proactive).then_some(set);
        let t = blk.cfg.t as usize;
        for q in 0..m {
            let Ok(i) = u8::try_from(blk.next_index.saturating_add(q)) else {
                break;
            };
            let last = q.saturating_add(1) == m;
            let hdr = header(
                self.flow_id,
                blk,
                Scheme::CauchyRs,
                i,
                last,
                session,
                lost,
                false,
            );
            let (gf, store) = (io.gf, &*io.store);
            let e = emit(io.sink, io.scratch, &hdr, t, |sym| {
                encode_from_store(gf, store, blk, i, set, sym)
            });
            self.account(e, kind);
        }
    }

    /// INFO for block `n`: Block Start PSN, k and Present Bitmap only,
    /// answering the request `session`.
    pub(super) fn send_info<K, G, S>(&mut self, n: usize, session: u16, io: &mut CsfIo<'_, G, K, S>)
    where
        G: MulAcc + ?Sized,
        K: Sink + ?Sized,
        S: SourceStore + ?Sized,
    {
        self.info(n, session, false, io);
    }

    /// The tail notice of block `n`: INFO with LAST and Repair Session ID
    /// 0 (no request has ID 0: it answers none). True if sent.
    pub(super) fn send_info_last<K, G, S>(&mut self, n: usize, io: &mut CsfIo<'_, G, K, S>) -> bool
    where
        G: MulAcc + ?Sized,
        K: Sink + ?Sized,
        S: SourceStore + ?Sized,
    {
        self.info(n, 0, true, io)
    }

    fn info<K, G, S>(
        &mut self,
        n: usize,
        session: u16,
        last: bool,
        io: &mut CsfIo<'_, G, K, S>,
    ) -> bool
    where
        G: MulAcc + ?Sized,
        K: Sink + ?Sized,
        S: SourceStore + ?Sized,
    {
        let Some(blk) = self.ring.get(n).copied() else {
            return false;
        };
        let hdr = header(
            self.flow_id,
            &blk,
            blk.cfg.scheme,
            0,
            last,
            session,
            None,
            true,
        );
        let e = emit(io.sink, io.scratch, &hdr, 0, |_| true);
        self.account(e, Kind::Info)
    }
}
