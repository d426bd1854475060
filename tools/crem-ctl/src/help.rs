//! The parts of --help that several commands share: the exit status, the
//! JSON conventions, the flow-stats keys, a key list from the spec, and how
//! a command's text after its options is put together.

use crate::uapi::{AttrSet, AttrType, FLOW_STATS_SET, MSG_TYPES_SET};

pub const EXIT_STATUS: &str = "\
EXIT STATUS:
    0  success
    1  the operation failed: the kernel refused the request (its reason is
       printed verbatim), a netlink or I/O error, an ICRC mismatch, or data
       that cannot be decoded
    2  usage error: bad command line, key, value or file; nothing was sent
    3  CREM is not available: the crem module is not loaded, it does not
       support the operation (no such command), or its netlink family has
       another version than this crem-ctl's
    4  permission denied: changing CREM needs CAP_NET_ADMIN over the network
       namespace";

pub const JSON_NOTE: &str = "\
JSON (-j):
    One JSON object whose keys are the attribute names of the \"crem\" family's
    YAML spec (netlink/crem.yaml): \"config\", \"stats\", \"flow\" at the top,
    then e.g. \"port\", \"symbol-len\", \"epsilon-ppb\", \"hold-us\",
    \"reporter\", \"peer\" (with \"prefix\", \"prefix-len\", \"addr\"). Numbers
    are JSON numbers in the kernel's units (ppb, us, octets); enum values
    (role, recovery, adaptive and report \"on\"/\"off\", a flow's scheme,
    state, loss class, breaker, side, kind) are their YAML names, as the text shows
    them, or their number if this crem-ctl does not know the value;
    addresses are strings. The shape matches the kernel's YNL client
    (tools/net/ynl/cli.py --output-json) except that addresses are text.
    'crem-ctl stats --help' and 'crem-ctl flow --help' list every key of
    \"stats\" and \"flow\".";

/// The keys of a "flow-stats" nest (stats totals, a flow's stats) and of
/// a "msg-types" nest, with the spec's words: an attribute added to the
/// spec is listed.
pub fn flow_stats_keys() -> String {
    format!(
        "    \"flow-stats\" keys (the \"totals\" of stats, the \"stats\" of a flow), in
    spec order, each a u64 counter but the two by-type objects (CSF: the
    sender's, CRF: the receiver's; the text output groups them so):
{}
    \"msg-types\" keys (msgs-in-by-type, msgs-out-by-type of a flow, of the
    totals and of \"stats\"), in spec order, each a u64 count of one CREM
    message type:
{}",
        spec_keys(&FLOW_STATS_SET),
        spec_keys(&MSG_TYPES_SET)
    )
}

/// A command's text after its options (--help): EXAMPLES, when it has
/// some, then `sections`, then EXIT STATUS, a blank line apart.
pub fn after(examples: &[&str], sections: &[&str]) -> String {
    let mut parts: Vec<String> = Vec::new();
    if !examples.is_empty() {
        let lines: Vec<String> = examples.iter().map(|e| format!("    {e}")).collect();
        parts.push(format!("EXAMPLES:\n{}", lines.join("\n")));
    }
    parts.extend(sections.iter().map(|s| s.to_string()));
    parts.push(EXIT_STATUS.to_string());
    parts.join("\n\n")
}

/// Every attribute of `set` (but the pad) with its doc from the spec,
/// one per line in spec order, the doc wrapped under itself: a key list
/// that the spec keeps current (an attribute added there is listed).
pub fn spec_keys(set: &AttrSet) -> String {
    const INDENT: usize = 6;
    const WIDTH: usize = 79;
    let attrs: Vec<_> = set.attrs.iter().filter(|a| a.ty != AttrType::Pad).collect();
    let name_w = attrs.iter().map(|a| a.name.len()).max().unwrap_or(0) + 2;
    let mut out = String::new();
    for a in attrs {
        let mut line = format!("{:INDENT$}{:name_w$}", "", a.name);
        let hang = INDENT + name_w;
        let mut fresh = true;
        for w in a.doc.split_whitespace() {
            if !fresh && line.len() + 1 + w.len() > WIDTH {
                out.push_str(line.trim_end());
                out.push('\n');
                line = " ".repeat(hang);
                fresh = true;
            }
            if !fresh {
                line.push(' ');
            }
            line.push_str(w);
            fresh = false;
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out.trim_end().to_string()
}

#[cfg(test)]
pub mod tests {
    use crate::uapi::{AttrSet, AttrType};
    use crate::Cli;
    use clap::CommandFactory;

    /// The long help of the command at `path` (e.g. ["flow", "add"]).
    pub fn long_help(path: &[&str]) -> String {
        let mut cmd = Cli::command();
        let mut sub = &mut cmd;
        for name in path {
            sub = sub.find_subcommand_mut(name).unwrap();
        }
        sub.render_long_help().to_string()
    }

    /// Whether `help` has `w` as a word (letters, digits and '-').
    pub fn has_word(help: &str, w: &str) -> bool {
        help.split(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
            .any(|x| x == w)
    }

    /// Checks that `help` has a JSON section naming every attribute of
    /// `sets` (what -j can print).
    pub fn names_every_key(help: &str, sets: &[&AttrSet]) {
        assert!(help.contains("JSON (-j):"), "{help}");
        for set in sets {
            for a in set.attrs.iter().filter(|a| a.ty != AttrType::Pad) {
                assert!(
                    has_word(help, a.name),
                    "{}.{} missing in\n{help}",
                    set.name,
                    a.name
                );
            }
        }
    }

    #[test]
    fn every_netlink_command_documents_exit_status() {
        for name in [
            "show", "set", "stats", "monitor", "flow", "setconf", "showconf", "decode", "roce",
        ] {
            assert!(long_help(&[name]).contains("EXIT STATUS"), "{name}");
        }
        for name in ["list", "show", "del", "add", "reset", "set"] {
            let help = long_help(&["flow", name]);
            assert!(help.contains("EXIT STATUS"), "flow {name}");
        }
    }

    #[test]
    fn after_puts_examples_sections_and_exit_status_apart() {
        assert_eq!(super::after(&[], &[]), super::EXIT_STATUS);
        let t = super::after(&["crem-ctl a", "crem-ctl b"], &["S1", "S2"]);
        assert_eq!(
            t,
            format!(
                "EXAMPLES:\n    crem-ctl a\n    crem-ctl b\n\nS1\n\nS2\n\n{}",
                super::EXIT_STATUS
            )
        );
    }
}
