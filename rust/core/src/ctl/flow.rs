//! The pure rules of the flow ops (`rust/netlink/flow.rs`): the k and m of
//! flow-set (pinning) and flow-new (a fixed configuration).

use super::super::engine::module_caps::MAX_M;
use super::super::nl;
use super::{Field, Refusal, Why};

/// k and m of a flow request (`FLOW_K`, `FLOW_M`; `None`: absent), given
/// together: both present (else [`Why::KmTogether`], naming k if given,
/// else m, else nothing), k at least 1 ([`Why::KZero`], naming k), k + m at
/// most 255 ([`Why::KPlusM`], naming m), m at most [`MAX_M`]
/// ([`Why::MTooLarge`], naming m), in this order; the texts are
/// config-set's for the two rules they share.
pub fn km(k: Option<u8>, m: Option<u8>) -> Result<(u8, u8), Refusal> {
    let at = |id| Some(Field::Flow(id));
    let (Some(k), Some(m)) = (k, m) else {
        let given = match (k, m) {
            (Some(_), _) => at(nl::FLOW_K),
            (None, Some(_)) => at(nl::FLOW_M),
            (None, None) => None,
        };
        return Err(Refusal::new(given, Why::KmTogether));
    };
    if k == 0 {
        return Err(Refusal::new(at(nl::FLOW_K), Why::KZero));
    }
    if u16::from(k) + u16::from(m) > 255 {
        return Err(Refusal::new(at(nl::FLOW_M), Why::KPlusM));
    }
    if m > MAX_M {
        return Err(Refusal::new(at(nl::FLOW_M), Why::MTooLarge));
    }
    Ok((k, m))
}

#[cfg(test)]
mod tests {
    use super::super::EINVAL;
    use super::*;

    #[test]
    fn rules_in_order() {
        let r = |at, why| Err(Refusal::new(at, why));
        let (fk, fm) = (Some(Field::Flow(nl::FLOW_K)), Some(Field::Flow(nl::FLOW_M)));
        assert_eq!(km(Some(8), None), r(fk, Why::KmTogether));
        assert_eq!(km(None, Some(2)), r(fm, Why::KmTogether));
        assert_eq!(km(None, None), r(None, Why::KmTogether));
        // k = 0 before k + m and m.
        assert_eq!(km(Some(0), Some(255)), r(fk, Why::KZero));
        // k + m before m.
        assert_eq!(km(Some(250), Some(17)), r(fm, Why::KPlusM));
        assert_eq!(km(Some(8), Some(17)), r(fm, Why::MTooLarge));
        assert_eq!(km(Some(239), Some(16)), Ok((239, 16)));
        assert_eq!(km(Some(255), Some(0)), Ok((255, 0)));
        assert_eq!(km(Some(240), Some(16)), r(fm, Why::KPlusM));
        assert_eq!(km(Some(8), None).unwrap_err().errno, EINVAL);
    }
}
