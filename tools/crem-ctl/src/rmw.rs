//! Changes to one element of a list (peer add/del, reporter add/del) and
//! addconf: read-modify-write through config-get and config-set. config-set
//! replaces a list whole and has no generation to compare, so two writers
//! can each read the same list and the later write drop the other's
//! element. That race cannot be closed from here; it is detected instead:
//! the writer listens to the config-change-ntf notifications from before its
//! read, and reads the configuration back after its write. Any change
//! other than its own fails the command (exit 1) with what it saw.

use crate::model::{Addr, Config, Peer};
use crate::nl::{self, Conn};
use crate::parse::PeerSel;
use crate::request::{get_config, set_config};
use crate::uapi::{CMD_CONFIG_CHANGE_NTF, MCGRP_EVENTS};
use crate::{Fail, Res};

/// The peer list with `new` added: a prefix not configured is appended,
/// one configured with the same address is already there; one configured
/// with another address is refused (the entry decides where protection
/// goes: changing it is `peer del` then `peer add`, or `set peer`).
pub fn add_peers(cur: &[Peer], new: &[Peer]) -> Result<Vec<Peer>, String> {
    let mut out = cur.to_vec();
    for p in new {
        match out
            .iter()
            .find(|q| q.prefix == p.prefix && q.prefix_len == p.prefix_len)
        {
            Some(q) if q.addr == p.addr => {}
            Some(q) => {
                return Err(format!(
                    "peer {}/{} is configured with another address ({q}): \
                     'crem-ctl peer del {}/{}' it first, or replace the list with 'crem-ctl set peer'",
                    p.prefix, p.prefix_len, p.prefix, p.prefix_len
                ))
            }
            None => out.push(p.clone()),
        }
    }
    Ok(out)
}

/// The peer list without the entries `gone` names; each must be there.
pub fn del_peers(cur: &[Peer], gone: &[PeerSel]) -> Result<Vec<Peer>, String> {
    let mut out = cur.to_vec();
    for g in gone {
        let at = out
            .iter()
            .position(|q| q.prefix == g.prefix && q.prefix_len == g.prefix_len)
            .ok_or_else(|| format!("no peer is configured for {}/{}", g.prefix, g.prefix_len))?;
        if let Some(a) = g.addr.as_ref().filter(|a| **a != out[at].addr) {
            return Err(format!(
                "peer {}/{} is configured with address {}, not {a}",
                g.prefix, g.prefix_len, out[at].addr
            ));
        }
        out.remove(at);
    }
    Ok(out)
}

/// The reporter list with `new` added (an address already there stays as
/// it is).
pub fn add_reporters(cur: &[Addr], new: &[Addr]) -> Vec<Addr> {
    let mut out = cur.to_vec();
    for a in new {
        if !out.contains(a) {
            out.push(a.clone());
        }
    }
    out
}

/// The reporter list without `gone`; each must be there.
pub fn del_reporters(cur: &[Addr], gone: &[Addr]) -> Result<Vec<Addr>, String> {
    let mut out = cur.to_vec();
    for a in gone {
        let at = out
            .iter()
            .position(|r| r == a)
            .ok_or_else(|| format!("{a} is not in the reporter list"))?;
        out.remove(at);
    }
    Ok(out)
}

/// What addconf sends for `file` on top of `cur`: the file's scalars, and
/// each list the file has added to the current one as `peer add` and
/// `reporter add` add.
pub fn addconf(cur: &Config, file: &Config) -> Result<Config, String> {
    let mut change = Config {
        reporter: None,
        peer: None,
        ..file.clone()
    };
    if let Some(r) = &file.reporter {
        change.reporter = Some(add_reporters(cur.reporter.as_deref().unwrap_or(&[]), r));
    }
    if let Some(p) = &file.peer {
        change.peer = Some(add_peers(cur.peer.as_deref().unwrap_or(&[]), p)?);
    }
    Ok(change)
}

/// Why the read-modify-write that read `read` and meant to leave `meant`
/// may have lost or undone another change, from the config-change-ntf
/// notifications received meanwhile (`notified`; `lost` if some were
/// dropped) and the configuration read back after the write (`after`);
/// `None` if nothing else changed it. A notification of `read` itself is a
/// change from before the read whose notification came late.
pub fn conflict(
    read: &Config,
    meant: &Config,
    notified: &[Config],
    lost: bool,
    after: &Config,
) -> Option<String> {
    let mut why = Vec::new();
    let others = notified
        .iter()
        .filter(|c| *c != read && *c != meant)
        .count();
    if others > 0 {
        why.push(format!(
            "{others} other change{} of the configuration came between its read and its write",
            if others == 1 { "" } else { "s" }
        ));
    }
    if lost {
        why.push("notifications were lost, so another change cannot be ruled out".to_string());
    }
    if after != meant {
        why.push(format!(
            "the configuration read back after the write differs from what it wrote in {}",
            differing_keys(meant, after).join(", ")
        ));
    }
    (!why.is_empty()).then(|| {
        format!(
            "conflict: another process changed the configuration at the same time: {}. \
             config-set replaces a list whole, so this change may have undone another or been \
             undone; check 'crem-ctl show config' and run it again if needed",
            why.join("; ")
        )
    })
}

