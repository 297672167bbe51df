//! The command blocks of the README and the book: every ```` ```console ```` block's
//! `$ ratelab …` lines are run with the binary this test builds, and what each prints (its
//! standard output, then its standard error) must be the lines under it, exactly. A block
//! whose output drifted from the code fails here, so the front page cannot show stale
//! numbers.

use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// `(command, expected output)` of every `console` block of `text`.
fn commands(text: &str) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    let mut inside = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            inside = line.trim() == "```console";
            continue;
        }
        if !inside {
            continue;
        }
        if let Some(command) = line.strip_prefix("$ ") {
            out.push((command.to_owned(), String::new()));
        } else if let Some((_, expected)) = out.last_mut() {
            expected.push_str(line);
            expected.push('\n');
        }
    }
    out
}

fn run(command: &str) -> String {
    let mut words = command.split_whitespace();
    assert_eq!(
        words.next(),
        Some("ratelab"),
        "{command}: only ratelab commands run here"
    );
    let output = Command::new(env!("CARGO_BIN_EXE_ratelab"))
        .args(words)
        .current_dir(root())
        .output()
        .expect("ratelab runs");
    let mut text = String::from_utf8(output.stdout).expect("UTF-8");
    text.push_str(&String::from_utf8(output.stderr).expect("UTF-8"));
    text
}

#[test]
fn every_console_block_prints_what_it_shows() {
    let files = ratelab_docs::sources(&root()).expect("the Markdown sources");
    let mut ran = 0;
    let mut wrong = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file).expect("readable");
        for (command, expected) in commands(&text) {
            ran += 1;
            let got = run(&command);
            if got.trim_end() != expected.trim_end() {
                wrong.push(format!(
                    "{}: `{command}` printed:\n{got}\nwhere the block shows:\n{expected}",
                    file.display()
                ));
            }
        }
    }
    assert!(ran >= 5, "only {ran} commands found");
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn a_block_is_read_as_commands_and_their_output() {
    let text = "```console\n$ ratelab demo\nline 1\nline 2\n$ ratelab x\nerr\n```\n```sh\n$ ratelab not-run\n```\n";
    assert_eq!(
        commands(text),
        [
            ("ratelab demo".to_owned(), "line 1\nline 2\n".to_owned()),
            ("ratelab x".to_owned(), "err\n".to_owned())
        ]
    );
}

/// The commands the reference covers, each as `ratelab help` shows it.
const REFERENCE: [&str; 6] = ["", "simulate", "study", "probe", "demo", "completions"];

/// `docs/src/reference.md` as the binary's own help (clap's) writes it.
fn reference() -> String {
    let mut text = String::from(
        "# Command reference\n\nEvery command and flag as `ratelab help` prints it: this chapter is generated from the\ncommand line's own definitions (clap) by `RATELAB_BLESS=1 cargo test -p ratelab-cli --test\ndocs`, and that test fails whenever it differs from what the binary prints. What each\ncommand is for, with examples: [The command line](cli.md).\n",
    );
    for command in REFERENCE {
        let mut args = vec!["help"];
        if !command.is_empty() {
            args.push(command);
        }
        let output = Command::new(env!("CARGO_BIN_EXE_ratelab"))
            .args(&args)
            .env("COLUMNS", "100")
            .output()
            .expect("ratelab runs");
        assert!(output.status.success(), "ratelab {}", args.join(" "));
        let help = String::from_utf8(output.stdout).expect("UTF-8");
        let title = if command.is_empty() {
            "ratelab".to_owned()
        } else {
            format!("ratelab {command}")
        };
        text.push_str(&format!(
            "\n## {title}\n\n```text\n{}\n```\n",
            help.trim_end()
        ));
    }
    text
}

#[test]
fn the_command_reference_is_what_the_binary_prints() {
    let path = root().join("docs/src/reference.md");
    let want = reference();
    if std::env::var_os("RATELAB_BLESS").is_some() {
        std::fs::write(&path, &want).expect("write docs/src/reference.md");
        return;
    }
    let got = std::fs::read_to_string(&path).expect("docs/src/reference.md");
    assert!(
        got == want,
        "docs/src/reference.md differs from `ratelab help`: run RATELAB_BLESS=1 cargo test -p ratelab-cli --test docs"
    );
}
