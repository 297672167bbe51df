//! Messages for a terminal: text the user gave made safe to quote (control characters
//! escaped, long text cut), one-line renderings of clap's and the core's errors, and
//! did-you-mean suggestions.

use clap::error::{ContextKind, ContextValue, ErrorKind};
use ratelab::text::{push_safe, SHOWN};
use ratelab::Error;
use std::io::Write;

/// What a command prints on stdout, and the status it ends with.
#[derive(Debug)]
pub(crate) struct Done {
    pub(crate) text: String,
    pub(crate) status: u8,
}

impl Done {
    /// Its text, and the status of success.
    pub(crate) fn ok(text: String) -> Self {
        Done { text, status: 0 }
    }
}

/// A spec as it was parsed: the spaces the parser skips (around the spec, its keys and its
/// values, a trailing newline or tab) left out, so it prints on one line as it was read.
pub(crate) fn parsed_spec(spec: &str) -> String {
    let spec = spec.trim();
    match spec.split_once(':') {
        None => spec.to_owned(),
        Some((name, keys)) => {
            let keys: Vec<String> = keys
                .split(',')
                .map(|pair| match pair.split_once('=') {
                    Some((k, v)) => format!("{}={}", k.trim(), v.trim()),
                    None => pair.trim().to_owned(),
                })
                .collect();
            format!("{name}:{}", keys.join(","))
        }
    }
}

/// The longest message line, whatever it quotes.
const LINE: usize = 1_000;

/// `text` in single quotes for a one-line message: unsafe characters escaped, and cut after
/// [`SHOWN`] characters with an ellipsis and how long it was.
pub(crate) fn quote(text: &str) -> String {
    let mut out = String::from("'");
    for c in text.chars().take(SHOWN) {
        push_safe(&mut out, c);
    }
    let n = text.chars().count();
    if n > SHOWN {
        out.push_str(&format!("…' ({n} characters)"));
    } else {
        out.push('\'');
    }
    out
}

/// `text` with unsafe characters escaped, unquoted and uncut (for a spec in a table).
pub(crate) fn escaped(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        push_safe(&mut out, c);
    }
    out
}

/// A whole message made one safe line: anything unsafe left escaped, cut at [`LINE`]
/// characters. What a message quotes is already cut; this is the net under it.
pub(crate) fn one_line(message: &str) -> String {
    let mut out = String::new();
    let n = message.chars().count();
    for c in message.chars().take(LINE) {
        push_safe(&mut out, c);
    }
    if n > LINE {
        out.push_str(&format!("… ({n} characters)"));
    }
    out
}

/// Writes `line` and a newline to stderr, ignoring failure: a note must never be what
/// stops the program.
pub(crate) fn note(line: &str) {
    let mut err = std::io::stderr().lock();
    let _ = writeln!(err, "{line}");
    let _ = err.flush();
}

/// The candidate closest to `got`, if one is close enough to be what was meant.
pub(crate) fn did_you_mean<'a>(
    got: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<&'a str> {
    candidates
        .into_iter()
        .filter(|c| !c.is_empty() && *c != got)
        .map(|c| (strsim::jaro_winkler(got, c), c))
        .filter(|(score, _)| *score > 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, c)| c)
}

fn suggestion(s: Option<&str>) -> String {
    s.map_or(String::new(), |s| format!("; did you mean '{s}'?"))
}

/// A core error as one line, with a suggestion when it names an unknown limiter, traffic,
/// key or format that is close to an accepted one.
pub(crate) fn core(e: &Error) -> String {
    match e {
        Error::Unknown { got, accepted, .. } => {
            // Accepted lists read like `a, b` or `burst=B, rate=N/DUR`: the names lead.
            let names = accepted.split(", ").filter_map(|item| {
                item.split(['=', ' ', '(', '|', ':'])
                    .next()
                    .filter(|n| !n.is_empty())
            });
            format!("{e}{}", suggestion(did_you_mean(got, names)))
        }
        // A word where a few words are accepted (`fixed or exponential`, `ignore or honor`,
        // `none, full or equal ...`): the nearest of them.
        Error::Invalid { got, accepted, .. } if is_word(got) => {
            let names = accepted.split([',', ' ', '(', ')']).filter(|w| {
                w.len() >= 3 && is_word(w) && !matches!(*w, "with" | "and" | "the" | "like")
            });
            format!("{e}{}", suggestion(did_you_mean(got, names)))
        }
        _ => e.to_string(),
    }
}

/// Letters and hyphens only: a name, not a number or a duration.
fn is_word(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_lowercase() || b == b'-')
}

/// `a`, `a or b`, `a, b or c`.
fn or_list(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} or {last}", init.join(", ")),
    }
}

/// What clap's error means: text to print on stdout (help, version), or one line for
/// stderr.
#[derive(Debug)]
pub(crate) enum ClapOutcome {
    /// Help or the version, to print as it is.
    Print(String),
    /// A usage error, one line without the `ratelab: ` prefix.
    Usage(String),
}