/// The JSON keys whose values differ between `a` and `b`.
fn differing_keys(a: &Config, b: &Config) -> Vec<String> {
    let (a, b) = (
        serde_json::to_value(a).expect("json"),
        serde_json::to_value(b).expect("json"),
    );
    let (a, b) = (a.as_object().unwrap(), b.as_object().unwrap());
    let mut keys: Vec<String> = a
        .iter()
        .filter(|(k, v)| b.get(*k) != Some(v))
        .map(|(k, _)| k.clone())
        .collect();
    keys.extend(b.keys().filter(|k| !a.contains_key(*k)).cloned());
    keys
}

/// Reads the configuration, sends the change `edit` makes of it (nothing
/// if it changes nothing), and checks that no other change came meanwhile
/// (see [`conflict`]).
pub fn modify(edit: impl FnOnce(&Config) -> Result<Config, String>) -> Res {
    // Listening first: a change after the read is notified to it.
    let mut events = Conn::open()?;
    if let Err(e) = events.subscribe(MCGRP_EVENTS, nl::NOTIFY_RCVBUF) {
        return Err(match e {
            nl::Error::Io(_, io) if io.kind() == std::io::ErrorKind::PermissionDenied => {
                Fail::Denied(
                    "changing CREM needs CAP_NET_ADMIN over the network namespace \
                     (crem-ctl joins the events group to detect a concurrent change)"
                        .into(),
                )
            }
            e => Fail::Nl(e),
        });
    }
    let mut c = Conn::open()?;
    let read = get_config(&mut c)?;
    let change = edit(&read).map_err(Fail::Failed)?;
    let meant = read.overlay(&change);
    if meant == read {
        return Ok(());
    }
    set_config(&mut c, &change)?;
    let after = get_config(&mut c)?;
    let (msgs, lost) = events.drain_notifications()?;
    let notified: Vec<Config> = msgs
        .iter()
        .filter(|m| m.cmd == CMD_CONFIG_CHANGE_NTF)
        .map(|m| Config::from_attrs(&m.attrs, true))
        .collect();
    match conflict(&read, &meant, &notified, lost, &after) {
        None => Ok(()),
        Some(m) => Err(Fail::Failed(m)),
    }
}

