//! `crem-ctl flow show ID [side csf|crf] [peer ADDR]`, also `crem-ctl show
//! ID ...`: one flow (or every flow with the ID), every attribute and
//! counter.

use crate::model::{Addr, Flow};
use crate::nl::{self, Conn};
use crate::parse::FlowSel;
use crate::request::{self, get_flows};
use crate::stdio::Format;
use crate::uapi::CMD_FLOW_GET;
use crate::{output, Fail, Res};

pub fn run(sel: &FlowSel, fmt: Format) -> Res {
    let mut c = Conn::open()?;
    let fl = flows(&mut c, sel)?;
    fmt.print(&serde_json::json!({ "flow": fl }), || {
        let t: Vec<String> = fl.iter().map(output::flow_detail).collect();
        t.join("\n")
    });
    Ok(())
}

/// The flows 'flow show' prints: flow-get's do, or the dump filtered here
/// when the module has no do or several flows have the ID.
fn flows(c: &mut Conn, sel: &FlowSel) -> Res<Vec<Flow>> {
    if c.family.has_do(CMD_FLOW_GET) {
        match c.request(CMD_FLOW_GET, super::request(sel), false) {
            Ok(r) => return Ok(request::flows(&r)),
            // ENOTUNIQ: several flows have the ID; EOPNOTSUPP: no do.
            Err(nl::Error::Kernel { errno, .. }) if errno == 76 || errno == 95 => {}
            Err(e) => return Err(e.into()),
        }
    }
    let fl: Vec<Flow> = get_flows(c)?
        .into_iter()
        .filter(|f| matches(sel, f))
        .collect();
    if fl.is_empty() {
        return Err(Fail::Failed(format!("no flow with id {}", sel.id)));
    }
    Ok(fl)
}

/// Whether the dumped flow `f` is one that `sel` names.
fn matches(sel: &FlowSel, f: &Flow) -> bool {
    f.id == Some(sel.id)
        && sel
            .side
            .is_none_or(|s| f.side.is_some_and(|x| x.value == s))
        && sel
            .peer
            .is_none_or(|p| f.peer.as_ref().is_some_and(|x| x.0 == Addr::from(p).0))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::EnumVal;
    use crate::uapi::SIDE;

    /// Dump filtering (a module without flow-get's do).
    #[test]
    fn selector_matches_dumped_flows() {
        let sel = |id: &str, kv: &[&str]| {
            let kv: Vec<String> = kv.iter().map(|s| s.to_string()).collect();
            FlowSel::parse(id, &kv).unwrap()
        };
        let f = Flow {
            id: Some(7),
            side: Some(EnumVal {
                names: SIDE,
                value: 1,
            }),
            peer: Some(Addr(vec![10, 0, 0, 2])),
            ..Flow::default()
        };
        let csf = sel("7", &["peer", "10.0.0.2", "side", "csf"]);
        assert!(!matches(&csf, &f), "side differs");
        assert!(matches(&sel("7", &["side", "crf"]), &f));
        assert!(matches(&sel("7", &["peer", "10.0.0.2"]), &f));
        assert!(!matches(&sel("7", &["peer", "10.0.0.3"]), &f));
        assert!(matches(&sel("7", &[]), &f));
        assert!(!matches(&sel("8", &[]), &f));
    }
}
