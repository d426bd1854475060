//! Parsing of what the operator types: the KEY VALUE words of `set`, of
//! the flow commands and of a configuration file's [CREM] section, and the
//! values in them (numbers with units, probabilities, addresses, peers).
//! Everything is checked before anything is sent; the messages say what was
//! expected.

mod config;
mod elems;
mod flow;
mod value;

pub use config::{apply_kv, canonical_key, norm_key, parse_set_args, KEYS};
pub use elems::{addresses, peer_entries, peer_selectors, PeerSel};
pub use flow::{FlowFilter, FlowNew, FlowSel, FlowSet, Pin};
pub use value::{
    format_duration_us, format_epsilon, format_size, is_none_list, parse_peer, prefix_contains,
    NONE,
};

/// The words after a command's fixed arguments, walked in order: keys, each
/// with the value that follows it, or standing alone for a flag (flow set's
/// `adaptive`). Every command says the same thing when a value is missing.
pub struct Words<'a> {
    it: std::slice::Iter<'a, String>,
}

impl<'a> Words<'a> {
    pub fn new(args: &'a [String]) -> Self {
        Words { it: args.iter() }
    }

    /// The next key; `None` at the end.
    pub fn key(&mut self) -> Option<&'a str> {
        self.it.next().map(String::as_str)
    }

    /// The value that follows `key`.
    pub fn value(&mut self, key: &str) -> Result<&'a str, String> {
        self.key().ok_or_else(|| format!("'{key}' needs a value"))
    }
}

/// The message for a key that a command does not take.
pub fn unknown_key(key: &str, expected: &str) -> String {
    format!("unknown key '{key}' (expected {expected})")
}
