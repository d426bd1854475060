//! `crem-sim --demo`: simulated cells written as `make demo`'s results JSON
//! (vm/demo.py's schema, the fields vm/plot.py draws), with
//! `"simulation": true` so the figure says so, for rates and losses the
//! VMs cannot reach.
//!
//! A cell is one mode at one loss and RTT, run once per seed (the demo's
//! trials). What a trial measures is [`Report::completion_ns`]: the paced
//! sender's sending time plus the recovery of the last losses, and goodput
//! is the flow's RoCEv2 octets over it. A trial completes when every PSN
//! reached the RDMA receiver. The RDMA model resends the NAKed PSNs only
//! (the go-back-N resends are counted, not sent): "off" is kinder to RDMA
//! than rxe is.

use serde_json::{json, Value};

use crate::Report;

/// The test name of every simulated run (one flow, no ib_write_bw or rping).
pub const TEST: &str = "sim";

/// The modes, as vm/demo.py names them.
pub const MODES: [&str; 3] = ["off", "fixed", "adaptive"];

/// The cells (mode, loss %, RTT ms) in vm/demo.py's order: per RTT the
/// loss-free "off" reference first, then every mode at every loss (off at 0
/// only once).
pub fn sweep(rtts: &[f64], losses: &[f64]) -> Vec<(&'static str, f64, f64)> {
    let mut out = Vec::new();
    for &rtt in rtts {
        out.push(("off", 0.0, rtt));
        for &loss in losses {
            for m in MODES {
                if !(m == "off" && loss == 0.0) {
                    out.push((m, loss, rtt));
                }
            }
        }
    }
    out
}

fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

/// A trial (seed) as the demo's `trial_results` entry: completed when every
/// PSN arrived; its seconds and Mbit/s then; "ok" false with the first
/// "problem" when the run broke a check (a capacity counter, a violation).
pub fn trial(i: u32, r: &Result<Report, String>) -> Value {
    let mut t = trial_result(i, r);
    if let Some(p) = r.as_ref().ok().and_then(Report::problem) {
        t["problem"] = json!(p);
    }
    t
}

fn trial_result(i: u32, r: &Result<Report, String>) -> Value {
    match r {
        Ok(r) if r.undelivered == 0 && r.completion_ns > 0 => {
            let s = r.completion_ns as f64 / 1e9;
            json!({"trial": i, "completed": true, "seconds": round3(s),
                   "mbps": round3(r.source_octets as f64 * 8.0 / s / 1e6), "ok": r.ok()})
        }
        Ok(r) => json!({"trial": i, "completed": false, "seconds": null, "mbps": 0.0,
                        "ok": r.ok(), "undelivered": r.undelivered}),
        Err(e) => json!({"trial": i, "completed": false, "seconds": null, "mbps": 0.0,
                         "ok": false, "panic": e}),
    }
}

fn median(mut v: Vec<f64>) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    Some(round3(if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }))
}

/// What a cell's settings were, for its run object.
pub struct CellInfo {
    pub mode: &'static str,
    pub loss_pct: f64,
    pub rtt_ms: f64,
    pub link_mbit: u64,
    pub k: u8,
    pub m: u8,
}