/// Renders a clap error as one line that names the bad part and what is accepted, with
/// clap's suggestion in the same line. `flags` are the flags of the command the user
/// invoked (for "accepted are"), `command` its name.
pub(crate) fn clap_error(err: &clap::Error, command: &str, flags: &[String]) -> ClapOutcome {
    let text = |kind: ContextKind| match err.get(kind) {
        Some(ContextValue::String(s)) => Some(s.clone()),
        Some(ContextValue::Strings(v)) => v.first().cloned(),
        Some(ContextValue::StyledStr(s)) => Some(s.to_string()),
        _ => None,
    };
    let list = |kind: ContextKind| match err.get(kind) {
        Some(ContextValue::Strings(v)) => v.clone(),
        Some(ContextValue::String(s)) => vec![s.clone()],
        Some(ContextValue::StyledStrs(v)) => v.iter().map(ToString::to_string).collect(),
        _ => Vec::new(),
    };
    // clap names an option with its value, `--limit <N>`: the flag is the first word.
    // and a positional argument as `<SHELL>`: the name is SHELL.
    let flag = |arg: Option<String>| {
        arg.unwrap_or_default()
            .split([' ', '='])
            .next()
            .unwrap_or_default()
            .trim_start_matches('<')
            .trim_end_matches('>')
            .to_owned()
    };
    let accepted = flags.join(", ");
    let line = match err.kind() {
        ErrorKind::DisplayHelp
        | ErrorKind::DisplayVersion
        | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            return ClapOutcome::Print(err.render().to_string());
        }
        ErrorKind::UnknownArgument => {
            let arg = text(ContextKind::InvalidArg).unwrap_or_default();
            let suggested = text(ContextKind::SuggestedArg)
                .map(|s| flag(Some(s)))
                .or_else(|| {
                    let name = arg.split('=').next().unwrap_or_default();
                    did_you_mean(name, flags.iter().map(String::as_str)).map(str::to_owned)
                });
            let what = if arg.starts_with('-') {
                "unknown flag"
            } else {
                "unexpected argument"
            };
            format!(
                "{what} {} for {command}: accepted are {accepted}{}",
                quote(&arg),
                suggestion(suggested.as_deref())
            )
        }
        ErrorKind::InvalidSubcommand => {
            let got = text(ContextKind::InvalidSubcommand).unwrap_or_default();
            format!(
                "unknown command {}: accepted are simulate, study, probe, demo, completions, help{}",
                quote(&got),
                suggestion(text(ContextKind::SuggestedSubcommand).as_deref())
            )
        }
        ErrorKind::InvalidValue => {
            let arg = flag(text(ContextKind::InvalidArg));
            let value = text(ContextKind::InvalidValue).unwrap_or_default();
            let valid = list(ContextKind::ValidValue);
            if value.is_empty() {
                if valid.is_empty() {
                    format!("{arg} needs a value")
                } else {
                    format!("{arg} needs a value: {}", or_list(&valid))
                }
            } else {
                format!(
                    "invalid {arg} {}: expected {}{}",
                    quote(&value),
                    or_list(&valid),
                    suggestion(text(ContextKind::SuggestedValue).as_deref())
                )
            }
        }
        ErrorKind::ArgumentConflict => {
            let arg = flag(text(ContextKind::InvalidArg));
            let prior = flag(text(ContextKind::PriorArg));
            if prior.is_empty() || prior == arg {
                format!("{arg} given twice: give it once")
            } else {
                format!("{arg} cannot be given with {prior}")
            }
        }
        ErrorKind::MissingRequiredArgument => {
            let missing: Vec<String> = list(ContextKind::InvalidArg)
                .into_iter()
                .map(|a| flag(Some(a)))
                .collect();
            let what = if missing.iter().any(|m| m == "SHELL") {
                ": bash, zsh, fish, elvish or powershell"
            } else {
                ""
            };
            format!("{command} needs {}{what}", or_list(&missing))
        }
        ErrorKind::InvalidUtf8 => {
            format!("an argument to {command} is not valid UTF-8: arguments are text")
        }
        _ => {
            // Anything else: clap's own first line, made safe.
            let rendered = err.render().to_string();
            let first = rendered.lines().next().unwrap_or_default();
            first.strip_prefix("error: ").unwrap_or(first).to_owned()
        }
    };
    ClapOutcome::Usage(line)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn user_text_is_escaped_and_cut_with_its_length() {
        assert_eq!(quote("a\nb\tc\u{1b}[2J"), r"'a\nb\tc\u{1b}[2J'");
        assert_eq!(quote("x\u{202e}y"), r"'x\u{202e}y'");
        let long = "é".repeat(100_000);
        let q = quote(&long);
        assert!(q.ends_with("…' (100000 characters)"), "{q}");
        assert_eq!(q.chars().filter(|&c| c == 'é').count(), SHOWN);
        assert_eq!(escaped("gcra\t"), r"gcra\t");
        let line = one_line(&"y".repeat(5_000));
        assert!(line.ends_with("… (5000 characters)"));
        assert!(one_line("a\rb").lines().count() == 1);
    }

    #[test]
    fn close_names_are_suggested_and_far_ones_are_not() {
        let kinds = ["fixed-window", "token-bucket", "gcra", "sliding-log"];
        assert_eq!(did_you_mean("token-buket", kinds), Some("token-bucket"));
        assert_eq!(did_you_mean("fixed-windw", kinds), Some("fixed-window"));
        assert_eq!(did_you_mean("zebra", kinds), None);
        let e = ratelab::LimiterSpec::parse("token-buket").expect_err("unknown");
        assert!(
            core(&e).ends_with("; did you mean 'token-bucket'?"),
            "{}",
            core(&e)
        );
        let e = ratelab::LimiterSpec::parse("token-bucket:burts=3").expect_err("unknown key");
        assert!(core(&e).ends_with("did you mean 'burst'?"), "{}", core(&e));
        let e = ratelab::TrafficSpec::parse("flod").expect_err("unknown");
        assert!(core(&e).ends_with("did you mean 'flood'?"), "{}", core(&e));
        // A value among a few named ones.
        for (traffic, want) in [
            ("retry:retry-after=honour", "honor"),
            ("retry:policy=exponentail", "exponential"),
            ("retry:jitter=ful", "full"),
        ] {
            let e = ratelab::TrafficSpec::parse(traffic).expect_err(traffic);
            let line = core(&e);
            assert!(line.ends_with(&format!("did you mean '{want}'?")), "{line}");
        }
    }
}
