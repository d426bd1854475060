//! `crem-sim`: runs the CREM simulation over a grid of path and protocol
//! settings and prints one line (or JSON object) per cell.

use std::io::Write;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

use clap::parser::ValueSource;
use clap::{ArgMatches, CommandFactory, FromArgMatches, Parser, ValueEnum};
use crem_core::engine::MS;
use crem_sim::{demo, run, LossModel, RdmaModel, Recovery, Report, SimConfig, TrafficModel};

const LONG_ABOUT: &str = "\
Runs crem-core's CSF and CRF engines, unchanged, in a deterministic \
discrete-event simulation of one protected RoCEv2 flow, over a grid of path \
and protocol settings, and prints what CREM achieved in each cell.

THE MODEL
  An RDMA sender emits real RoCEv2 packets (BTH, RETH, payload, ICRC; RDMA \
WRITEs of up to 16 packets, small SENDs, and READ requests whose response \
PSNs are absent positions) at --pps packets per second, with occasional \
pauses. The CSF sees every packet, forms blocks and sends REPAIRs. A forward \
and a reverse link (each a FIFO bottleneck of --link-mbps, RTT/2 propagation \
delay, random or Gilbert-Elliott burst loss, optional reordering, optional \
extra loss of CREM messages) carry data, REPAIRs and control. The CRF restores \
what it can; restored packets are ICRC-checked and compared byte for byte with \
what was sent. An RDMA receiver records every copy of every PSN and returns \
cumulative ACKs (real AETH packets the CSF uses to release retention).

  Negotiation is the real HELLO/HELLO_ACK and PARAM_UPDATE/PARAM_ACK exchange \
over the links. With the policy on, LOSS_REPORTs drive the redundancy policy \
(EWMA loss estimate, at least 1 % until 1024 packets were counted, smallest m \
meeting epsilon = 1e-4, hysteresis, circuit breaker) and its decisions are negotiated; \
off, the fixed (k, m) of --m is used throughout.

  Recovery modes: coded (REPAIR_REQUEST: two coded rounds, then Source Copy), \
sr (selective repeat: windowless T/C AETH reports answered with Source Copy), \
both, and off (no CREM: the RDMA fallback alone, as a baseline).

  RDMA's own recovery is the fallback: once the CRF lets a gap through (hold \
time H expired or CREM gave up), the receiver NAKs the missing PSNs after the \
NAK delay and the sender resends them (a selective model; what go-back-N would \
have resent is counted as GBN). --rdma slow NAKs 4 RTT + 20 ms after a gap \
shows, so that CREM's own rounds are measured; --rdma prompt NAKs at once, as \
rxe and RoCE NICs do, so RDMA races CREM for every loss the ordinary repairs \
did not fix within H.

COLUMNS
  loss%, burst   forward loss rate and mean burst length (1 = independent)
  rtt            round-trip time, ms
  k, pol, mode   block size, policy (on/off), recovery mode, RDMA model
  m              final m (policy: time-weighted mean m in parentheses)
  ovh%           repair octets / source octets (ordinary, coded, Source Copy)
  lost           source packets whose first transmission was lost
  fec%           ... restored before any CREM retransmission covering it
                 arrived: by ordinary repairs, no extra RTT (with --rdma
                 prompt also decodes completed by RDMA-resent sources)
  1rtt%          ... restored in the first CREM retransmission round
  later%         ... restored in a later CREM round (2nd coded, Source Copy)
  rdma%          ... first delivered by the RDMA fallback
  lat            mean extra latency per lost packet, ms (and in RTTs)
  M/X            coded retransmission symbols / losses in those blocks
  gbn            packets a go-back-N sender would have resent
  ok             every PSN delivered byte-exact, no capacity or contract
                 violation (else the first problem is printed below the table)

Percentages are of lost packets. Each cell uses the same seed, so cells that \
share a path see the same losses of original packets.";

const EXAMPLES: &str = "\
EXIT STATUS
  0 when every cell is ok, 1 when a cell reports a problem (or an engine \
panicked), 2 on a usage error.