/// The --help section on the race, for every command that edits a list.
pub const RACE: &str = "\
CONCURRENT CHANGES:
    The kernel's config-set replaces a list whole and has no generation to
    compare, so this command reads the configuration, changes the list and
    writes it back: another process changing the configuration between
    the read and the write would have its change undone (or undo this
    one). crem-ctl cannot prevent that; it detects it. It listens to the
    config-change-ntf notifications from before its read and reads the
    configuration back after its write; if anything but its own change
    shows, it fails (exit 1) with 'conflict: ...', naming what differs.
    Check 'crem-ctl show config' and run it again. 'crem-ctl set' and
    'setconf', which replace whole lists in one config-set, have no such
    race (nor does 'syncconf').";

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::IpAddr;

    fn a(s: &str) -> Addr {
        Addr::from(s.parse::<IpAddr>().unwrap())
    }

    fn p(s: &str) -> Peer {
        crate::parse::parse_peer("peer", s).unwrap()
    }

    fn sel(prefix: &str, len: u8, addr: Option<&str>) -> PeerSel {
        PeerSel {
            prefix: a(prefix),
            prefix_len: len,
            addr: addr.map(a),
        }
    }

    #[test]
    fn peer_edits() {
        let cur = [
            p("203.0.113.0/24=198.51.100.2"),
            p("2001:db8:1::/48=2001:db8::2"),
        ];
        assert_eq!(
            add_peers(&cur, &[p("198.18.0.0/15=198.51.100.9")]).unwrap(),
            [
                cur[0].clone(),
                cur[1].clone(),
                p("198.18.0.0/15=198.51.100.9")
            ]
        );
        // The same entry again: nothing to add; another length is another
        // prefix.
        assert_eq!(add_peers(&cur, &[cur[0].clone()]).unwrap(), cur);
        assert_eq!(
            add_peers(&cur, &[p("203.0.113.0/25=198.51.100.2")])
                .unwrap()
                .len(),
            3
        );
        assert_eq!(
            add_peers(&cur, &[p("203.0.113.0/24=198.51.100.3")]).unwrap_err(),
            "peer 203.0.113.0/24 is configured with another address (203.0.113.0/24=198.51.100.2): \
             'crem-ctl peer del 203.0.113.0/24' it first, or replace the list with 'crem-ctl set peer'"
        );
        assert_eq!(
            del_peers(&cur, &[sel("203.0.113.0", 24, None)]).unwrap(),
            [cur[1].clone()]
        );
        assert_eq!(
            del_peers(
                &cur,
                &[
                    sel("2001:db8:1::", 48, Some("2001:db8::2")),
                    sel("203.0.113.0", 24, None)
                ]
            )
            .unwrap(),
            []
        );
        assert_eq!(
            del_peers(&cur, &[sel("203.0.113.0", 25, None)]).unwrap_err(),
            "no peer is configured for 203.0.113.0/25"
        );
        assert_eq!(
            del_peers(&cur, &[sel("203.0.113.0", 24, Some("198.51.100.7"))]).unwrap_err(),
            "peer 203.0.113.0/24 is configured with address 198.51.100.2, not 198.51.100.7"
        );
    }

    #[test]
    fn reporter_edits() {
        let cur = [a("198.51.100.1")];
        assert_eq!(
            add_reporters(&cur, &[a("2001:db8::1"), a("198.51.100.1")]),
            [a("198.51.100.1"), a("2001:db8::1")]
        );
        assert_eq!(del_reporters(&cur, &[a("198.51.100.1")]).unwrap(), []);
        assert_eq!(
            del_reporters(&cur, &[a("198.51.100.9")]).unwrap_err(),
            "198.51.100.9 is not in the reporter list"
        );
    }

    #[test]
    fn addconf_adds_lists_and_sets_scalars() {
        let cur = Config {
            k: Some(32),
            m: Some(2),
            reporter: Some(vec![a("198.51.100.1")]),
            peer: Some(vec![p("203.0.113.0/24=198.51.100.2")]),
            ..Default::default()
        };
        let file = crate::conffile::parse(
            "[CREM]\nK = 16\nReporter = 198.51.100.7\n[Peer]\nPrefix = 198.18.0.0/15\nAddress = 198.51.100.9\n",
        )
        .unwrap();
        let change = addconf(&cur, &file).unwrap();
        assert_eq!(
            change,
            Config {
                k: Some(16),
                reporter: Some(vec![a("198.51.100.1"), a("198.51.100.7")]),
                peer: Some(vec![
                    p("203.0.113.0/24=198.51.100.2"),
                    p("198.18.0.0/15=198.51.100.9")
                ]),
                ..Default::default()
            }
        );
        // A file without a list leaves it out of the change.
        let change = addconf(&cur, &crate::conffile::parse("[CREM]\nM = 4\n").unwrap()).unwrap();
        assert_eq!(
            (change.m, change.reporter, change.peer),
            (Some(4), None, None)
        );
        // A prefix configured elsewhere: refused, as peer add refuses it.
        let file =
            crate::conffile::parse("[Peer]\nPrefix = 203.0.113.0/24\nAddress = 198.51.100.3\n")
                .unwrap();
        assert!(addconf(&cur, &file)
            .unwrap_err()
            .contains("configured with another address"));
    }

    #[test]
    fn conflicts_are_detected() {
        let read = Config {
            k: Some(32),
            peer: Some(vec![p("203.0.113.0/24=198.51.100.2")]),
            ..Default::default()
        };
        let change = Config {
            peer: Some(
                add_peers(
                    read.peer.as_deref().unwrap(),
                    &[p("198.18.0.0/15=198.51.100.9")],
                )
                .unwrap(),
            ),
            ..Default::default()
        };
        let meant = read.overlay(&change);
        // Alone: its own notification (and a late one of what it read).
        assert_eq!(
            conflict(&read, &meant, std::slice::from_ref(&meant), false, &meant),
            None
        );
        assert_eq!(
            conflict(&read, &meant, &[read.clone(), meant.clone()], false, &meant),
            None
        );
        // Another writer added a peer between the read and the write: its
        // notification shows it, though the read-back is what this wrote.
        let other = read.overlay(&Config {
            peer: Some(
                add_peers(
                    read.peer.as_deref().unwrap(),
                    &[p("192.0.2.0/24=198.51.100.5")],
                )
                .unwrap(),
            ),
            ..Default::default()
        });
        let e = conflict(
            &read,
            &meant,
            &[other.clone(), meant.clone()],
            false,
            &meant,
        )
        .unwrap();
        assert!(
            e.starts_with(
                "conflict: another process changed the configuration at the same time: \
                 1 other change of the configuration came between its read and its write."
            ),
            "{e}"
        );
        // Another writer after the write: the read-back differs, named.
        let later = meant.overlay(&Config {
            k: Some(8),
            ..Default::default()
        });
        let e = conflict(
            &read,
            &meant,
            &[meant.clone(), later.clone()],
            false,
            &later,
        )
        .unwrap();
        assert!(e.contains("1 other change"), "{e}");
        assert!(
            e.contains(
                "the configuration read back after the write differs from what it wrote in k"
            ),
            "{e}"
        );
        // The later change's notification not yet seen: the read-back alone.
        let e = conflict(&read, &meant, std::slice::from_ref(&meant), false, &other).unwrap();
        assert!(e.contains("differs from what it wrote in peer"), "{e}");
        // Lost notifications: cannot tell.
        let e = conflict(&read, &meant, &[], true, &meant).unwrap();
        assert!(e.contains("notifications were lost"), "{e}");
    }
}
