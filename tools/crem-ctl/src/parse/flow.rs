//! The words of the flow commands: which flow 'flow show|del|reset ID
//! [side csf|crf] [peer ADDR]' names, and what 'flow set' and 'flow add'
//! ask for. A flow's addresses are IPv4 or IPv6, both of one family.

use super::value::{in_range, parse_addr, parse_loss_ppm, parse_uint};
use super::{unknown_key, Words};
use crate::uapi::{enum_value, FLOW_KIND, FLOW_STATE, SIDE};
use std::net::IpAddr;

/// Which flow 'flow show|del|reset ID [side csf|crf] [peer ADDR]' names.
/// Flow IDs are assigned by each CRF, so side and peer may be needed to
/// tell two flows with the same ID apart.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FlowSel {
    pub id: u32,
    pub side: Option<u8>,
    pub peer: Option<IpAddr>,
}

impl FlowSel {
    pub fn parse(id: &str, kv: &[String]) -> Result<FlowSel, String> {
        let id = id
            .parse::<u32>()
            .ok()
            .filter(|&i| i != 0)
            .ok_or_else(|| format!("'{id}' is not a flow ID (a number, 1 or more)"))?;
        let mut sel = FlowSel {
            id,
            ..FlowSel::default()
        };
        let mut words = Words::new(kv);
        while let Some(k) = words.key() {
            let v = words.value(k)?;
            match k {
                "side" => {
                    sel.side = Some(
                        enum_value(SIDE, v)
                            .ok_or_else(|| format!("side: '{v}' is not csf or crf"))?,
                    )
                }
                "peer" => sel.peer = Some(parse_addr("peer", v)?),
                _ => return Err(unknown_key(k, "side or peer")),
            }
        }
        Ok(sel)
    }
}

/// Which flows 'flow [list] [peer ADDR] [side csf|crf] [state S] [kind K]
/// [min-loss PPM]' prints: every condition given must hold. Applied here,
/// to the dump (the kernel has no filtered dump).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FlowFilter {
    pub peer: Option<IpAddr>,
    pub side: Option<u8>,
    pub state: Option<u8>,
    pub kind: Option<u8>,
    /// Smallest loss-ppm.
    pub min_loss_ppm: Option<u32>,
}

impl FlowFilter {
    pub fn parse(args: &[String]) -> Result<FlowFilter, String> {
        let mut f = FlowFilter::default();
        let mut words = Words::new(args);
        while let Some(k) = words.key() {
            let v = words.value(k)?;
            let named = |names: &[&str], what: &str| {
                enum_value(names, &v.to_ascii_lowercase())
                    .ok_or_else(|| format!("{k}: '{v}' is not {what}"))
            };
            let given = match k {
                "peer" => f.peer.replace(parse_addr(k, v)?).is_some(),
                "side" => f.side.replace(named(SIDE, "csf or crf")?).is_some(),
                "state" => f
                    .state
                    .replace(named(FLOW_STATE, &FLOW_STATE.join(", "))?)
                    .is_some(),
                "kind" => f
                    .kind
                    .replace(named(FLOW_KIND, "requests or responses")?)
                    .is_some(),
                "min-loss" => f
                    .min_loss_ppm
                    .replace(parse_loss_ppm(k, v)? as u32)
                    .is_some(),
                _ => return Err(unknown_key(k, "peer, side, state, kind or min-loss")),
            };
            if given {
                return Err(format!("'{k}' is given twice"));
            }
        }
        Ok(f)
    }
}

/// What 'flow set' does to the flow's configuration.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pin {
    /// k N m N: pins the flow to this k and m.
    Fixed { k: u8, m: u8 },
    /// adaptive: hands the flow back to the adaptive policy.
    Adaptive,
}

/// 'flow set ID [side csf] [peer ADDR] k N m N | adaptive'.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FlowSet {
    pub sel: FlowSel,
    pub pin: Pin,
}