EXAMPLES
  crem-sim                                  the default grid (120 cells, ~30 s)
  crem-sim --loss 1 --burst 1 --rtt 10 --k 32 --policy on --mode coded,sr
  crem-sim --rtt 50 --rdma prompt,slow --mode coded
  crem-sim -j --loss 5 --burst 8 > cells.json
  crem-sim --jobs 2 --packets 50000          longer runs, two threads
  crem-sim --demo sim.json --rtt 10,50 && vm/plot.py sim.json
                                            make demo's figure, from simulation";

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Pol {
    Off,
    On,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Mode {
    Coded,
    Sr,
    Both,
    Off,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum EngineArg {
    Sim,
    Module,
    ModuleRuntime,
}

impl EngineArg {
    fn engine(self) -> crem_sim::model::Engine {
        match self {
            EngineArg::Sim => crem_sim::model::Engine::Sim,
            EngineArg::Module => crem_sim::model::Engine::Module,
            EngineArg::ModuleRuntime => crem_sim::model::Engine::ModuleRuntime,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum TrafficArg {
    /// Mostly multi-packet WRITEs, a few SENDs and READs, occasional pauses.
    Mixed,
    /// WRITEs only (requests), no pauses: a bulk transfer.
    Writes,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Rdma {
    Slow,
    Prompt,
}

#[derive(Parser, Debug)]
#[command(
    name = "crem-sim",
    version,
    about = "Simulate CREM (crem-core's CSF and CRF) over a grid of lossy paths",
    long_about = LONG_ABOUT,
    after_long_help = EXAMPLES
)]
struct Args {
    /// Forward loss rates, percent (comma-separated).
    #[arg(long, value_delimiter = ',', default_value = "0,1,5")]
    loss: Vec<f64>,
    /// Mean burst lengths in packets; 1 = independent losses, more =
    /// Gilbert-Elliott bursts. Ignored for loss 0.
    #[arg(long, value_delimiter = ',', default_value = "1,8")]
    burst: Vec<f64>,
    /// Round-trip times, ms.
    #[arg(long, value_delimiter = ',', default_value = "1,10,50")]
    rtt: Vec<f64>,
    /// Block sizes k.
    #[arg(long, value_delimiter = ',', default_value = "16,64")]
    k: Vec<u8>,
    /// Redundancy policy off (fixed m) and/or on (adaptive).
    #[arg(long, value_delimiter = ',', default_value = "off,on")]
    policy: Vec<Pol>,
    /// Recovery modes: coded retransmission, selective repeat (T/C AETH),
    /// both, or no CREM at all.
    #[arg(long, value_delimiter = ',', default_value = "coded,sr")]
    mode: Vec<Mode>,
    /// RDMA fallback: slow (NAK 4 RTT + 20 ms after a gap shows) or prompt
    /// (NAK at once, like rxe).
    #[arg(long, value_delimiter = ',', default_value = "slow")]
    rdma: Vec<Rdma>,
    /// Ordinary repairs per block with the policy off; "auto" = k/8.
    #[arg(long, default_value = "auto")]
    m: String,
    /// Source packets per cell.
    #[arg(long, default_value_t = 20_000)]
    packets: u32,
    /// Source packet rate, packets per second.
    #[arg(long, default_value_t = 20_000)]
    pps: u64,
    /// Bottleneck rate of each direction, Mbit/s.
    #[arg(long, default_value_t = 1000)]
    link_mbps: u64,
    /// Probability that a forward packet is reordered (held back).
    #[arg(long, default_value_t = 0.0)]
    reorder: f64,
    /// Largest extra delay of a reordered packet, ms.
    #[arg(long, default_value_t = 0.5)]
    reorder_ms: f64,
    /// Reverse-path loss rate, percent (ACKs and CRF messages).
    #[arg(long, default_value_t = 0.0)]
    rev_loss: f64,
    /// Extra loss of CREM messages (both directions), percent.
    #[arg(long, default_value_t = 0.0)]
    crem_loss: f64,
    /// The CRF's hold time H, ms, as an operator sets it (the reordering
    /// allowance is then crem.ko's, a quarter RTT within H; 0: no hold); by
    /// default the RECOMMENDED H and an allowance of H: a block's time at
    /// --pps, at most a quarter RTT (`make demo` sets 30 ms on its 10 ms
    /// path).
    #[arg(long)]
    hold_ms: Option<f64>,
    /// The CSF spreads each block's ordinary repairs over the following
    /// sources (one per source) instead of sending them back to back when
    /// the block closes, so that a burst at the end of a block spares them.
    #[arg(long)]
    spread: bool,
    /// Engine capacities: the simulation's own (a CSF retains 1024 blocks,
    /// a CRF holds 512 open: enough for the rates and RTTs it runs) or
    /// crem.ko's (crem_core::engine::module_caps: 64 and 32), to see what
    /// the module's flows can hold at a rate and RTT; module-runtime: the
    /// module's sized for --max-bdp packets in flight, as crem.ko sizes
    /// each flow from its netns's max-bdp (at the default, the same
    /// results as module).
    #[arg(long, value_enum, default_value_t = EngineArg::Sim)]
    engine: EngineArg,
    /// With --engine module-runtime: packets in flight the flow is sized
    /// for (crem.ko's max-bdp, 64 to 524288): e.g. 6104 for 10 Gbit/s x
    /// 20 ms at RDMA MTU 4096.
    #[arg(long, default_value_t = crem_core::engine::module_caps::MAX_BDP_DEFAULT)]
    max_bdp: u32,
    /// RDMA MTU: payload octets per packet (256 to 4096).
    #[arg(long, default_value_t = TrafficModel::DEFAULT.mtu,
          value_parser = clap::value_parser!(u32).range(256..=4096))]
    mtu: u32,
    /// Traffic: mixed (WRITEs of 1 to 16 packets, SENDs, READ requests,
    /// pauses) or writes (WRITEs of 1 to 16 packets back to back).
    #[arg(long, value_enum, default_value_t = TrafficArg::Mixed)]
    traffic: TrafficArg,
    /// Octets the CSF may retain, MiB (beyond, it gives blocks up: a
    /// capacity problem). A flow of a large bandwidth-delay product needs
    /// more than the default.
    #[arg(long, default_value_t = crem_sim::model::RETENTION_BUDGET >> 20)]
    retention_budget_mib: u64,
    /// Seed of every random stream.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Cells run in parallel.
    #[arg(long, default_value_t = 1)]
    jobs: usize,
    /// JSON output: an array with one object per cell (settings and the
    /// full report, engine counters included).
    #[arg(short = 'j', long)]
    json: bool,
    /// No progress on stderr.
    #[arg(short, long)]
    quiet: bool,
    /// Write make demo's results JSON (vm/demo.py's schema, marked
    /// "simulation": true) for vm/plot.py to draw: the modes off (no CREM),
    /// fixed (coded recovery, --m) and adaptive (the policy) at every --loss
    /// (default 0,0.1,0.5,1,2,5) and --rtt (default 10), plus the loss-free
    /// off reference, each run --trials times (seeds --seed, --seed + 1,
    /// ...). One --k (default 16), --burst (default 1) and --rdma (default
    /// prompt, as rxe) each; --policy and --mode do not apply. Goodput and
    /// completion time are those of the paced flow: the sending time plus
    /// the recovery of the last losses (see the JSON's notes).
    #[arg(long, value_name = "FILE")]
    demo: Option<std::path::PathBuf>,
    /// Trials (seeds) per cell with --demo.
    #[arg(long, default_value_t = 3, requires = "demo", value_parser = clap::value_parser!(u32).range(1..))]
    trials: u32,
}

#[derive(Clone, Debug, serde::Serialize)]
struct Cell {
    loss_pct: f64,
    burst: f64,
    rtt_ms: f64,
    k: u8,
    policy: bool,
    mode: &'static str,
    rdma: &'static str,
    m_fixed: u8,
}

/// One run's settings: the path and protocol of a cell, the rest from the
/// options.
#[allow(clippy::too_many_arguments)]
fn sim_config(
    a: &Args,
    loss: f64,
    burst: f64,
    rtt: f64,
    k: u8,
    m: u8,
    policy: bool,
    mode: Mode,
    rd: Rdma,
    seed: u64,
) -> SimConfig {
    let rtt_ns = (rtt * MS as f64) as u64;
    let mut c = SimConfig::new(seed, rtt_ns);
    c.packets = a.packets;
    c.pps = a.pps;
    c.link_bps = a.link_mbps * 1_000_000;
    c.fwd = LossModel {
        loss: loss / 100.0,
        burst,
        reorder: a.reorder,
        reorder_delay: (a.reorder_ms * MS as f64) as u64,
    };
    c.rev = LossModel {
        loss: a.rev_loss / 100.0,
        ..LossModel::CLEAN
    };
    c.crem_loss = a.crem_loss / 100.0;
    c.hold = a.hold_ms.map(|h| (h * MS as f64) as u64);
    c.k = k;
    c.m = m.min(crem_sim::model::MAX_M);
    c.policy = policy;
    c.recovery = match mode {
        Mode::Coded => Recovery::Coded,
        Mode::Sr => Recovery::Selective,
        Mode::Both => Recovery::Both,
        Mode::Off => Recovery::Off,
    };
    c.rdma = match rd {
        Rdma::Slow => RdmaModel::slow(rtt_ns),
        Rdma::Prompt => RdmaModel::prompt(rtt_ns),
    };
    c.traffic = match a.traffic {
        TrafficArg::Mixed => TrafficModel::DEFAULT,
        TrafficArg::Writes => TrafficModel::WRITES,
    };
    c.traffic.mtu = a.mtu;
    c.retention_budget = a.retention_budget_mib << 20;
    c.spread = a.spread;
    c.engine = a.engine.engine();
    c.max_bdp = a.max_bdp;
    c
}

/// The fixed m of block size K: --m, or k/8 for "auto".
fn fixed_m(a: &Args, k: u8) -> Result<u8, String> {
    if a.m == "auto" {
        Ok((k / 8).max(1))
    } else {
        a.m.parse::<u8>().map_err(|_| format!("bad --m {}", a.m))
    }
}

fn cells(a: &Args) -> Result<Vec<(Cell, SimConfig)>, String> {
    let mut out = Vec::new();
    let mut chans = Vec::new();
    for &l in &a.loss {
        if !(0.0..100.0).contains(&l) {
            return Err(format!("loss {l}% out of range"));
        }
        if l == 0.0 {
            chans.push((0.0, 1.0));
        } else {
            for &b in &a.burst {
                chans.push((l, b.max(1.0)));
            }
        }
    }
    chans.dedup();
    for &(loss, burst) in &chans {
        for &rtt in &a.rtt {
            for &k in &a.k {
                if k == 0 {
                    return Err("k must be 1..=255".into());
                }
                for &pol in &a.policy {
                    for &mode in &a.mode {
                        for &rd in &a.rdma {
                            let m = fixed_m(a, k)?;
                            let c = sim_config(
                                a,
                                loss,
                                burst,
                                rtt,
                                k,
                                m,
                                pol == Pol::On,
                                mode,
                                rd,
                                a.seed,
                            );
                            let cell = Cell {
                                loss_pct: loss,
                                burst,
                                rtt_ms: rtt,
                                k,
                                policy: c.policy,
                                mode: c.recovery.name(),
                                rdma: match rd {
                                    Rdma::Slow => "slow",
                                    Rdma::Prompt => "prompt",
                                },
                                m_fixed: c.m,
                            };
                            out.push((cell, c));
                        }
                    }
                }
            }
        }
    }
    Ok(out)
}

fn pct(r: &Report, n: u64) -> String {
    if r.lost == 0 {
        "-".into()
    } else {
        format!("{:.1}", 100.0 * r.share(n))
    }
}

fn header() -> String {
    format!(
        "{:>5} {:>5} {:>4} {:>3} {:>3} {:>5} {:>6} {:>10} {:>6} {:>5} {:>5} {:>5} {:>6} {:>5} {:>15} {:>9} {:>6} {}",
        "loss%", "burst", "rtt", "k", "pol", "mode", "rdma", "m", "ovh%", "lost", "fec%",
        "1rtt%", "later%", "rdma%", "lat ms (RTTs)", "M/X", "gbn", "ok"
    )
}

fn label(c: &Cell) -> String {
    format!(
        "{:>5} {:>5} {:>4} {:>3} {:>3} {:>5} {:>6}",
        c.loss_pct,
        c.burst,
        c.rtt_ms,
        c.k,
        if c.policy { "on" } else { "off" },
        c.mode,
        c.rdma
    )
}

fn line(c: &Cell, r: &Result<Report, String>) -> String {
    let head = label(c);
    let r = match r {
        Ok(r) => r,
        Err(e) => return format!("{head}  PANIC: {e}"),
    };
    let m = match (r.final_km, c.policy) {
        (Some((_, m)), true) => format!("{m} ({:.1})", r.mean_m),
        (Some((_, m)), false) => format!("{m}"),
        (None, _) => "-".into(),
    };
    let lat = if r.lost == 0 {
        "-".to_string()
    } else {
        format!(
            "{:.2} ({:.2})",
            r.lost_latency_mean_ns / 1e6,
            r.lost_latency_mean_ns / (c.rtt_ms * 1e6)
        )
    };
    let mx = if r.retx_block_losses == 0 {
        "-".to_string()
    } else {
        format!("{}/{}", r.retx_symbols, r.retx_block_losses)
    };
    format!(
        "{head} {:>10} {:>6.2} {:>5} {:>5} {:>5} {:>6} {:>5} {:>15} {:>9} {:>6} {}",
        m,
        100.0 * r.overhead,
        r.lost,
        pct(r, r.rec_fec),
        pct(r, r.rec_retx1),
        pct(r, r.rec_retx2),
        pct(r, r.rec_rdma),
        lat,
        mx,
        r.gbn_counterfactual,
        if r.ok() { "yes" } else { "NO" }
    )
}

/// What each side held at most, with the module's engine capacities.
fn memory_line(r: &Report) -> String {
    let m = &r.memory;
    let mb = |n: u64| n as f64 / 1e6;
    format!(
        "#   memory (MB; BDP {:.2}): CSF data {:.2} + structures {:.2} = {:.2} ({:.3} BDP); \
         CRF data {:.2} (sources {:.2}, repairs {:.2}, held {:.2}) + structures {:.2} = {:.2} ({:.3} BDP)",
        mb(m.bdp_octets),
        mb(m.csf.data_max),
        mb(m.csf.structures()),
        mb(m.csf.total),
        m.csf.bdp_ratio,
        mb(m.crf.data_max),
        mb(m.crf_sources_max),
        mb(m.crf_repairs_max),
        mb(m.crf_held_max),
        mb(m.crf.structures()),
        mb(m.crf.total),
        m.crf.bdp_ratio
    )
}

fn problem(r: &Result<Report, String>) -> Option<String> {
    match r {
        Err(e) => Some(format!("panic: {e}")),
        Ok(r) => r.problem(),
    }
}

/// What [`run_all`] calls after each run.
type OnDone<'a> = dyn Fn(usize, usize, f64, &Result<Report, String>) + Sync + 'a;

/// Runs CFGS on JOBS threads; DONE(i, finished so far, seconds, result)
/// after each (the progress line). The results in CFGS's order.
fn run_all(cfgs: &[SimConfig], jobs: usize, done_cb: &OnDone) -> Vec<Result<Report, String>> {
    let n = cfgs.len();
    let results: Mutex<Vec<Option<Result<Report, String>>>> = Mutex::new(vec![None; n]);
    let next = AtomicUsize::new(0);
    let done = AtomicUsize::new(0);
    std::panic::set_hook(Box::new(|_| {}));
    std::thread::scope(|s| {
        for _ in 0..jobs.max(1) {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::SeqCst);
                if i >= n {
                    break;
                }
                let t = Instant::now();
                let r = run(&cfgs[i]);
                let d = done.fetch_add(1, Ordering::SeqCst) + 1;
                done_cb(i, d, t.elapsed().as_secs_f64(), &r);
                results.lock().unwrap_or_else(|e| e.into_inner())[i] = Some(r);
            });
        }
    });
    results
        .into_inner()
        .unwrap_or_else(|e| e.into_inner())
        .into_iter()
        .map(|r| r.unwrap_or_else(|| Err("not run".into())))
        .collect()
}

