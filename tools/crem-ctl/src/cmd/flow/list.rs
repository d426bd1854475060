//! `crem-ctl flow [list] [peer ADDR] [side csf|crf] [state S] [kind K]
//! [min-loss PPM]`: the flow table, filtered here from the whole dump (the
//! kernel has no filtered dump), with `-s` each flow's counters under it.

use crate::model::{Addr, Flow};
use crate::nl::Conn;
use crate::parse::FlowFilter;
use crate::request::get_flows;
use crate::stdio::Format;
use crate::{output, Fail, Res};

/// The filter words of 'flow' and 'flow list'.
#[derive(clap::Args, Debug, Default)]
#[group(skip)]
pub struct Filter {
    /// peer ADDR, side csf|crf, state S, kind requests|responses,
    /// min-loss PPM: list only the flows that match every one given
    #[arg(value_name = "FILTER", num_args = 0..)]
    pub(super) words: Vec<String>,
}

pub fn run(filter: &Filter, fmt: Format) -> Res {
    let filter = parse(&filter.words)?;
    let mut c = Conn::open()?;
    let all = get_flows(&mut c)?;
    let total = all.len();
    let fl: Vec<Flow> = all.into_iter().filter(|f| matches(&filter, f)).collect();
    // The title says how many there were only when a filter left some out
    // of the list.
    let of = (filter != FlowFilter::default()).then_some(total);
    fmt.print(&serde_json::json!({ "flow": fl }), || {
        output::flows(&fl, fmt.stats, of)
    });
    Ok(())
}

/// The filter words; a flow ID where a filter key should be is most likely
/// 'flow 7' meant as 'flow show 7', and the message says so.
fn parse(words: &[String]) -> Res<FlowFilter> {
    if let Some(w) = words.first().filter(|w| w.parse::<u32>().is_ok()) {
        return Err(Fail::Usage(format!(
            "'{w}' is not a filter key (peer, side, state, kind or min-loss); \
             'crem-ctl flow show {w}' shows that flow"
        )));
    }
    FlowFilter::parse(words).map_err(Fail::Usage)
}

/// True if flow `f` meets every condition of `filter`; a flow without the
/// attribute a condition is about does not.
pub fn matches(filter: &FlowFilter, f: &Flow) -> bool {
    let is = |want: Option<u8>, got: Option<crate::model::EnumVal>| {
        want.is_none_or(|w| got.is_some_and(|g| g.value == w))
    };
    filter
        .peer
        .is_none_or(|p| f.peer.as_ref() == Some(&Addr::from(p)))
        && is(filter.side, f.side)
        && is(filter.state, f.state)
        && is(filter.kind, f.kind)
        && filter
            .min_loss_ppm
            .is_none_or(|m| f.loss_ppm.is_some_and(|l| l >= m))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::enum_val;
    use crate::uapi::{FLOW_KIND, FLOW_STATE, SIDE};

    fn flow(peer: &str, side: u8, state: u8, kind: Option<u8>, loss: Option<u32>) -> Flow {
        Flow {
            peer: Some(Addr::from(peer.parse::<std::net::IpAddr>().unwrap())),
            side: Some(enum_val(SIDE, side.into())),
            state: Some(enum_val(FLOW_STATE, state.into())),
            kind: kind.map(|k| enum_val(FLOW_KIND, k.into())),
            loss_ppm: loss,
            ..Default::default()
        }
    }

    /// Which of `flows` the filter words keep, by index.
    fn kept(words: &[&str], flows: &[Flow]) -> Vec<usize> {
        let w: Vec<String> = words.iter().map(|s| s.to_string()).collect();
        let f = FlowFilter::parse(&w).unwrap();
        (0..flows.len())
            .filter(|&i| matches(&f, &flows[i]))
            .collect()
    }

    #[test]
    fn a_flow_id_is_no_filter() {
        match parse(&["7".to_string()]) {
            Err(Fail::Usage(m)) => assert_eq!(
                m,
                "'7' is not a filter key (peer, side, state, kind or min-loss); \
                 'crem-ctl flow show 7' shows that flow"
            ),
            _ => panic!("7 accepted"),
        }
    }

    #[test]
    fn filters_the_dump() {
        let flows = [
            flow("10.0.0.2", 0, 1, Some(0), Some(0)),
            flow("10.0.0.2", 1, 1, Some(1), Some(5000)),
            flow("10.0.0.3", 1, 0, None, None),
            flow("10.0.0.3", 0, 3, Some(0), Some(999)),
        ];
        assert_eq!(kept(&[], &flows), [0, 1, 2, 3]);
        assert_eq!(kept(&["peer", "10.0.0.2"], &flows), [0, 1]);
        assert_eq!(kept(&["peer", "10.0.0.9"], &flows), [] as [usize; 0]);
        assert_eq!(kept(&["side", "crf"], &flows), [1, 2]);
        assert_eq!(kept(&["state", "protected"], &flows), [0, 1]);
        assert_eq!(kept(&["state", "closing"], &flows), [3]);
        // A flow without a kind (an older module) matches no kind.
        assert_eq!(kept(&["kind", "requests"], &flows), [0, 3]);
        assert_eq!(kept(&["kind", "responses"], &flows), [1]);
        // min-loss is inclusive; a flow without loss-ppm is left out.
        assert_eq!(kept(&["min-loss", "999"], &flows), [1, 3]);
        assert_eq!(kept(&["min-loss", "0"], &flows), [0, 1, 3]);
        assert_eq!(kept(&["min-loss", "0.5%"], &flows), [1]);
        // Every condition must hold.
        assert_eq!(kept(&["peer", "10.0.0.3", "side", "csf"], &flows), [3]);
        assert_eq!(
            kept(
                &["side", "crf", "state", "protected", "min-loss", "1"],
                &flows
            ),
            [1]
        );
    }
}