/// One cell's run object from its trials' reports, as vm/demo.py's
/// `read_cell` makes one per test: medians over the completed trials
/// (goodput 0.0 and no completion time when none completed), and the
/// simulation's own figures summed over the trials under `"sim"`.
pub fn run(c: &CellInfo, reports: &[Result<Report, String>]) -> Value {
    let trials: Vec<Value> = (1..).zip(reports).map(|(i, r)| trial(i, r)).collect();
    let done: Vec<&Value> = trials.iter().filter(|t| t["completed"] == true).collect();
    let num = |t: &Value, k: &str| t[k].as_f64().unwrap_or(0.0);
    let ok: Vec<&Report> = reports.iter().filter_map(|r| r.as_ref().ok()).collect();
    let sum = |f: fn(&Report) -> u64| ok.iter().map(|r| f(r)).sum::<u64>();
    let crem = c.mode != "off";
    let mut run = json!({
        "mode": c.mode, "test": TEST, "loss_pct": c.loss_pct, "rtt_ms": c.rtt_ms,
        "rate_mbit": c.link_mbit,
        "bytes": ok.first().map(|r| r.source_octets),
        "goodput_mbps": median(done.iter().map(|t| num(t, "mbps")).collect()).unwrap_or(0.0),
        "goodput_vs_lossfree": null,
        "completion_s": median(done.iter().map(|t| num(t, "seconds")).collect()),
        "completed": done.len(), "trials": reports.len(),
        "not_completed": reports.len() - done.len(),
        "lost_packets": sum(|r| r.lost),
        "restored": if crem { json!(sum(|r| r.rec_fec + r.rec_retx1 + r.rec_retx2)) } else { Value::Null },
        "coded_retx_symbols": if crem { json!(sum(|r| r.retx_symbols)) } else { Value::Null },
        "repair_overhead": if crem {
            json!(round3(sum(|r| r.repair_octets) as f64 / sum(|r| r.source_octets).max(1) as f64))
        } else { Value::Null },
        "trial_results": trials,
        "sim": {
            "rdma_resent_first": sum(|r| r.rec_rdma),
            "gbn_would_resend": sum(|r| r.gbn_counterfactual),
            "lost_latency_mean_ms": median(ok.iter().map(|r| r.lost_latency_mean_ns / 1e6).collect()),
            "ok": ok.len() == reports.len() && ok.iter().all(|r| r.ok()),
        },
    });
    if crem {
        run["k"] = json!(c.k);
        run["m"] = if c.mode == "fixed" {
            json!(c.m)
        } else {
            Value::Null
        };
    }
    run
}

/// Goodput against the loss-free "off" cell of the same RTT, as
/// vm/demo.py's `finish` sets it.
pub fn finish(runs: &mut [Value]) {
    let refs: Vec<(f64, f64)> = runs
        .iter()
        .filter(|r| r["mode"] == "off" && r["loss_pct"].as_f64() == Some(0.0))
        .filter_map(|r| Some((r["rtt_ms"].as_f64()?, r["goodput_mbps"].as_f64()?)))
        .collect();
    for r in runs.iter_mut() {
        let base = refs
            .iter()
            .find(|(rtt, _)| r["rtt_ms"].as_f64() == Some(*rtt))
            .map(|x| x.1);
        if let (Some(b), Some(g)) = (base, r["goodput_mbps"].as_f64()) {
            if b > 0.0 {
                r["goodput_vs_lossfree"] = json!(round3(g / b));
            }
        }
    }
}

/// The whole document: vm/demo.py's top level, `"simulation": true`,
/// `params` (what vm/plot.py's title reads, and the model's settings) and
/// `runs`.
pub fn document(created_utc: &str, commit: Option<&str>, params: Value, runs: Vec<Value>) -> Value {
    json!({
        "created_utc": created_utc, "git_commit": commit,
        "emulation": "crem-sim", "simulation": true,
        "params": params,
        "notes": {
            "simulation": "crem-sim: crem-core's CSF and CRF engines over a simulated lossy \
                path, not a measurement; each trial is one seed",
            "completion_s": "from the first source's nominal arrival to the last source's \
                first arrival at the RDMA receiver; the sender is paced (params.pps), so \
                goodput is capped by the pace and falls only with the recovery of the last \
                losses",
            "off": "no CREM: the RDMA model resends only the NAKed PSNs (sim.gbn_would_resend \
                counts what go-back-N would have resent), kinder than rxe",
        },
        "runs": runs,
    })
}

