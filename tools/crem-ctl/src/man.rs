//! `crem-ctl generate-man DIR`: the manual pages crem-ctl(8), one per
//! command (crem-ctl-flow(8)) and one per nested command
//! (crem-ctl-flow-add(8)), as git and ip have them, made from the clap
//! definition with clap_mangen, so they say what --help says and are never
//! edited by hand. `make install` runs it.
//!
//! It is not a command of [`Cli`]: clap_complete puts hidden subcommands in
//! the completion scripts, so main.rs hands `crem-ctl generate-man ...` here
//! before the command line is parsed, and --help and the completions stay
//! as they were.
//!
//! clap_mangen writes the title, NAME, SYNOPSIS, OPTIONS and the list of
//! commands. The help text (the long about and the text after the options)
//! is laid out for a terminal, with tables and examples aligned by spaces:
//! [`help_text`] turns its "HEADING:" lines into sections, sets its plain
//! paragraphs as filled text, and keeps every indented or aligned line, and
//! every example, as it is (no fill).

use crate::{Cli, Fail, Res};
use clap::{Command, CommandFactory, Parser};
use clap_mangen::roff::{bold, roman, Roff};
use clap_mangen::Man;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// The word (crem-ctl's first argument) that runs the generator.
pub const COMMAND: &str = "generate-man";

/// The manual section of every page: system administration, as ip(8) and
/// wg(8).
const SECTION: &str = "8";

/// The man pages to write (`crem-ctl generate-man DIR`).
#[derive(Parser, Debug)]
#[command(
    name = "crem-ctl generate-man",
    bin_name = "crem-ctl generate-man",
    about = "Write crem-ctl's manual pages (crem-ctl.8, crem-ctl-COMMAND.8, ...) into DIR",
    long_about = None
)]
struct Args {
    /// Directory for the pages (created if missing; pages in it are replaced)
    dir: PathBuf,
}

/// `args` is the command line from "generate-man" on. Prints the path of
/// each page written.
pub fn run(args: &[OsString]) -> Res {
    let a = Args::try_parse_from(args).unwrap_or_else(|e| e.exit());
    let written = write_pages(&a.dir).map_err(Fail::Failed)?;
    for p in written {
        crate::stdio::out(&format!("{}\n", p.display()));
    }
    Ok(())
}

/// Writes every page into `dir`; returns their paths.
fn write_pages(dir: &Path) -> Result<Vec<PathBuf>, String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    pages()
        .into_iter()
        .map(|(file, text)| {
            let path = dir.join(file);
            std::fs::write(&path, text).map_err(|e| format!("{}: {e}", path.display()))?;
            Ok(path)
        })
        .collect()
}

/// Every page, (file name, roff source): crem-ctl.8 first, then each
/// command's page before its own commands', in --help's order.
pub fn pages() -> Vec<(String, String)> {
    let mut root = without_help_commands(Cli::command());
    // Sets each command's display name ("crem-ctl-flow-add", the page's
    // name) and bin name ("crem-ctl flow add", the synopsis's).
    root.build();
    let mut out = Vec::new();
    walk(&root, None, &mut out);
    out
}

/// clap's `help` command is --help said otherwise: no page of its own, and
/// not in the COMMANDS lists.
fn without_help_commands(cmd: Command) -> Command {
    cmd.disable_help_subcommand(true)
        .mut_subcommands(without_help_commands)
}

fn walk(cmd: &Command, parent: Option<&Command>, out: &mut Vec<(String, String)>) {
    out.push((format!("{}.{SECTION}", page_name(cmd)), page(cmd, parent)));
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        walk(sub, Some(cmd), out);
    }
}

/// "crem-ctl", "crem-ctl-flow", "crem-ctl-flow-add".
fn page_name(cmd: &Command) -> &str {
    cmd.get_display_name().unwrap_or(cmd.get_name())
}

