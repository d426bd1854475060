//! `crem-ctl completions SHELL`: the completion scripts clap_complete
//! generates from the CLI definition, with its bash script repaired for a
//! hyphenated binary name and its fish script kept from offering file names
//! where none is meant.

use crate::stdio::out;
use crate::{Cli, Res};
use clap::{Command, CommandFactory, ValueEnum, ValueHint};
use clap_complete::Shell;

/// Print a shell completion script
#[derive(clap::Args, Debug)]
#[command(long_about = "\
Prints a completion script for SHELL on standard output, e.g.
    crem-ctl completions bash > /etc/bash_completion.d/crem-ctl
    crem-ctl completions zsh > \"${fpath[1]}/_crem-ctl\"
    crem-ctl completions fish > ~/.config/fish/completions/crem-ctl.fish")]
pub struct Args {
    #[arg(value_enum)]
    shell: CompletionShell,
}

// The shells whose scripts are checked (tests below); clap_complete knows more.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum CompletionShell {
    Bash,
    Zsh,
    Fish,
}

pub fn run(a: Args) -> Res {
    let sh = match a.shell {
        CompletionShell::Bash => Shell::Bash,
        CompletionShell::Zsh => Shell::Zsh,
        CompletionShell::Fish => Shell::Fish,
    };
    out(&script(sh, &mut Cli::command()));
    Ok(())
}

/// The name completion is registered for.
const BIN: &str = "crem-ctl";

/// The completion script for `shell`.
fn script(shell: Shell, cmd: &mut Command) -> String {
    let mut buf = Vec::new();
    let mut cmd = words_are_not_files(cmd.clone());
    let cmd = &mut cmd;
    clap_complete::generate(shell, cmd, BIN, &mut buf);
    let text = String::from_utf8_lossy(&buf).into_owned();
    match shell {
        Shell::Bash => fix_bash_state_names(&text),
        Shell::Fish => fish_files_only_for_paths(&text, cmd),
        _ => text,
    }
}

/// clap_complete's fish script (it does not complete positional arguments)
/// leaves fish's default on, so a subcommand that takes one (`flow [FILTER]`)
/// offers the directory's file names beside its subcommands. Files are
/// turned off for the whole command and back on (`-F`) for the commands
/// whose positional argument is a path (`setconf FILE`); options that take
/// a path already carry `-F`. Positional values are added (`completions
/// SHELL`).
fn fish_files_only_for_paths(script: &str, cmd: &Command) -> String {
    fn walk(cmd: &Command, path: &mut Vec<String>, out: &mut String) {
        if let Some((first, rest)) = path.split_first() {
            let fname = BIN.replace('-', "_");
            let mut cond = format!("__fish_{fname}_using_subcommand {first}");
            for p in rest {
                cond.push_str(&format!("; and __fish_seen_subcommand_from {p}"));
            }
            let pos = || cmd.get_positionals();
            if pos().any(|a| matches!(a.get_value_hint(), ValueHint::AnyPath | ValueHint::FilePath))
            {
                out.push_str(&format!("complete -c {BIN} -n \"{cond}\" -F\n"));
            }
            // Nor does it offer a positional argument's values (`completions
            // SHELL`).
            let vals: Vec<String> = pos()
                .flat_map(|a| a.get_possible_values())
                .filter(|v| !v.is_hide_set())
                .map(|v| v.get_name().to_string())
                .collect();
            if !vals.is_empty() {
                let vals = vals.join(" ");
                out.push_str(&format!(
                    "complete -c {BIN} -n \"{cond}\" -f -a \"{vals}\"\n"
                ));
            }
        }
        for sub in cmd.get_subcommands() {
            path.push(sub.get_name().to_string());
            walk(sub, path, out);
            path.pop();
        }
    }
    let mut tail = format!(
        "\n# Files only where a path is meant (crem-ctl's repair).\ncomplete -c {BIN} -f\n"
    );
    walk(cmd, &mut Vec::new(), &mut tail);
    format!("{script}{tail}")
}

/// A positional argument clap knows nothing about (`flow [FILTER]`, `flow
/// show ID`, `set KEY VALUE`) gets zsh's `_default`, the directory's file
/// names; only a path is completed as one (clap infers that from `PathBuf`).
fn words_are_not_files(cmd: Command) -> Command {
    cmd.mut_args(|a| {
        if a.is_positional() && a.get_value_hint() == ValueHint::Unknown {
            a.value_hint(ValueHint::Other)
        } else {
            a
        }
    })
    .mut_subcommands(words_are_not_files)
}