fn main() {
    let matches = Args::command().get_matches();
    let a = match Args::from_arg_matches(&matches) {
        Ok(a) => a,
        Err(e) => e.exit(),
    };
    if a.demo.is_some() {
        std::process::exit(demo_main(a, &matches));
    }
    let grid = match cells(&a) {
        Ok(g) => g,
        Err(e) => {
            eprintln!("crem-sim: {e}");
            std::process::exit(2);
        }
    };
    let n = grid.len();
    let start = Instant::now();
    let cfgs: Vec<SimConfig> = grid.iter().map(|(_, c)| c.clone()).collect();
    let results = run_all(&cfgs, a.jobs, &|i, d, secs, r| {
        if !a.quiet {
            let cell = &grid[i].0;
            eprintln!(
                "[{d}/{n}] loss={}% burst={} rtt={}ms k={} policy={} mode={} rdma={}: {secs:.1}s{}",
                cell.loss_pct,
                cell.burst,
                cell.rtt_ms,
                cell.k,
                if cell.policy { "on" } else { "off" },
                cell.mode,
                cell.rdma,
                problem(r).map(|p| format!("  ({p})")).unwrap_or_default()
            );
        }
    });
    let mut stdout = std::io::stdout().lock();
    let mut bad = 0;
    if a.json {
        let arr: Vec<serde_json::Value> = grid
            .iter()
            .zip(&results)
            .map(|((c, _), r)| match r.clone() {
                Ok(rep) => {
                    if !rep.ok() {
                        bad += 1;
                    }
                    serde_json::json!({ "cell": c, "ok": rep.ok(), "report": rep })
                }
                Err(e) => {
                    bad += 1;
                    serde_json::json!({ "cell": c, "ok": false, "panic": e })
                }
            })
            .collect();
        let _ = writeln!(
            stdout,
            "{}",
            serde_json::to_string_pretty(&arr).unwrap_or_default()
        );
    } else {
        let _ = writeln!(
            stdout,
            "# crem-sim: {} packets/cell at {} pps, {} Mbit/s links, MTU {}{}, seed {}, fixed m = {}{}{}",
            a.packets,
            a.pps,
            a.link_mbps,
            a.mtu,
            match a.traffic {
                TrafficArg::Mixed => "",
                TrafficArg::Writes => ", WRITEs only",
            },
            a.seed,
            a.m,
            if a.spread { ", repairs spread" } else { "" },
            match a.engine {
                EngineArg::Sim => "",
                EngineArg::Module | EngineArg::ModuleRuntime => ", crem.ko's engine capacities",
            }
        );
        let _ = writeln!(stdout, "{}", header());
        let mut problems = Vec::new();
        for ((c, _), r) in grid.iter().zip(&results) {
            let _ = writeln!(stdout, "{}", line(c, r));
            if let (Ok(r), EngineArg::Module | EngineArg::ModuleRuntime) = (r, a.engine) {
                let _ = writeln!(stdout, "{}", memory_line(r));
            }
            if let Some(p) = problem(r) {
                bad += 1;
                problems.push(format!("{}: {p}", label(c).trim_start()));
            }
        }
        for p in problems {
            let _ = writeln!(stdout, "# problem: {p}");
        }
    }
    if !a.quiet {
        eprintln!(
            "{n} cells in {:.1}s, {bad} with problems",
            start.elapsed().as_secs_f64()
        );
    }
    if bad > 0 {
        std::process::exit(1);
    }
}