/// The page of `cmd` (a built command), roff source.
fn page(cmd: &Command, parent: Option<&Command>) -> String {
    // Headings as the pages' own: COMMANDS, and "[command]" in SYNOPSIS
    // (--help says "Commands:", "[COMMAND]").
    let for_man = cmd
        .clone()
        .subcommand_help_heading("COMMANDS")
        .subcommand_value_name("COMMAND");
    let man = Man::new(for_man)
        .title(page_name(cmd).to_uppercase().replace('-', "\\-"))
        .section(SECTION)
        .date(date())
        .source(format!("crem-ctl {}", env!("CARGO_PKG_VERSION")))
        .manual("CREM");
    // Man writes each part with the same preamble (an apostrophe string
    // definition): once at the top is enough.
    let preamble = Roff::new().render();
    let mut page = preamble.clone();
    let mut part = |f: &dyn Fn(&mut Vec<u8>) -> std::io::Result<()>| {
        let mut buf = Vec::new();
        f(&mut buf).expect("writing to a Vec does not fail");
        let text = String::from_utf8(buf).expect("roff from UTF-8 text is UTF-8");
        page.push_str(text.strip_prefix(preamble.as_str()).unwrap_or(&text));
    };
    part(&|w| man.render_title(w));
    // Left-adjusted, no hyphenation: the text is full of attribute names
    // and commands (epsilon-ppb, repair-request) that a hyphen would garble.
    let mut r = Roff::new();
    r.control("nh", []).control("ad", ["l"]);
    part(&|w| r.to_writer(w));
    part(&|w| man.render_name_section(w));
    part(&|w| man.render_synopsis_section(w));

    let mut r = Roff::new();
    r.control("SH", ["DESCRIPTION"]);
    if let Some(about) = cmd.get_long_about().or(cmd.get_about()) {
        help_text(&mut r, &about.to_string(), None);
    }
    part(&|w| r.to_writer(w));

    if cmd.get_arguments().any(|a| !a.is_hide_set()) {
        part(&|w| man.render_options_section(w));
    }
    if cmd.get_subcommands().any(|s| !s.is_hide_set()) {
        part(&|w| man.render_subcommands_section(w));
    }

    let mut r = Roff::new();
    if let Some(after) = cmd.get_after_long_help().or(cmd.get_after_help()) {
        // Text after the options that starts without a heading of its own
        // must not run on into the last option's paragraph.
        help_text(&mut r, &after.to_string(), Some("NOTES"));
    }
    see_also(&mut r, parent.map(page_name));
    part(&|w| r.to_writer(w));
    page
}

/// The pages' date, YYYY-MM-DD: SOURCE_DATE_EPOCH's (reproducible builds)
/// when set, else today's (UTC). Never empty: an empty .TH argument would
/// shift the source and manual into its place.
fn date() -> String {
    let secs = std::env::var("SOURCE_DATE_EPOCH")
        .ok()
        .and_then(|s| s.trim().parse::<u64>().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_secs())
        });
    let (y, m, d) = civil_from_days((secs / 86_400) as i64);
    format!("{y:04}-{m:02}-{d:02}")
}

/// The proleptic Gregorian date of a day count since 1970-01-01 (Howard
/// Hinnant's civil_from_days).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

/// SEE ALSO: the parent command's page (a command's), crem(4), and for
/// crem-ctl(8) ip-netns(8) (its description names `ip netns exec`).
fn see_also(r: &mut Roff, parent: Option<&str>) {
    let mut refs: Vec<(&str, &str)> = Vec::new();
    match parent {
        Some(p) => {
            if p != "crem-ctl" {
                refs.push(("crem-ctl", SECTION));
            }
            refs.push((p, SECTION));
            refs.push(("crem", "4"));
        }
        None => {
            refs.push(("crem", "4"));
            refs.push(("ip-netns", "8"));
        }
    }
    r.control("SH", ["SEE ALSO"]);
    let mut line = Vec::new();
    for (i, (name, sect)) in refs.iter().enumerate() {
        let sep = if i + 1 < refs.len() { ", " } else { "" };
        line.push(bold(*name));
        line.push(roman(format!("({sect}){sep}")));
    }
    r.text(line);
}

