//! What a run measured: a [`Trace`] recorded while it ran and the
//! [`Report`] computed from it and from the receiver's record at the end.
//!
//! Loss accounting is per source packet whose *first transmission* the
//! forward link dropped ("lost"). Each is classified by its first copy to
//! reach the RDMA receiver:
//!
//! * `fec` — restored by the CRF before any CREM retransmission covering it
//!   arrived (ordinary repairs: no extra RTT);
//! * `retx1` — restored after exactly one CREM retransmission session
//!   covering it arrived (coded retransmission or selective repeat, first
//!   round: one RTT);
//! * `retx2` — restored after two or more (second coded round, Source Copy
//!   fallback);
//! * `rdma` — its first copy was an RDMA retransmission (the fallback);
//! * `undelivered` — never reached the receiver (a failure).
//!
//! Extra latency of a lost packet = its first arrival at the receiver minus
//! the time its first transmission would have reached the CRF.

use std::collections::BTreeMap;

use crem_core::engine::Nanos;
use crem_core::wire::{self, FecScheme, Message};

use crate::hosts::{HostViolations, Via};
use crate::memory::{bdp_octets, store_octets, Memory, SideMemory};
use crate::model::{BlockMap, BlockRetx, World};

/// Recorded while running.
#[derive(Default)]
pub struct Trace {
    pub(crate) violations: Vec<String>,
    pub(crate) violations_more: u64,
    pub(crate) end: Nanos,
    pub(crate) hello_gave_up: bool,
    pub(crate) param_sync_failed: u64,
    pub(crate) established_at: Option<Nanos>,
    pub(crate) csf_not_retained: u64,
    pub(crate) unprotected: u64,
    pub(crate) rdma_retx: u64,
    pub(crate) rto_fired: u64,
    pub(crate) gbn_counterfactual: u64,
    pub(crate) naks_sent: u64,
    pub(crate) configs: Vec<(Nanos, u8, u8)>,
    pub(crate) breaker_trips: u64,
    pub(crate) breaker_closes: u64,
    pub(crate) closes_received: u64,
    pub(crate) param_refused_room: u64,
    /// REPAIR octets by kind: ordinary, coded retransmission, Source Copy,
    /// INFO.
    pub(crate) rep_octets: [u64; 4],
    pub(crate) rep_count: [u64; 4],
    /// Other CREM octets, forward (CSF → CRF) and reverse.
    pub(crate) ctrl_fwd_octets: u64,
    pub(crate) ctrl_rev_octets: u64,
    pub(crate) requests: u64,
    pub(crate) tc_reports: u64,
    pub(crate) blocks: BlockMap,
}

impl Trace {
    pub(crate) fn note_csf_msg(&mut self, _now: Nanos, m: &[u8]) {
        match wire::decode(m) {
            Ok(Message::Repair(r)) => {
                let kind = if r.info {
                    3
                } else if r.scheme == FecScheme::SourceCopy {
                    2
                } else if r.lost.is_some() {
                    1
                } else {
                    0
                };
                self.rep_octets[kind] += m.len() as u64;
                self.rep_count[kind] += 1;
                if kind == 1 || kind == 2 {
                    let b = self.blocks.entry(r.block_start.value()).or_default();
                    b.k = r.k;
                    if kind == 1 {
                        b.retx_symbols += 1;
                    } else {
                        b.source_copies += 1;
                    }
                    if let Some(l) = r.lost {
                        b.max_lost_named = b.max_lost_named.max(l.count());
                    }
                }
            }
            _ => self.ctrl_fwd_octets += m.len() as u64,
        }
    }

    pub(crate) fn note_crf_msg(&mut self, m: &[u8]) {
        self.ctrl_rev_octets += m.len() as u64;
        match wire::decode(m) {
            Ok(Message::RepairRequest(_)) => self.requests += 1,
            Ok(Message::TcAeth(_)) => self.tc_reports += 1,
            _ => {}
        }
    }
}