/// clap_complete's bash script (4.6.12 and earlier, clap-rs/clap#6421)
/// tracks the subcommand typed so far in `cmd`, spelling a hyphen of the
/// binary name `__` ("crem__ctl__subcmd__flow"), but labels the `case` arms
/// that complete each subcommand with the hyphen as `__subcmd__`
/// ("crem__subcmd__ctl__subcmd__flow"). No arm matches, COMPREPLY stays
/// empty and bash falls back to file names after the first word. Renaming
/// the arms to the loop's spelling repairs it; with a clap_complete that
/// agrees with itself, the wrong spelling does not occur and this changes
/// nothing.
fn fix_bash_state_names(script: &str) -> String {
    script.replace(&BIN.replace('-', "__subcmd__"), &BIN.replace('-', "__"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Command as Process;

    fn generated(shell: Shell) -> String {
        script(shell, &mut Cli::command())
    }

    /// What bash offers for `line` (ending where TAB is pressed): the
    /// script is sourced, the function `complete -p crem-ctl` names is
    /// called as bash calls it (COMP_WORDS, COMP_CWORD, COMP_LINE,
    /// COMP_POINT set; arguments: command, word being completed, previous
    /// word), and COMPREPLY is returned, sorted.
    fn bash_complete(script_path: &std::path::Path, line: &str) -> Vec<String> {
        // Words split as readline does for these simple lines: on spaces, a
        // trailing space starting an empty word.
        let words: Vec<&str> = line.split(' ').collect();
        let driver = r#"
            source "$1" || exit 90
            shift
            spec=$(complete -p crem-ctl) || exit 91
            fn=${spec#*-F }; fn=${fn%% *}
            COMP_WORDS=("$@")
            COMP_CWORD=$(($# - 1))
            COMP_LINE="$*"
            COMP_POINT=${#COMP_LINE}
            prev=""
            [ "$COMP_CWORD" -gt 0 ] && prev=${COMP_WORDS[COMP_CWORD-1]}
            "$fn" "${COMP_WORDS[0]}" "${COMP_WORDS[COMP_CWORD]}" "$prev"
            printf '%s\n' "${COMPREPLY[@]}"
        "#;
        let out = Process::new("bash")
            .args(["--norc", "--noprofile", "-c", driver, "bash"])
            .arg(script_path)
            .args(&words)
            .output()
            .expect("bash runs (the completion test needs bash)");
        assert!(
            out.status.success(),
            "{line:?}: bash exited {:?}: {}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
        let mut v: Vec<String> = String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .filter(|l| !l.is_empty())
            .map(String::from)
            .collect();
        v.sort();
        v
    }

    #[test]
    fn bash_completes_past_the_first_word() {
        let dir = std::env::temp_dir().join(format!("crem-ctl-compl-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("crem-ctl.bash");
        std::fs::write(&path, generated(Shell::Bash)).unwrap();
        let c = |line: &str| bash_complete(&path, line);
        let words = |v: &[&str]| {
            let mut w: Vec<String> = v.iter().map(|s| s.to_string()).collect();
            w.sort();
            w
        };
        let globals = [
            "-j", "--json", "-p", "--pretty", "-s", "--stats", "-n", "--netns", "-h", "--help",
        ];

        let top = c("crem-ctl ");
        for sub in [
            "show",
            "set",
            "stats",
            "monitor",
            "flow",
            "setconf",
            "showconf",
            "fec",
            "decode",
            "roce",
            "completions",
            "help",
        ] {
            assert!(top.contains(&sub.to_string()), "crem-ctl <TAB>: {top:?}");
        }
        assert_eq!(c("crem-ctl sh"), words(&["show", "showconf"]));
        let mut flow = words(&["list", "show", "del", "add", "reset", "set", "help"]);
        flow.extend(words(&globals));
        flow.sort();
        assert_eq!(c("crem-ctl flow "), flow);
        assert_eq!(c("crem-ctl flow s"), words(&["set", "show"]));
        assert_eq!(c("crem-ctl -j flow s"), words(&["set", "show"]));
        assert_eq!(c("crem-ctl fec e"), words(&["encode"]));
        assert_eq!(
            c("crem-ctl fec encode --"),
            words(&[
                "--symbol-len",
                "--repair",
                "--over",
                "--scheme",
                "--json",
                "--pretty",
                "--stats",
                "--netns",
                "--help"
            ])
        );
        assert_eq!(
            c("crem-ctl fec decode --scheme "),
            words(&["cauchy", "xor"])
        );
        assert_eq!(
            c("crem-ctl completions "),
            words(&[&["bash", "fish", "zsh"][..], &globals].concat())
        );
        assert_eq!(c("crem-ctl stats r"), words(&["reset"]));
        assert_eq!(c("crem-ctl stats --w"), words(&["--watch"]));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// What fish or zsh offers for `line`, run in a directory holding
    /// `a.conf` (so that file names offered where none is meant show).
    /// fish: `complete -C` (the candidates, "word<TAB>description"); zsh:
    /// `zsh_complete.zsh` drives an interactive zsh through a pty.
    fn shell_complete(shell: Shell, line: &str) -> Vec<String> {
        let dir = std::env::temp_dir().join(format!(
            "crem-ctl-compl-{shell:?}-{}-{}",
            std::process::id(),
            line.len()
        ));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("a.conf"), "").unwrap();
        let (prog, args): (&str, Vec<String>) = match shell {
            Shell::Fish => {
                let path = dir.join("crem-ctl.fish");
                std::fs::write(&path, generated(Shell::Fish)).unwrap();
                (
                    "fish",
                    vec![
                        "--no-config".into(),
                        "-c".into(),
                        "source $argv[1]; or exit 90; complete -C $argv[2]".into(),
                        path.display().to_string(),
                        line.into(),
                    ],
                )
            }
            _ => {
                std::fs::write(dir.join("_crem-ctl"), generated(Shell::Zsh)).unwrap();
                let driver = dir.join("zsh_complete.zsh");
                std::fs::write(&driver, include_str!("zsh_complete.zsh")).unwrap();
                (
                    "zsh",
                    vec![
                        "-f".into(),
                        driver.display().to_string(),
                        dir.display().to_string(),
                        line.into(),
                    ],
                )
            }
        };
        let out = Process::new(prog)
            .args(&args)
            .current_dir(&dir)
            .output()
            .unwrap_or_else(|e| panic!("{prog} runs ({e}): make setup installs it"));
        assert!(
            out.status.success(),
            "{prog} {line:?}: exit {:?}: {}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
        std::fs::remove_dir_all(&dir).unwrap();
        let mut v: Vec<String> = String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .filter(|l| !l.is_empty())
            .map(|l| l.split('\t').next().unwrap().to_string())
            .collect();
        v.sort();
        v
    }

    /// fish and zsh, completion simulated: subcommands after each level,
    /// enum values, file names where a path is meant and nowhere else.
    #[test]
    fn fish_and_zsh_complete_subcommands_values_and_paths() {
        let words = |v: &[&str]| {
            let mut w: Vec<String> = v.iter().map(|s| s.to_string()).collect();
            w.sort();
            w
        };
        for sh in [Shell::Fish, Shell::Zsh] {
            let c = |line: &str| shell_complete(sh, line);
            let top = c("crem-ctl ");
            for sub in ["show", "flow", "peer", "setconf", "fec", "completions"] {
                assert!(
                    top.contains(&sub.to_string()),
                    "{sh:?} crem-ctl <TAB>: {top:?}"
                );
            }
            assert!(!top.contains(&"a.conf".to_string()), "{sh:?}: {top:?}");
            assert_eq!(
                c("crem-ctl flow "),
                words(&["list", "show", "del", "add", "reset", "set", "help"]),
                "{sh:?}"
            );
            assert_eq!(c("crem-ctl sh"), words(&["show", "showconf"]), "{sh:?}");
            assert_eq!(c("crem-ctl -j flow s"), words(&["set", "show"]), "{sh:?}");
            assert_eq!(
                c("crem-ctl fec decode --scheme "),
                words(&["cauchy", "xor"]),
                "{sh:?}"
            );
            assert_eq!(
                c("crem-ctl completions "),
                words(&["bash", "fish", "zsh"]),
                "{sh:?}"
            );
            for line in ["crem-ctl setconf ", "crem-ctl decode -r "] {
                assert!(c(line).contains(&"a.conf".to_string()), "{sh:?} {line:?}");
            }
            assert!(
                !c("crem-ctl flow show ").contains(&"a.conf".to_string()),
                "{sh:?}"
            );
        }
    }

    /// The scripts are generated from the clap definition, so they know
    /// every subcommand, the new ones included.
    #[test]
    fn zsh_and_fish_name_the_flow_subcommands() {
        for sh in [Shell::Zsh, Shell::Fish] {
            let text = generated(sh);
            for sub in ["add", "reset", "del", "show", "set"] {
                assert!(text.contains(sub), "{sh:?}: {sub}");
            }
            // zsh and fish show the subcommands' one-line help.
            assert!(text.contains("Set up a sender flow"), "{sh:?}");
        }
    }

    #[test]
    fn only_the_checked_shells() {
        use clap::Parser;
        assert!(Cli::try_parse_from(["crem-ctl", "completions", "fish"]).is_ok());
        assert!(Cli::try_parse_from(["crem-ctl", "completions", "tcsh"]).is_err());
    }
}
