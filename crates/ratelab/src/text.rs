//! Text that leaves ratelab for another program: the one shell-quoting function behind every
//! command line it prints (the CLI's probe report, the page's "run this yourself"), and the
//! one CSV writer behind every table and chart it saves.

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
    fn csv_fields_are_quoted_only_when_they_must_be() {
        assert_eq!(csv_field("gcra"), "gcra");
        assert_eq!(csv_field("a,b"), "\"a,b\"");
        assert_eq!(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
        assert_eq!(csv_field("two\r\nlines"), "\"two\r\nlines\"");
        assert_eq!(csv_record(&["x", "1,5", ""]), "x,\"1,5\",\n");
    }
}