/// The result of one run.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct Report {
    /// Source packets sent (first transmissions).
    pub sources: u64,
    /// PSN positions covered (sources plus READ response positions).
    pub positions: u32,
    /// Octets of their UDP payloads.
    pub source_octets: u64,
    /// Sources whose first transmission was lost.
    pub lost: u64,
    /// Sources whose first transmission was reordered (held back).
    pub reordered: u64,
    /// Lost sources restored with ordinary repairs only.
    pub rec_fec: u64,
    /// … restored in the first CREM retransmission round.
    pub rec_retx1: u64,
    /// … restored in a later CREM round (second coded round, Source Copy).
    pub rec_retx2: u64,
    /// … first reached the receiver by RDMA retransmission.
    pub rec_rdma: u64,
    /// … never reached the receiver.
    pub undelivered: u64,
    /// Sources not lost whose first copy was nonetheless a restored one.
    pub restored_not_lost: u64,
    /// Held-back originals that reached RDMA besides their restored copy
    /// (after it, or while the CRF held it).
    pub late_originals: u64,
    /// Copies delivered besides the first (RDMA retransmissions etc.).
    pub duplicate_copies: u64,
    /// Mean extra latency of lost sources, ns.
    pub lost_latency_mean_ns: f64,
    /// 99th percentile of it, ns.
    pub lost_latency_p99_ns: u64,
    /// Largest, ns.
    pub lost_latency_max_ns: u64,
    /// Mean extra latency per recovery class (fec, retx1, retx2, rdma), ns.
    pub class_latency_mean_ns: [f64; 4],
    /// Mean delay of sources that were not lost (hold time H), ns.
    pub hold_delay_mean_ns: f64,
    /// REPAIR octets (all kinds).
    pub repair_octets: u64,
    /// … ordinary / coded retransmission / Source Copy / INFO.
    pub repair_octets_by_kind: [u64; 4],
    /// REPAIR messages by kind.
    pub repairs_by_kind: [u64; 4],
    /// repair_octets / source_octets.
    pub overhead: f64,
    /// Other CREM octets (negotiation, requests, reports, T/C AETH).
    pub ctrl_octets: u64,
    /// REPAIR_REQUESTs sent by the CRF.
    pub requests: u64,
    /// T/C AETH reports sent by the CRF.
    pub tc_reports: u64,
    /// LOSS_REPORTs that reached the CSF.
    pub loss_reports: u64,
    /// RDMA retransmissions sent.
    pub rdma_retx: u64,
    /// NAKs sent by the receiver.
    pub naks: u64,
    /// Packets a go-back-N sender would have resent for those NAKs.
    pub gbn_counterfactual: u64,
    /// Sender retransmission timeouts.
    pub rto_fired: u64,
    /// Blocks answered with coded retransmission symbols.
    pub retx_blocks: u64,
    /// … of which with fewer symbols than sources lost in the block.
    pub retx_blocks_fewer: u64,
    /// Coded retransmission symbols sent for them.
    pub retx_symbols: u64,
    /// Sources lost (first transmission) in those blocks.
    pub retx_block_losses: u64,
    /// Source Copy symbols sent.
    pub source_copies: u64,
    /// Configurations applied: (time ns, k, m).
    pub configs: Vec<(u64, u8, u8)>,
    /// Final (k, m).
    pub final_km: Option<(u8, u8)>,
    /// Time-weighted mean m over the run.
    pub mean_m: f64,
    /// Negotiation established at (ns).
    pub established_at: Option<u64>,
    /// Sources passed unprotected by the CSF.
    pub unprotected: u64,
    /// Policy proposals sent, and refusals by reason.
    pub proposals: u64,
    /// Refusals of `propose` by reason.
    pub propose_errors: BTreeMap<String, u64>,
    /// Circuit-breaker trips.
    pub breaker_trips: u64,
    /// CRF configurations released.
    pub crf_configs_released: u64,
    /// PARAM_UPDATEs refused (status 3): no configuration slot in the CRF
    /// engine.
    pub param_refused_room: u64,
    /// Selected engine counters (name, value).
    pub engine: BTreeMap<String, u64>,
    /// Capacity counters that must stay zero but did not.
    pub capacity: Vec<String>,
    /// Contract or correctness violations.
    pub violations: Vec<String>,
    /// Host-side checks.
    pub host: HostViolationsOut,
    /// Simulated time at the end, ns.
    pub end_ns: u64,
    /// The transfer's time, ns: from the first source's nominal arrival (its
    /// first transmission's, lost or not) to the last first arrival of a
    /// source at the RDMA receiver; 0 when nothing arrived. The sender is
    /// paced (`pps`), so this is the sending time plus the recovery of the
    /// last losses (`crem-sim --demo`'s completion time).
    pub completion_ns: u64,
    /// What each side held at most (data and structures), against the
    /// path's bandwidth-delay product ([`crate::memory`]).
    pub memory: Memory,
}