impl FlowSet {
    pub fn parse(id: &str, args: &[String]) -> Result<FlowSet, String> {
        // An ID that is no number is reported before anything in the words.
        if id.parse::<u32>().is_err() {
            return Err(format!("'{id}' is not a flow ID (a number)"));
        }
        let (mut sel_kv, mut k, mut m, mut adaptive) = (Vec::new(), None, None, false);
        let mut words = Words::new(args);
        while let Some(key) = words.key() {
            if key == "adaptive" {
                adaptive = true;
                continue;
            }
            let v = words.value(key)?;
            let num = |what: &str| {
                v.parse::<u8>()
                    .map_err(|_| format!("{what}: '{v}' is not a number 0..255"))
            };
            match key {
                "k" => k = Some(num("k")?),
                "m" => m = Some(num("m")?),
                "side" | "peer" => sel_kv.extend([key.to_string(), v.to_string()]),
                _ => return Err(unknown_key(key, "side, peer, k, m or adaptive")),
            }
        }
        let sel = FlowSel::parse(id, &sel_kv)?;
        let pin = match (k, m, adaptive) {
            (Some(k), Some(m), false) => Pin::Fixed { k, m },
            (None, None, true) => Pin::Adaptive,
            (_, _, true) => return Err("give k and m (pin), or adaptive, not both".into()),
            _ => return Err("give both k and m, or adaptive".into()),
        };
        Ok(FlowSet { sel, pin })
    }
}

/// Largest destination queue pair number (the BTH's 24-bit DestQP).
const QP_MAX: u64 = 0xff_ffff;

/// 'flow add SRC DST qp N [kind requests|responses] [k N m N]': a sender
/// flow to set up ahead of its traffic.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FlowNew {
    pub src: IpAddr,
    pub dst: IpAddr,
    pub dest_qp: u32,
    /// k and m, both or neither.
    pub k_m: Option<(u8, u8)>,
    /// The flow kind's value; `None` leaves it to the kernel (requests).
    pub kind: Option<u8>,
}

