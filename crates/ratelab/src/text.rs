//! Text that crosses ratelab's edges: the one function that makes a user's text safe to quote
//! in a message (the core's errors, the CLI's, the page's link problems), the one shell-quoting
//! function behind every command line it prints (the CLI's probe report, the page's "run this
//! yourself"), and the one CSV writer behind every table and chart it saves.

/// How many characters of a user's text a message quotes.
pub const SHOWN: usize = 60;

/// Whether `c` must not be shown raw: control characters (newlines, tabs, escape sequences,
/// C1 controls) and the invisible marks that reorder text (bidi controls).
pub fn needs_escape(c: char) -> bool {
    c.is_control()
        || matches!(c, '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// Appends `c`, escaped as Rust writes it (`\n`, `\t`, `\u{1b}`) if it needs escaping.
pub fn push_safe(out: &mut String, c: char) {
    if needs_escape(c) {
        out.extend(c.escape_default());
    } else {
        out.push(c);
    }
}

/// A user's text inside a one-line message: characters that need it escaped, and cut after `max`
/// characters with an ellipsis.
pub fn shown(text: &str, max: usize) -> String {
    let mut out = String::new();
    for (i, c) in text.chars().enumerate() {
        if i == max {
            out.push('…');
            break;
        }
        push_safe(&mut out, c);
    }
    out
}

/// `a` as one POSIX shell word: unquoted when it is made only of characters no shell treats
/// specially, otherwise in single quotes, with each `'` written `'\''`.
pub fn shell_word(a: &str) -> String {
    if !a.is_empty()
        && a.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_=:,./%@+".contains(&b))
    {
        a.to_owned()
    } else {
        format!("'{}'", a.replace('\'', r"'\''"))
    }
}

/// `program` and `args` as one shell command line.
pub fn shell_line<S: AsRef<str>>(program: &str, args: &[S]) -> String {
    std::iter::once(shell_word(program))
        .chain(args.iter().map(|a| shell_word(a.as_ref())))
        .collect::<Vec<_>>()
        .join(" ")
}

/// A CSV field (RFC 4180), quoted when it holds a comma, a quote or a line break.
pub fn csv_field(text: &str) -> String {
    if text.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text.to_owned()
    }
}

/// A CSV record: the fields, quoted where needed, and a line break.
pub fn csv_record<S: AsRef<str>>(fields: &[S]) -> String {
    let mut out = fields
        .iter()
        .map(|f| csv_field(f.as_ref()))
        .collect::<Vec<_>>()
        .join(",");
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shown_text_is_one_safe_line_of_bounded_length() {
        assert_eq!(shown("1m\nx", SHOWN), "1m\\nx");
        assert_eq!(
            shown("\u{1b}[31mred\u{202e}", SHOWN),
            "\\u{1b}[31mred\\u{202e}"
        );
        assert_eq!(shown(&"x".repeat(100), 5), "xxxxx…");
        assert_eq!(shown("exactly", 7), "exactly");
    }

    #[test]
    fn words_a_shell_would_split_or_expand_are_quoted() {
        assert_eq!(shell_word("token-bucket:burst=60"), "token-bucket:burst=60");
        assert_eq!(
            shell_word("replay:file=bob's.log"),
            r"'replay:file=bob'\''s.log'"
        );
        assert_eq!(shell_word("a b"), "'a b'");
        assert_eq!(shell_word("$HOME"), "'$HOME'");
        assert_eq!(shell_word(""), "''");
        assert_eq!(
            shell_line(
                "ratelab",
                &["simulate", "--traffic", "replay:file=my log.txt"]
            ),
            "ratelab simulate --traffic 'replay:file=my log.txt'"
        );
    }

    #[test]
    fn a_posix_shell_reads_the_line_back_as_the_same_arguments() {
        // A test may run a program; the library never does.
        let args = [
            "simulate",
            "replay:file=bob's.log",
            "it's \"quoted\" $HOME `x` \\ ;|&",
            "'",
            "a'b'c",
            "",
            "tab\there",
            "new\nline",
            "%@+",
        ];
        let line = shell_line("ratelab", &args);
        let script = format!("ratelab() {{ printf '%s\\0' \"$@\"; }}; {line}");
        let out = std::process::Command::new("/bin/sh")
            .args(["-c", &script])
            .output()
            .expect("/bin/sh runs");
        let back: Vec<&str> = std::str::from_utf8(&out.stdout)
            .expect("utf-8")
            .split('\0')
            .collect();
        assert_eq!(&back[..back.len() - 1], &args[..], "{line}");
    }

    #[test]
    fn csv_fields_are_quoted_only_when_they_must_be() {
        assert_eq!(csv_field("gcra"), "gcra");
        assert_eq!(csv_field("a,b"), "\"a,b\"");
        assert_eq!(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
        assert_eq!(csv_field("two\r\nlines"), "\"two\r\nlines\"");
        assert_eq!(csv_record(&["x", "1,5", ""]), "x,\"1,5\",\n");
    }
}