/// Serializable copy of [`HostViolations`].
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct HostViolationsOut(pub BTreeMap<String, u64>);

impl From<HostViolations> for HostViolationsOut {
    fn from(v: HostViolations) -> Self {
        let mut m = BTreeMap::new();
        m.insert("source_slot_reused".into(), v.source_slot_reused);
        m.insert("repair_slot_reused".into(), v.repair_slot_reused);
        m.insert("bogus_release".into(), v.bogus_release);
        m.insert("double_hold".into(), v.double_hold);
        m.insert("icrc_failed".into(), v.icrc_failed);
        HostViolationsOut(m)
    }
}

impl Report {
    /// Lost sources recovered (any way).
    pub fn recovered(&self) -> u64 {
        self.rec_fec + self.rec_retx1 + self.rec_retx2 + self.rec_rdma
    }

    /// Share of `n` among the lost sources.
    pub fn share(&self, n: u64) -> f64 {
        if self.lost == 0 {
            0.0
        } else {
            n as f64 / self.lost as f64
        }
    }

    /// The first thing that went wrong (a violation, a capacity counter, a
    /// host check, undelivered PSNs), or None when [`Report::ok`].
    pub fn problem(&self) -> Option<String> {
        if self.ok() {
            return None;
        }
        Some(
            self.violations
                .first()
                .cloned()
                .or_else(|| self.capacity.first().cloned())
                .or_else(|| {
                    self.host
                        .0
                        .iter()
                        .find(|(_, &v)| v > 0)
                        .map(|(k, v)| format!("host {k} = {v}"))
                })
                .unwrap_or_else(|| format!("{} undelivered", self.undelivered)),
        )
    }

    /// Whether anything went wrong (violations, capacity, undelivered).
    pub fn ok(&self) -> bool {
        self.violations.is_empty()
            && self.capacity.is_empty()
            && self.undelivered == 0
            && self.host.0.values().all(|&v| v == 0)
    }
}

fn percentile(v: &mut [u64], q: f64) -> u64 {
    if v.is_empty() {
        return 0;
    }
    v.sort_unstable();
    let i = ((v.len() - 1) as f64 * q).round() as usize;
    v[i.min(v.len() - 1)]
}