impl FlowNew {
    pub fn parse(src: &str, dst: &str, args: &[String]) -> Result<FlowNew, String> {
        let (src, dst) = (parse_addr("src", src)?, parse_addr("dst", dst)?);
        if src.is_ipv4() != dst.is_ipv4() {
            return Err(format!(
                "src {src} and dst {dst} are of two families: a flow's are both IPv4 or both IPv6"
            ));
        }
        let (mut qp, mut kind, mut k, mut m) = (None, None, None, None);
        let mut words = Words::new(args);
        while let Some(key) = words.key() {
            let v = words.value(key)?;
            let num = |what: &str| parse_uint(v).map_err(|e| format!("{what}: {e}"));
            let (slot, value): (&mut Option<u64>, u64) = match key {
                "qp" | "dest-qp" => {
                    let n = num("qp")?;
                    // The range in hex, as QPs are written, and the value as typed.
                    if n > QP_MAX {
                        return Err(format!("qp: {v} is out of range (0..={QP_MAX:#x})"));
                    }
                    (&mut qp, n)
                }
                "kind" => (
                    &mut kind,
                    enum_value(FLOW_KIND, v)
                        .map(u64::from)
                        .ok_or_else(|| format!("kind: '{v}' is not requests or responses"))?,
                ),
                "k" => (&mut k, in_range("k", num("k")?, 1, 255)?),
                "m" => (&mut m, in_range("m", num("m")?, 0, 255)?),
                _ => return Err(unknown_key(key, "qp, kind, k or m")),
            };
            if slot.replace(value).is_some() {
                return Err(format!("'{key}' is given twice"));
            }
        }
        let qp = qp.ok_or("give the destination queue pair: qp N (0..0xffffff)")?;
        let k_m = match (k, m) {
            (Some(k), Some(m)) if k + m > 255 => {
                return Err(format!(
                    "k + m must not exceed 255 (k {k} + m {m} = {})",
                    k + m
                ))
            }
            (Some(k), Some(m)) => Some((k as u8, m as u8)),
            (None, None) => None,
            _ => return Err("give both k and m, or neither".into()),
        };
        Ok(FlowNew {
            src,
            dst,
            dest_qp: qp as u32,
            k_m,
            kind: kind.map(|v| v as u8),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn flow_selector() {
        let s = FlowSel::parse("7", &words(&["peer", "10.0.0.2", "side", "csf"])).unwrap();
        assert_eq!(s.side, Some(0));
        assert_eq!(s.peer, Some("10.0.0.2".parse().unwrap()));
    }

    #[test]
    fn flow_reset_selector_errors() {
        for (id, sel, msg) in [
            ("0", &[][..], "not a flow ID"),
            ("x", &[], "not a flow ID"),
            ("7", &["side", "both"], "side: 'both' is not csf or crf"),
            (
                "7",
                &["peer", "nope"],
                "peer: 'nope' is not an IPv4 or IPv6 address",
            ),
            ("7", &["k", "1"], "unknown key 'k' (expected side or peer)"),
            ("7", &["side"], "'side' needs a value"),
        ] {
            match FlowSel::parse(id, &words(sel)) {
                Err(e) => assert!(e.contains(msg), "{id} {sel:?}: {e}"),
                Ok(s) => panic!("{id} {sel:?}: {s:?}"),
            }
        }
    }

    #[test]
    fn flow_filter_words() {
        let p = |v: &[&str]| FlowFilter::parse(&words(v));
        assert_eq!(p(&[]), Ok(FlowFilter::default()));
        assert_eq!(
            p(&[
                "peer",
                "10.0.0.2",
                "side",
                "crf",
                "state",
                "Protected",
                "kind",
                "responses",
                "min-loss",
                "0.5%"
            ]),
            Ok(FlowFilter {
                peer: Some("10.0.0.2".parse().unwrap()),
                side: Some(1),
                state: Some(1),
                kind: Some(1),
                min_loss_ppm: Some(5000),
            })
        );
        for (v, ppm) in [
            ("1200", 1200),
            ("1200ppm", 1200),
            ("100%", 1_000_000),
            ("0", 0),
        ] {
            assert_eq!(p(&["min-loss", v]).unwrap().min_loss_ppm, Some(ppm), "{v}");
        }
        assert_eq!(
            p(&["peer", "2001:db8::2"]).unwrap().peer,
            Some("2001:db8::2".parse().unwrap())
        );
        for (args, msg) in [
            (&["side"][..], "'side' needs a value"),
            (&["side", "both"], "side: 'both' is not csf or crf"),
            (
                &["state", "up"],
                "state: 'up' is not negotiating, protected, unprotected, closing",
            ),
            (&["kind", "all"], "kind: 'all' is not requests or responses"),
            (&["peer", "gw"], "peer: 'gw' is not an IPv4 or IPv6 address"),
            (
                &["min-loss", "2%x"],
                "min-loss: '2%x' is not a loss rate (e.g. 1200, 1200ppm, 0.12%)",
            ),
            (
                &["min-loss", "101%"],
                "min-loss: 1010000 is out of range (0..=1000000)",
            ),
            (
                &["min-loss", "0.5"],
                "min-loss: '0.5' is not a whole number of ppm",
            ),
            (&["side", "csf", "side", "crf"], "'side' is given twice"),
            (
                &["id", "7"],
                "unknown key 'id' (expected peer, side, state, kind or min-loss)",
            ),
        ] {
            assert_eq!(p(args).unwrap_err(), msg, "{args:?}");
        }
    }

    #[test]
    fn flow_set_words() {
        let set = |id: &str, v: &[&str]| FlowSet::parse(id, &words(v));
        assert_eq!(
            set("7", &["side", "csf", "k", "8", "m", "1"]),
            Ok(FlowSet {
                sel: FlowSel {
                    id: 7,
                    side: Some(0),
                    peer: None
                },
                pin: Pin::Fixed { k: 8, m: 1 }
            })
        );
        assert_eq!(set("7", &["adaptive"]).map(|s| s.pin), Ok(Pin::Adaptive));
        for (args, msg) in [
            (&["k", "8"][..], "give both k and m"),
            (&["k", "8", "m", "1", "adaptive"][..], "not both"),
            (&["k", "300", "m", "1"][..], "not a number"),
            (&["x", "1"][..], "unknown key 'x'"),
            (&["k"][..], "needs a value"),
            (&[][..], "give both k and m, or adaptive"),
        ] {
            let e = set("7", args).unwrap_err();
            assert!(e.contains(msg), "{args:?}: {e}");
        }
        assert_eq!(
            set("x", &["k"]).unwrap_err(),
            "'x' is not a flow ID (a number)",
            "the ID first"
        );
        assert!(set("0", &["adaptive"]).unwrap_err().contains("1 or more"));
    }

    #[test]
    fn flow_new_words() {
        let new = |src: &str, dst: &str, v: &[&str]| FlowNew::parse(src, dst, &words(v));
        assert_eq!(
            new(
                "192.0.2.1",
                "203.0.113.1",
                &["kind", "responses", "m", "2", "qp", "0x11", "k", "16"]
            ),
            Ok(FlowNew {
                src: "192.0.2.1".parse().unwrap(),
                dst: "203.0.113.1".parse().unwrap(),
                dest_qp: 17,
                k_m: Some((16, 2)),
                kind: Some(1),
            })
        );
        let f = new("10.0.0.1", "10.0.0.2", &["dest-qp", "16777215"]).unwrap();
        assert_eq!((f.dest_qp, f.k_m, f.kind), (0xff_ffff, None, None));
        // k + m = 255 and m 0 are fine; kind requests is 0.
        let f = new(
            "10.0.0.1",
            "10.0.0.2",
            &["qp", "1", "k", "255", "m", "0", "kind", "requests"],
        )
        .unwrap();
        assert_eq!((f.k_m, f.kind), (Some((255, 0)), Some(0)));

        // The addresses.
        for (src, dst, msg) in [
            (
                "192.0.2.300",
                "10.0.0.2",
                "src: '192.0.2.300' is not an IPv4 or IPv6 address",
            ),
            (
                "10.0.0.1",
                "host-b",
                "dst: 'host-b' is not an IPv4 or IPv6 address",
            ),
            (
                "2001:db8::1",
                "10.0.0.2",
                "src 2001:db8::1 and dst 10.0.0.2 are of two families",
            ),
        ] {
            let e = new(src, dst, &["qp", "1"]).unwrap_err();
            assert!(e.contains(msg), "{src} {dst}: {e}");
        }
        // An IPv6 flow, and an IPv6 peer in a selector.
        let f = new("2001:db8:a::1", "2001:db8:b::1", &["qp", "7"]).unwrap();
        assert_eq!(
            (f.src.to_string(), f.dst.to_string(), f.dest_qp),
            ("2001:db8:a::1".into(), "2001:db8:b::1".into(), 7)
        );
        let s = FlowSel::parse("7", &words(&["peer", "2001:db8::1"])).unwrap();
        assert_eq!(s.peer, Some("2001:db8::1".parse().unwrap()));
        // The words.
        for (args, msg) in [
            (&[][..], "give the destination queue pair: qp N"),
            (&["k", "8", "m", "1"], "give the destination queue pair"),
            (
                &["qp", "0x1000000"],
                "qp: 0x1000000 is out of range (0..=0xffffff)",
            ),
            (
                &["qp", "16777216"],
                "qp: 16777216 is out of range (0..=0xffffff)",
            ),
            (&["qp", "-1"], "qp: '-1' is not a number"),
            (&["qp"], "'qp' needs a value"),
            (&["qp", "1", "qp", "2"], "'qp' is given twice"),
            (
                &["qp", "1", "kind", "both"],
                "kind: 'both' is not requests or responses",
            ),
            (&["qp", "1", "k", "8"], "give both k and m, or neither"),
            (&["qp", "1", "m", "2"], "give both k and m, or neither"),
            (
                &["qp", "1", "k", "0", "m", "2"],
                "k: 0 is out of range (1..=255)",
            ),
            (
                &["qp", "1", "k", "256", "m", "2"],
                "k: 256 is out of range (1..=255)",
            ),
            (
                &["qp", "1", "k", "8", "m", "300"],
                "m: 300 is out of range (0..=255)",
            ),
            (
                &["qp", "1", "k", "200", "m", "100"],
                "k + m must not exceed 255 (k 200 + m 100 = 300)",
            ),
            (
                &["qp", "1", "side", "csf"],
                "unknown key 'side' (expected qp, kind, k or m)",
            ),
        ] {
            let e = new("10.0.0.1", "10.0.0.2", args).unwrap_err();
            assert!(e.contains(msg), "{args:?}: {e}");
        }
    }
}