/// `SECS` since the epoch as the demo's timestamp, 20261202T183000Z.
pub fn utc_stamp(secs: u64) -> String {
    // Howard Hinnant's civil_from_days.
    let z = (secs / 86_400) as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    let t = secs % 86_400;
    format!(
        "{y:04}{m:02}{d:02}T{:02}{:02}{:02}Z",
        t / 3600,
        t / 60 % 60,
        t % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(octets: u64, completion_ms: u64, lost: u64, undelivered: u64) -> Report {
        Report {
            source_octets: octets,
            completion_ns: completion_ms * 1_000_000,
            lost,
            rec_fec: lost,
            undelivered,
            repair_octets: octets / 8,
            ..Report::default()
        }
    }

    fn cell(mode: &'static str) -> CellInfo {
        CellInfo {
            mode,
            loss_pct: 1.0,
            rtt_ms: 10.0,
            link_mbit: 1000,
            k: 16,
            m: 2,
        }
    }

    #[test]
    fn sweep_is_the_demos_order() {
        assert_eq!(
            sweep(&[10.0], &[0.0, 1.0]),
            vec![
                ("off", 0.0, 10.0),
                ("fixed", 0.0, 10.0),
                ("adaptive", 0.0, 10.0),
                ("off", 1.0, 10.0),
                ("fixed", 1.0, 10.0),
                ("adaptive", 1.0, 10.0)
            ]
        );
        assert_eq!(sweep(&[10.0, 50.0], &[5.0]).len(), 2 * 4);
    }

    #[test]
    fn trial_completed_or_not() {
        // 1 250 000 octets in 100 ms: 100 Mbit/s.
        assert_eq!(
            trial(1, &Ok(report(1_250_000, 100, 3, 0))),
            json!({"trial": 1, "completed": true, "seconds": 0.1, "mbps": 100.0, "ok": true})
        );
        assert_eq!(
            trial(2, &Ok(report(1_250_000, 100, 3, 2))),
            json!({"trial": 2, "completed": false, "seconds": null, "mbps": 0.0,
                   "ok": false, "undelivered": 2, "problem": "2 undelivered"})
        );
        let mut full = report(1_250_000, 100, 3, 0);
        full.capacity.push("csf.given_up_ring = 139".into());
        let t = trial(4, &Ok(full));
        assert_eq!((&t["completed"], &t["ok"]), (&json!(true), &json!(false)));
        assert_eq!(t["problem"], "csf.given_up_ring = 139");
        assert_eq!(trial(3, &Err("boom".into()))["panic"], "boom");
    }

    #[test]
    fn run_medians_over_completed_trials() {
        let reps = vec![
            Ok(report(1_250_000, 100, 3, 0)), // 100 Mbit/s, 0.1 s
            Ok(report(1_250_000, 200, 5, 0)), // 50 Mbit/s, 0.2 s
            Ok(report(1_250_000, 50, 9, 1)),  // not completed
        ];
        let r = run(&cell("fixed"), &reps);
        assert_eq!(r["test"], "sim");
        assert_eq!(
            (r["completed"].as_u64(), r["trials"].as_u64()),
            (Some(2), Some(3))
        );
        assert_eq!(r["not_completed"], 1);
        assert_eq!(r["goodput_mbps"], 75.0);
        assert_eq!(r["completion_s"], 0.15);
        assert_eq!(r["lost_packets"], 17);
        assert_eq!(r["restored"], 17);
        assert_eq!(r["repair_overhead"], 0.125);
        assert_eq!((r["k"].as_u64(), r["m"].as_u64()), (Some(16), Some(2)));
        assert_eq!(r["trial_results"].as_array().map(Vec::len), Some(3));
        assert_eq!(r["sim"]["ok"], false);

        let off = run(&cell("off"), &reps[..1]);
        assert_eq!(off["restored"], Value::Null);
        assert!(off.get("k").is_none());
        assert_eq!(off["sim"]["ok"], true);

        let none = run(&cell("adaptive"), &reps[2..]);
        assert_eq!(
            (none["goodput_mbps"].as_f64(), none["completion_s"].as_f64()),
            (Some(0.0), None)
        );
        assert_eq!(none["m"], Value::Null); // adaptive: the policy's
    }

    #[test]
    fn finish_against_the_loss_free_off_cell() {
        let mut off0 = cell("off");
        off0.loss_pct = 0.0;
        let mut runs = vec![
            run(&off0, &[Ok(report(1_250_000, 100, 0, 0))]),
            run(&cell("fixed"), &[Ok(report(1_250_000, 125, 3, 0))]),
        ];
        finish(&mut runs);
        assert_eq!(runs[0]["goodput_vs_lossfree"], 1.0);
        assert_eq!(runs[1]["goodput_vs_lossfree"], 0.8);
    }

    #[test]
    fn document_is_labelled_simulation() {
        let d = document("20261202T183000Z", None, json!({"trials": 2}), vec![]);
        assert_eq!(d["simulation"], true);
        assert_eq!(d["emulation"], "crem-sim");
        assert_eq!(d["git_commit"], Value::Null);
        assert!(d["runs"].as_array().is_some_and(Vec::is_empty));
    }

    #[test]
    fn utc_stamps() {
        assert_eq!(utc_stamp(0), "19700101T000000Z");
        assert_eq!(utc_stamp(951_782_400), "20000229T000000Z");
        assert_eq!(utc_stamp(1_796_236_200), "20261202T183000Z");
    }
}