/// A line of help text that starts a section: "EXAMPLES:", "EXIT STATUS:",
/// "JSON (-j):", "I/O FORMAT:" (not indented; capitals, spaces and '/'
/// before any parenthesis). Returns the section's name.
fn heading(line: &str) -> Option<&str> {
    let name = line.strip_suffix(':')?;
    let words = name.split('(').next().unwrap_or("");
    let caps = words
        .chars()
        .all(|c| c.is_ascii_uppercase() || c == ' ' || c == '/')
        && words.chars().filter(|c| c.is_ascii_uppercase()).count() >= 2;
    (caps && !line.starts_with(' ') && name.len() <= 40).then_some(name)
}

/// Whether a line (its section's indentation removed) is prose: not
/// indented, and not aligned in columns (no run of two spaces).
fn is_prose(line: &str) -> bool {
    !line.starts_with(' ') && !line.trim_end().contains("  ")
}

/// Puts help text, as --help prints it, into `r`: "HEADING:" lines become
/// sections; within a section (its common indentation removed), blocks
/// apart are paragraphs; prose lines are filled, other lines (tables,
/// indented lists) and every line of an EXAMPLES section are kept as they
/// are. Text before the first heading goes on the section `r` is in, or
/// under `lead` if given.
fn help_text(r: &mut Roff, text: &str, lead: Option<&'static str>) {
    // (heading, its lines); the text before the first heading has `lead`.
    let mut sections: Vec<(Option<&str>, Vec<&str>)> = vec![(lead, Vec::new())];
    for line in text.lines() {
        match heading(line) {
            Some(h) => sections.push((Some(h), Vec::new())),
            None => sections.last_mut().expect("one at least").1.push(line),
        }
    }
    for (i, (head, lines)) in sections.into_iter().enumerate() {
        // Nothing before the first heading: no lead section.
        if i == 0 && lines.iter().all(|l| l.trim().is_empty()) {
            continue;
        }
        if let Some(h) = head {
            r.control("SH", [h.replace('-', "\\-").as_str()]);
        }
        let examples = head.is_some_and(|h| h.starts_with("EXAMPLE"));
        let indent = lines
            .iter()
            .filter(|l| !l.trim().is_empty())
            .map(|l| l.len() - l.trim_start().len())
            .min()
            .unwrap_or(0);
        let mut first = true;
        for block in lines.split(|l| l.trim().is_empty()) {
            if block.is_empty() {
                continue;
            }
            if !first {
                r.control("PP", []);
            }
            first = false;
            let block: Vec<&str> = block.iter().map(|l| l[indent..].trim_end()).collect();
            let runs: Vec<&[&str]> = if examples {
                vec![&block]
            } else {
                block.chunk_by(|a, b| is_prose(a) == is_prose(b)).collect()
            };
            for run in runs {
                if !examples && is_prose(run[0]) {
                    for l in run {
                        r.text([roman(*l)]);
                    }
                } else {
                    r.control("nf", []);
                    for l in run {
                        r.text([roman(*l)]);
                    }
                    r.control("fi", []);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::{Command as Process, Stdio};

    fn page_named(name: &str) -> String {
        pages()
            .into_iter()
            .find(|(f, _)| f == name)
            .unwrap_or_else(|| panic!("no page {name}"))
            .1
    }

    #[test]
    fn a_page_for_every_command_and_nested_command() {
        let names: Vec<String> = pages().into_iter().map(|(f, _)| f).collect();
        let mut want = vec!["crem-ctl.8".to_string()];
        for sub in Cli::command().get_subcommands() {
            want.push(format!("crem-ctl-{}.8", sub.get_name()));
            for nested in sub.get_subcommands() {
                want.push(format!(
                    "crem-ctl-{}-{}.8",
                    sub.get_name(),
                    nested.get_name()
                ));
            }
        }
        // clap's help commands are not built into Cli::command() yet here.
        assert_eq!(names, want);
        for n in [
            "crem-ctl-flow.8",
            "crem-ctl-flow-add.8",
            "crem-ctl-stats-reset.8",
            "crem-ctl-fec-encode.8",
            "crem-ctl-setconf.8",
        ] {
            assert!(names.contains(&n.to_string()), "{n}: {names:?}");
        }
        assert!(!names.iter().any(|n| n.contains("help")), "{names:?}");
    }

    #[test]
    fn the_generator_is_not_a_command() {
        let help = Cli::command().render_long_help().to_string();
        assert!(!help.contains(COMMAND));
        assert!(Cli::try_parse_from(["crem-ctl", COMMAND, "/tmp"]).is_err());
        assert!(Args::try_parse_from(["crem-ctl generate-man"]).is_err());
        assert!(Args::try_parse_from(["crem-ctl generate-man", "d"]).is_ok());
    }

    #[test]
    fn pages_carry_the_help_text_and_point_at_each_other() {
        let top = page_named("crem-ctl.8");
        assert!(top.starts_with(&Roff::new().render()), "{top}");
        assert_eq!(top.matches(".ds Aq").count(), 2, "preamble once: {top}");
        assert!(top.contains(".TH CREM\\-CTL 8"), "{top}");
        assert!(top.contains(".SH COMMANDS"), "{top}");
        assert!(top.contains("crem\\-ctl\\-flow(8)"), "{top}");
        assert!(top.contains(".SH \"EXIT STATUS\""), "{top}");
        assert!(top.contains("\\fBcrem\\fR(4)"), "{top}");
        let add = page_named("crem-ctl-flow-add.8");
        assert!(add.contains(".TH CREM\\-CTL\\-FLOW\\-ADD 8"), "{add}");
        assert!(
            add.contains("\\fBcrem\\-ctl flow add\\fR"),
            "synopsis: {add}"
        );
        assert!(
            add.contains("\\fBcrem\\-ctl\\-flow\\fR(8)"),
            "see also: {add}"
        );
        let set = page_named("crem-ctl-set.8");
        assert!(set.contains(".SH KEYS"), "{set}");
        assert!(set.contains(".SH EXAMPLES\n.nf\n"), "{set}");
    }

    #[test]
    fn dates() {
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(11_016), (2000, 2, 29));
        assert_eq!(civil_from_days(20_000), (2024, 10, 4));
        assert_eq!(civil_from_days(-1), (1969, 12, 31));
        assert_eq!(date().len(), 10);
    }

    #[test]
    fn headings_prose_and_tables() {
        assert_eq!(heading("EXAMPLES:"), Some("EXAMPLES"));
        assert_eq!(heading("JSON (-j):"), Some("JSON (-j)"));
        assert_eq!(heading("EXIT STATUS:"), Some("EXIT STATUS"));
        assert_eq!(heading("    EXAMPLES:"), None);
        assert_eq!(heading("Shows the counters, in sections:"), None);
        assert_eq!(heading("I/O FORMAT:"), Some("I/O FORMAT"));
        assert_eq!(heading("NOTATION:"), Some("NOTATION"));
        assert_eq!(heading("A:"), None);
        let mut r = Roff::new();
        help_text(
            &mut r,
            "Intro line one\nline two\n\nKEYS:\n    port PORT   the port\n                the rest\n\n    Keys are\n    words.\n\nEXAMPLES:\n    crem-ctl a\n    crem-ctl b",
            None,
        );
        assert_eq!(
            r.to_roff(),
            "Intro line one\nline two\n.SH KEYS\n.nf\nport PORT   the port\n            the rest\n.fi\n.PP\nKeys are\nwords.\n.SH EXAMPLES\n.nf\ncrem\\-ctl a\ncrem\\-ctl b\n.fi\n"
        );
        let mut r = Roff::new();
        help_text(
            &mut r,
            "\nafter the options\n\nEXIT STATUS:\n    0 ok",
            Some("NOTES"),
        );
        assert_eq!(
            r.to_roff(),
            ".SH NOTES\nafter the options\n.SH \"EXIT STATUS\"\n0 ok\n"
        );
        let mut r = Roff::new();
        help_text(&mut r, "EXIT STATUS:\n    0 ok", Some("NOTES"));
        assert_eq!(r.to_roff(), ".SH \"EXIT STATUS\"\n0 ok\n");
    }

    /// A file of the repository, from the crate's directory.
    fn repo_file(path: &str) -> String {
        let full = format!("{}/../../{path}", env!("CARGO_MANIFEST_DIR"));
        std::fs::read_to_string(&full).unwrap_or_else(|e| panic!("{full}: {e}"))
    }

    /// The module parameters the module's sources declare: module_param()
    /// in the C helpers (the Rust crate root has none: checked).
    fn module_params() -> Vec<String> {
        assert!(
            !repo_file("rust/crem_main.rs").contains("params:"),
            "module! declares parameters: teach this test to read them"
        );
        let dir = format!("{}/../../rust/helpers", env!("CARGO_MANIFEST_DIR"));
        let mut names = Vec::new();
        for e in std::fs::read_dir(dir).unwrap() {
            let path = e.unwrap().path();
            if path.extension().is_some_and(|x| x == "c") {
                let text = std::fs::read_to_string(&path).unwrap();
                // module_param(NAME, ...) and module_param_named(NAME, VAR, ...).
                for mark in ["module_param(", "module_param_named("] {
                    for part in text.split(mark).skip(1) {
                        names.push(part.split(',').next().unwrap().trim().to_string());
                    }
                }
            }
        }
        names.sort();
        names
    }

    /// docs/man/crem.4 is written by hand: it names every module parameter
    /// the sources declare and no other, every operation and attribute of
    /// the netlink spec (crem_core::nl, checked against netlink/crem.yaml)
    /// and the multicast group.
    #[test]
    fn crem_4_names_every_parameter_operation_and_attribute() {
        use crate::help::tests::has_word;
        use crate::uapi::{AttrType, MCGRP_EVENTS, OPS, SETS};
        let page = repo_file("docs/man/crem.4").replace("\\-", "-");
        let params = module_params();
        assert_eq!(params, ["fault_corrupt_repair", "flow_idle_s"]);
        for p in &params {
            assert!(page.contains(&format!(".BI {p}= ")), "parameter {p}");
        }
        for part in page.split(".BI ").skip(1) {
            let name = part.split('=').next().unwrap();
            assert!(params.iter().any(|p| p == name), "crem.4 names {name:?}");
        }
        for (op, _) in OPS {
            assert!(has_word(&page, op), "operation {op}");
        }
        assert!(has_word(&page, MCGRP_EVENTS));
        for set in SETS {
            for a in set.attrs.iter().filter(|a| a.ty != AttrType::Pad) {
                assert!(has_word(&page, a.name), "{}.{}", set.name, a.name);
            }
        }
    }

    /// Formats `text` with groff -man, every warning on (-ww); returns what
    /// it shows, or None where groff is not installed.
    fn groff(name: &str, text: &str) -> Option<String> {
        if Process::new("groff").arg("-v").output().is_err() {
            eprintln!(
                "groff not installed: {name} not formatted (vm/setup.sh installs groff-base)"
            );
            return None;
        }
        let mut child = Process::new("groff")
            .args(["-man", "-ww", "-Tutf8", "-P-cbou"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        use std::io::Write as _;
        child
            .stdin
            .take()
            .unwrap()
            .write_all(text.as_bytes())
            .unwrap();
        let out = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success() && err.is_empty(), "{name}: {err}");
        Some(String::from_utf8_lossy(&out.stdout).into_owned())
    }

    #[test]
    fn groff_formats_crem_4_without_warnings() {
        if let Some(shown) = groff("crem.4", &repo_file("docs/man/crem.4")) {
            assert!(shown.contains("flow_idle_s=SECONDS"), "{shown}");
        }
    }

    /// groff, if installed, formats every page without a warning (-ww: all
    /// of them), and the text shows the help's examples and tables intact.
    #[test]
    fn groff_formats_every_page_without_warnings() {
        for (name, text) in pages() {
            let Some(shown) = groff(&name, &text) else {
                return;
            };
            if name == "crem-ctl-set.8" {
                for l in [
                    "crem-ctl set k 16 m 4 epsilon 1e-5 hold 2ms",
                    "port PORT          CREM UDP port, 0..65535; 0 turns CREM off. There is no",
                    "4  permission denied: changing CREM needs CAP_NET_ADMIN over the network",
                ] {
                    assert!(shown.contains(l), "{name}: {l:?} not in\n{shown}");
                }
            }
            if name == "crem-ctl.8" {
                let want =
                    "crem-ctl -j flow | jq '.flow[] | {id, side, restored: .stats.restored}'";
                assert!(shown.contains(want), "{name}:\n{shown}");
            }
        }
    }
}
