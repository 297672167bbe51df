//! Text that leaves ratelab for a shell: the one quoting function behind every command line it
//! prints (the CLI's probe report, the page's "run this yourself").

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
}