/// `--demo FILE`: the demo's cells (see `crem_sim::demo`), TRIALS seeds
/// each, written as its results JSON. Exit status as the grid's.
fn demo_main(a: Args, matches: &ArgMatches) -> i32 {
    let given = |id: &str| matches.value_source(id) == Some(ValueSource::CommandLine);
    let usage = |msg: String| {
        eprintln!("crem-sim: --demo: {msg}");
        2
    };
    for id in ["policy", "mode"] {
        if given(id) {
            return usage(format!(
                "--{id} does not apply (the modes are off, fixed and adaptive)"
            ));
        }
    }
    let one = |id: &str, n: usize| -> Result<(), String> {
        if n == 1 {
            Ok(())
        } else {
            Err(format!("one --{id} value, not {n}"))
        }
    };
    let k = if given("k") { a.k.clone() } else { vec![16] };
    let burst = if given("burst") {
        a.burst.clone()
    } else {
        vec![1.0]
    };
    let rdma = if given("rdma") {
        a.rdma.clone()
    } else {
        vec![Rdma::Prompt]
    };
    if let Err(e) = one("k", k.len())
        .and(one("burst", burst.len()))
        .and(one("rdma", rdma.len()))
    {
        return usage(e);
    }
    let (k, burst, rdma) = (k[0], burst[0].max(1.0), rdma[0]);
    let losses = if given("loss") {
        a.loss.clone()
    } else {
        vec![0.0, 0.1, 0.5, 1.0, 2.0, 5.0]
    };
    let rtts = if given("rtt") {
        a.rtt.clone()
    } else {
        vec![10.0]
    };
    if let Some(l) = losses.iter().find(|l| !(0.0..100.0).contains(*l)) {
        return usage(format!("loss {l}% out of range"));
    }
    if k == 0 {
        return usage("k must be 1..=255".into());
    }
    let m = match fixed_m(&a, k) {
        Ok(m) => m.min(crem_sim::model::MAX_M),
        Err(e) => return usage(e),
    };
    let cells = demo::sweep(&rtts, &losses);
    let trials = a.trials as usize;
    let mut cfgs = Vec::new();
    for &(mode, loss, rtt) in &cells {
        let (policy, rec) = match mode {
            "off" => (false, Mode::Off),
            "fixed" => (false, Mode::Coded),
            _ => (true, Mode::Coded),
        };
        let b = if loss == 0.0 { 1.0 } else { burst };
        for t in 0..trials as u64 {
            cfgs.push(sim_config(
                &a,
                loss,
                b,
                rtt,
                k,
                m,
                policy,
                rec,
                rdma,
                a.seed + t,
            ));
        }
    }
    let n = cfgs.len();
    let start = Instant::now();
    let results = run_all(&cfgs, a.jobs, &|i, d, secs, r| {
        if !a.quiet {
            let (mode, loss, rtt) = cells[i / trials];
            let el = start.elapsed().as_secs_f64();
            eprintln!(
                "[{d}/{n}] {mode} @ {loss}%, rtt {rtt} ms, seed {}: {secs:.1}s{}; {el:.0}s elapsed, about {:.0}s left",
                a.seed + (i % trials) as u64,
                problem(r).map(|p| format!("  ({p})")).unwrap_or_default(),
                el / d as f64 * (n - d) as f64
            );
        }
    });
    let mut runs: Vec<serde_json::Value> = cells
        .iter()
        .zip(results.chunks(trials))
        .map(|(&(mode, loss_pct, rtt_ms), reps)| {
            let info = demo::CellInfo {
                mode,
                loss_pct,
                rtt_ms,
                link_mbit: a.link_mbps,
                k,
                m,
            };
            demo::run(&info, reps)
        })
        .collect();
    demo::finish(&mut runs);
    let bad = results
        .iter()
        .filter(|r| !matches!(r, Ok(r) if r.ok()))
        .count();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let params = serde_json::json!({
        "rtt_ms": rtts, "loss_pct": losses, "rate_mbit": a.link_mbps, "trials": trials,
        "timeout_s": null, "k": k, "m": m, "modes": demo::MODES, "burst": burst,
        "rdma": match rdma { Rdma::Slow => "slow", Rdma::Prompt => "prompt" },
        "packets": a.packets, "pps": a.pps, "seed": a.seed, "spread": a.spread,
        "engine": a.engine.engine().name(),
        "reorder": a.reorder, "rev_loss_pct": a.rev_loss, "crem_loss_pct": a.crem_loss,
    });
    let doc = demo::document(&demo::utc_stamp(now), git_commit().as_deref(), params, runs);
    let Some(path) = a.demo.as_deref() else {
        return 2;
    };
    let text = serde_json::to_string_pretty(&doc).unwrap_or_default() + "\n";
    if let Err(e) = std::fs::write(path, text) {
        eprintln!("crem-sim: {}: {e}", path.display());
        return 1;
    }
    if !a.quiet {
        eprintln!(
            "{n} runs in {:.1}s, {bad} with problems; written: {} (draw: vm/plot.py {})",
            start.elapsed().as_secs_f64(),
            path.display(),
            path.display()
        );
    }
    i32::from(bad > 0)
}

/// The commit this crem-sim was built from, when its source tree is a git
/// checkout (for the figure's title); None otherwise.
fn git_commit() -> Option<String> {
    let out = std::process::Command::new("git")
        .args(["-C", env!("CARGO_MANIFEST_DIR"), "rev-parse", "HEAD"])
        .output()
        .ok()?;
    let s = String::from_utf8(out.stdout).ok()?.trim().to_string();
    (out.status.success() && !s.is_empty()).then_some(s)
}