/// The report of a run, and the engine counters it copies (one impl: the
/// run's type carries the engines' capacities).
impl<K: crate::caps::Caps> World<'_, K> {
    pub(crate) fn analyse(&self) -> Report {
        let w = self;
        let tr = &w.tr;
        let mut r = Report {
            sources: w.pkts.len() as u64,
            positions: w.pos_pkt.len() as u32,
            ..Report::default()
        };
        let mut violations = tr.violations.clone();
        let mut lat = Vec::new();
        let mut class_sum = [0f64; 4];
        let mut class_n = [0u64; 4];
        let mut hold_sum = 0f64;
        let mut hold_n = 0u64;
        let (mut first_nominal, mut last_arrival) = (u64::MAX, 0);
        for p in &w.pkts {
            r.source_octets += p.p.bytes.len() as u64;
            r.reordered += p.orig_reordered as u64;
            let copies =
                w.rx.copies
                    .get(p.pos as usize)
                    .map(|v| v.as_slice())
                    .unwrap_or(&[]);
            r.duplicate_copies += copies.len().saturating_sub(1) as u64;
            let crem: Vec<Via> = copies
                .iter()
                .map(|c| c.1)
                .filter(|v| *v != Via::RdmaRetx)
                .collect();
            if crem.len() > 1 {
                // A held-back original may come after its restored copy, or
                // while the restored copy is still held for in-order release
                // (the CRF passes duplicates on): one of each is fine then.
                let late = crem.len() == 2
                    && crem.contains(&Via::Original)
                    && crem.iter().any(|v| matches!(v, Via::Restored { .. }))
                    && p.orig_reordered;
                if late {
                    r.late_originals += 1;
                } else if violations.len() < 50 {
                    violations.push(format!(
                        "PSN {} reached RDMA through CREM {} times: {:?}",
                        p.p.psn.value(),
                        crem.len(),
                        crem
                    ));
                }
            }
            let Some(&(t, via)) = copies.first() else {
                if p.orig_dropped {
                    r.lost += 1;
                }
                r.undelivered += 1;
                if violations.len() < 50 {
                    violations.push(format!("PSN {} never reached RDMA", p.p.psn.value()));
                }
                continue;
            };
            first_nominal = first_nominal.min(p.nominal);
            last_arrival = last_arrival.max(t);
            let extra = t.saturating_sub(p.nominal);
            if !p.orig_dropped {
                if matches!(via, Via::Restored { .. }) {
                    r.restored_not_lost += 1;
                }
                hold_sum += extra as f64;
                hold_n += 1;
                continue;
            }
            r.lost += 1;
            let c = match via {
                Via::Restored { rounds: 0 } => 0,
                Via::Restored { rounds: 1 } => 1,
                Via::Restored { .. } => 2,
                Via::RdmaRetx => 3,
                Via::Original => {
                    violations.push(format!("PSN {}: lost original delivered", p.p.psn.value()));
                    continue;
                }
            };
            match c {
                0 => r.rec_fec += 1,
                1 => r.rec_retx1 += 1,
                2 => r.rec_retx2 += 1,
                _ => r.rec_rdma += 1,
            }
            class_sum[c] += extra as f64;
            class_n[c] += 1;
            lat.push(extra);
        }
        if !lat.is_empty() {
            r.lost_latency_mean_ns = lat.iter().sum::<u64>() as f64 / lat.len() as f64;
            r.lost_latency_max_ns = *lat.iter().max().unwrap_or(&0);
            r.lost_latency_p99_ns = percentile(&mut lat, 0.99);
        }
        for i in 0..4 {
            if class_n[i] > 0 {
                r.class_latency_mean_ns[i] = class_sum[i] / class_n[i] as f64;
            }
        }
        if hold_n > 0 {
            r.hold_delay_mean_ns = hold_sum / hold_n as f64;
        }
        r.repair_octets_by_kind = tr.rep_octets;
        r.repairs_by_kind = tr.rep_count;
        r.repair_octets = tr.rep_octets.iter().sum();
        r.overhead = if r.source_octets > 0 {
            r.repair_octets as f64 / r.source_octets as f64
        } else {
            0.0
        };
        r.ctrl_octets = tr.ctrl_fwd_octets + tr.ctrl_rev_octets;
        r.requests = tr.requests;
        r.tc_reports = tr.tc_reports;
        r.loss_reports = w.snd.counters().loss_reports;
        r.rdma_retx = tr.rdma_retx;
        r.naks = tr.naks_sent;
        r.gbn_counterfactual = tr.gbn_counterfactual;
        r.rto_fired = tr.rto_fired;
        // Coded retransmission against the ground-truth losses of each block.
        for (&start, b) in &tr.blocks {
            let BlockRetx {
                k,
                retx_symbols,
                source_copies,
                ..
            } = *b;
            r.source_copies += source_copies as u64;
            if retx_symbols == 0 {
                continue;
            }
            let s = w.first.forward_distance(crem_core::psn::Psn::new(start));
            let mut lost = 0u64;
            for pos in s..s + k as u32 {
                if let Some(&i) = w.pos_pkt.get(pos as usize) {
                    if i != u32::MAX && w.pkts[i as usize].orig_dropped {
                        lost += 1;
                    }
                }
            }
            r.retx_blocks += 1;
            r.retx_symbols += retx_symbols as u64;
            r.retx_block_losses += lost;
            if (retx_symbols as u64) < lost {
                r.retx_blocks_fewer += 1;
            }
        }
        r.configs = tr.configs.clone();
        r.final_km = tr.configs.last().map(|&(_, k, m)| (k, m));
        if let (Some(&(t0, _, _)), true) = (tr.configs.first(), tr.end > 0) {
            let mut acc = 0f64;
            for (i, &(t, _, m)) in tr.configs.iter().enumerate() {
                let until = tr.configs.get(i + 1).map_or(tr.end, |c| c.0);
                acc += m as f64 * until.saturating_sub(t) as f64;
            }
            let span = tr.end.saturating_sub(t0).max(1) as f64;
            r.mean_m = acc / span;
        }
        r.established_at = tr.established_at;
        r.unprotected = tr.unprotected;
        let sc = w.snd.counters();
        r.proposals = sc.proposals;
        for (n, v) in [
            ("Busy", sc.propose_busy),
            ("Unchanged", sc.propose_unchanged),
            ("OutsideLimits", sc.propose_outside_limits),
            ("NoConfigSlot", sc.propose_no_slot),
            ("NotEstablished", sc.propose_not_established),
        ] {
            if v > 0 {
                r.propose_errors.insert(n.to_string(), v);
            }
        }
        r.breaker_trips = tr.breaker_trips;
        r.crf_configs_released = w.rcv.counters().configs_released;
        r.param_refused_room = tr.param_refused_room;
        if tr.hello_gave_up {
            violations.push("HELLO gave up".into());
        }
        if tr.param_sync_failed > 0 {
            violations.push(format!("{} PARAM_UPDATE give-ups", tr.param_sync_failed));
        }
        if tr.violations_more > 0 {
            violations.push(format!("… and {} more violations", tr.violations_more));
        }
        r.violations = violations;
        w.engine_counters(&mut r);
        r.host = w.host.v.into();
        r.end_ns = tr.end;
        r.completion_ns = last_arrival.saturating_sub(first_nominal);
        r.memory = w.memory();
        r
    }

    /// Each side's peak data and structures ([`crate::memory`]).
    fn memory(&self) -> Memory {
        let w = self;
        let bdp = bdp_octets(w.cfg.link_bps, w.cfg.rtt);
        let (csf_engine, crf_engine) = K::engine_octets(w.cfg);
        let ring = crate::model::module_ring(w.cfg) as usize;
        let caps = K::crf_caps(w.cfg);
        let d = w.host.mem;
        Memory {
            bdp_octets: bdp,
            csf: SideMemory::new(
                w.snd.csf_counters().retention_octets_max,
                csf_engine as u64,
                store_octets(true, ring, &caps),
                bdp,
            ),
            crf: SideMemory::new(
                d.total_max,
                crf_engine as u64,
                store_octets(false, ring, &caps),
                bdp,
            ),
            crf_sources_max: d.sources_max,
            crf_repairs_max: d.repairs_max,
            crf_held_max: d.held_max,
        }
    }

    /// Copies the engine counters of interest and flags capacity counters that
    /// must stay zero with the simulation's sizes.
    fn engine_counters(&self, r: &mut Report) {
        let w = self;
        let c = w.snd.csf_counters();
        let d = &c.drops;
        let f = w.rcv.crf_counters();
        let mut e = BTreeMap::new();
        let mut put = |n: &str, v: u64| {
            e.insert(n.to_string(), v);
        };
        put("csf.sources", c.sources);
        put("csf.retransmitted_sources", c.retransmitted_sources);
        put("csf.unprotected_sources", c.unprotected_sources);
        put("csf.blocks_opened", c.blocks_opened);
        put("csf.blocks_closed_k", c.blocks_closed_k);
        put("csf.blocks_closed_idle", c.blocks_closed_idle);
        put("csf.blocks_closed_early", c.blocks_closed_early);
        put("csf.blocks_acked", c.blocks_acked);
        put("csf.blocks_given_up", c.blocks_given_up);
        put("csf.released_quiet", c.released_quiet);
        put("csf.requests_released", c.requests_released);
        put("csf.repairs_ordinary", c.repairs_ordinary);
        put("csf.repairs_retx", c.repairs_retx);
        put("csf.repairs_source_copy", c.repairs_source_copy);
        put("csf.repairs_info", c.repairs_info);
        put("csf.repair_octets", c.repair_octets);
        put("csf.requests_block", c.requests_block);
        put("csf.requests_ranges", c.requests_ranges);
        put("csf.requests_fallback", c.requests_fallback);
        put("csf.requests_rate_limited", c.requests_rate_limited);
        put("csf.requests_unknown_block", c.requests_unknown_block);
        put("csf.requests_bad", c.requests_bad);
        put("csf.retx_indices_exhausted", c.retx_indices_exhausted);
        put("csf.range_psns_unknown", c.range_psns_unknown);
        put("csf.tc_reports", c.tc_reports);
        put("csf.tc_lost_psns", c.tc_lost_psns);
        put("csf.tc_guarded_psns", c.tc_guarded_psns);
        put("csf.tc_deduped_psns", c.tc_deduped_psns);
        put("csf.tc_unknown_psns", c.tc_unknown_psns);
        put("csf.tc_ack_timeouts", c.tc_ack_timeouts);
        put("csf.retention_octets_max", c.retention_octets_max);
        put("csf.drops.repair_rate_limited", d.repair_rate_limited);
        put("csf.drops.repair_cancelled_acked", d.repair_cancelled_acked);
        put("csf.drops.retx_budget_limited", d.retx_budget_limited);
        put("csf.drops.retx_budget_symbols", d.retx_budget_symbols);
        put("crf.sources", f.sources);
        put("crf.sources_duplicate", f.sources_duplicate);
        put("crf.sources_stale", f.sources_stale);
        put("crf.sources_after_giveup", f.sources_after_giveup);
        put("crf.read_absent", f.read_absent);
        put("crf.bitmap_absent", f.bitmap_absent);
        put("crf.repairs", f.repairs);
        put("crf.drop_unknown_config", f.drop_unknown_config);
        put("crf.drop_mismatch", f.drop_mismatch);
        put("crf.drop_stale", f.drop_stale);
        put("crf.drop_out_of_window", f.drop_out_of_window);
        put("crf.drop_inconsistent", f.drop_inconsistent);
        put("crf.drop_duplicate", f.drop_duplicate);
        put("crf.drop_unneeded", f.drop_unneeded);
        put("crf.restored", f.restored);
        put("crf.restored_late", f.restored_late);
        put("crf.decodes", f.decodes);
        put("crf.blocks_learned", f.blocks_learned);
        put("crf.blocks_completed", f.blocks_completed);
        put("crf.blocks_incomplete", f.blocks_incomplete);
        put("crf.blocks_fell_back", f.blocks_fell_back);
        put("crf.blocks_released", f.blocks_released);
        put("crf.psns_abandoned", f.psns_abandoned);
        put("crf.requests_block", f.requests_block);
        put("crf.requests_ranges", f.requests_ranges);
        put("crf.requests_fallback", f.requests_fallback);
        put("crf.held", f.held);
        put("crf.released_in_order", f.released_in_order);
        put("crf.released_by_h", f.released_by_h);
        put("crf.released_forced", f.released_forced);
        put("crf.loss_reports", f.loss_reports);
        put("crf.tc_reports", f.tc_reports);
        put("crf.tc_segments_omitted", f.tc_segments_omitted);
        let cn = w.snd.negotiation_counters();
        put("neg.csf.hello_retransmits", cn.hello_retransmits);
        put(
            "neg.csf.param_update_retransmits",
            cn.param_update_retransmits,
        );
        put(
            "neg.csf.param_update_psn_resends",
            cn.param_update_psn_resends,
        );
        put("neg.csf.config_switches", cn.config_switches);
        put("neg.csf.configs_released", cn.configs_released);
        put(
            "neg.csf.block_accounting_errors",
            cn.block_accounting_errors,
        );
        let rn = w.rcv.negotiation_counters();
        put("neg.crf.configs_released", rn.configs_released);
        put(
            "neg.crf.block_accounting_errors",
            rn.block_accounting_errors,
        );
        put(
            "neg.crf.param_rejected_resources",
            rn.param_rejected_resources,
        );
        let p = w.snd.policy_counters();
        put("policy.decisions", p.decisions);
        put("policy.changes", p.changes);
        put("policy.suppressed", p.suppressed);
        put("policy.repair_path_signals", p.repair_path_signals);
        put("policy.after_round", p.after_round);
        put("policy.repair_reduced", p.repair_reduced);
        put("policy.loss_ppb_final", w.snd.loss_ppb());
        r.engine = e;

        // The engines' own counts must match what the simulation saw.
        let restored_copies =
            w.rx.copies
                .iter()
                .flatten()
                .filter(|c| matches!(c.1, Via::Restored { .. }))
                .count() as u64;
        let tr = &w.tr;
        let pairs: [(&str, u64, u64); 6] = [
            (
                "crf.restored vs restored copies delivered",
                f.restored,
                restored_copies,
            ),
            // (No path reports here: no proactive answers, which would be
            // RETX or Source Copy messages.)
            (
                "csf.repairs_ordinary vs ordinary REPAIRs sent",
                c.repairs_ordinary,
                tr.rep_count[0],
            ),
            (
                "csf.repairs_retx vs RETX REPAIRs sent",
                c.repairs_retx,
                tr.rep_count[1],
            ),
            (
                "csf.repairs_source_copy vs Source Copy REPAIRs sent",
                c.repairs_source_copy,
                tr.rep_count[2],
            ),
            (
                "csf.repairs_info vs INFO REPAIRs sent",
                c.repairs_info,
                tr.rep_count[3],
            ),
            (
                "csf.repair_octets vs REPAIR octets sent",
                c.repair_octets,
                tr.rep_octets.iter().sum(),
            ),
        ];
        for (what, a, b) in pairs {
            if a != b {
                r.violations
                    .push(format!("counter mismatch: {what}: {a} != {b}"));
            }
        }

        // Capacities: with the simulation's sizes none of these may move.
        let must_be_zero: [(&str, u64); 24] = [
            ("csf.drops.not_retained", d.not_retained),
            ("csf.drops.oversize_payload", d.oversize_payload),
            ("csf.drops.late_source", d.late_source),
            ("csf.drops.m_capped", d.m_capped),
            ("csf.drops.scratch_too_small", d.scratch_too_small),
            ("csf.drops.encode_error", d.encode_error),
            ("csf.drops.source_missing", d.source_missing),
            ("csf.drops.unparsable", d.unparsable),
            ("csf.given_up_ring", c.given_up_ring),
            ("csf.given_up_budget", c.given_up_budget),
            ("csf.requests_released", c.requests_released),
            ("csf.config_rejected", c.config_rejected),
            ("crf.blocks_evicted", f.blocks_evicted),
            ("crf.drop_repair_capacity", f.drop_repair_capacity),
            ("crf.drop_store_full", f.drop_store_full),
            ("crf.store_refused", f.store_refused),
            ("crf.hold_full", f.hold_full),
            ("crf.decode_fail_buffer", f.decode_fail_buffer),
            ("crf.decode_fail_source", f.decode_fail_source),
            ("crf.decode_fail_codec", f.decode_fail_codec),
            ("crf.psns_lost_window", f.psns_lost_window),
            ("crf.icrc_failures", f.icrc_failures),
            ("crf.restore_malformed", f.restore_malformed),
            ("crf.configs_refused", f.configs_refused),
        ];
        for (n, v) in must_be_zero {
            if v != 0 {
                r.capacity.push(format!("{n} = {v}"));
            }
        }
        if c.retention_octets_max > w.cfg.retention_budget {
            r.capacity.push(format!(
                "csf.retention_octets_max = {}",
                c.retention_octets_max
            ));
        }
        if f.drop_wrong_flow != 0 {
            r.capacity
                .push(format!("crf.drop_wrong_flow = {}", f.drop_wrong_flow));
        }
    }
}
