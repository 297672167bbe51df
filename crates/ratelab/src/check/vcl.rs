//! Reading Varnish's vsthrottle as a VCL writes it: `vsthrottle.is_denied(client.identity,
//! 15, 10s)` inside an `if`, comments and the rest of the VCL included.

use super::config::Config;
use crate::error::Error;
use crate::spec::LimiterSpec;
use crate::time::{format_duration, Micros, MS, SECOND};

/// A VCL duration: a number and `ms`, `s`, `m`, `h`, `d`, `w` or `y`.
fn vcl_duration(text: &str) -> Option<Micros> {
    let text = text.trim();
    let at = text.find(|c: char| c.is_ascii_alphabetic())?;
    let n: f64 = text[..at].trim().parse().ok()?;
    let unit = match &text[at..] {
        "ms" => MS as f64,
        "s" => SECOND as f64,
        "m" => 60.0 * SECOND as f64,
        "h" => 3600.0 * SECOND as f64,
        "d" => 86_400.0 * SECOND as f64,
        "w" => 7.0 * 86_400.0 * SECOND as f64,
        "y" => 365.0 * 86_400.0 * SECOND as f64,
        _ => return None,
    };
    let us = n * unit;
    (us.is_finite() && us >= MS as f64 && us <= 1e15 && us.fract() == 0.0).then_some(us as Micros)
}

/// `vsthrottle.is_denied(key, limit, period[, block])`.
pub(super) fn read_vsthrottle(text: &str) -> Result<Vec<Config>, Error> {
    let code: String = text
        .lines()
        .map(|l| {
            l.split('#')
                .next()
                .unwrap_or("")
                .split("//")
                .next()
                .unwrap_or("")
        })
        .collect::<Vec<_>>()
        .join("\n");
    let at = code
        .find("vsthrottle.is_denied(")
        .ok_or_else(|| Error::Missing {
            what: "VCL".into(),
            key: "a vsthrottle.is_denied(key, limit, period) call".into(),
            example: "if (vsthrottle.is_denied(client.identity, 15, 10s)) { return (synth(429)); }"
                .into(),
        })?;
    let line = code[..at].matches('\n').count() + 1;
    let what = |part: &str| format!("line {line}: vsthrottle.is_denied {part}");
    let open = at + "vsthrottle.is_denied(".len();
    let (mut depth, mut end) = (0usize, None);
    for (i, c) in code[open..].char_indices() {
        match c {
            '(' => depth += 1,
            ')' if depth == 0 => {
                end = Some(open + i);
                break;
            }
            ')' => depth -= 1,
            _ => {}
        }
    }
    let args = end.map(|e| &code[open..e]).ok_or_else(|| {
        Error::invalid(
            &what("call"),
            code[at..].lines().next().unwrap_or(""),
            "vsthrottle.is_denied(KEY, LIMIT, PERIOD)",
        )
    })?;
    // The key may hold commas inside calls (`req.http.X + client.ip`): the last two or three
    // arguments are the numbers.
    let parts: Vec<&str> = args.split(',').map(str::trim).collect();
    let (limit, period, block) = match parts.len() {
        n if n >= 4
            && vcl_duration(parts[n - 1]).is_some()
            && vcl_duration(parts[n - 2]).is_some() =>
        {
            (parts[n - 3], parts[n - 2], Some(parts[n - 1]))
        }
        n if n >= 3 => (parts[n - 2], parts[n - 1], None),
        _ => {
            return Err(Error::invalid(
                &what("arguments"),
                args,
                "KEY, LIMIT, PERIOD[, BLOCK]",
            ))
        }
    };
    let limit: u64 = limit
        .parse()
        .ok()
        .filter(|&l| (1..=10_000_000).contains(&l))
        .ok_or_else(|| {
            Error::invalid(&what("limit"), limit, "a whole number from 1 to 10000000")
        })?;
    let period = vcl_duration(period).ok_or_else(|| {
        Error::invalid(
            &what("period"),
            period,
            "a VCL duration of at least 1ms in whole microseconds, like 10s or 500ms",
        )
    })?;
    // The block: every request denied that long after a denial (0s or left out: none).
    let block = match block {
        Some(b) => vcl_duration(b).ok_or_else(|| {
            Error::invalid(
                &what("block"),
                b,
                "a VCL duration in whole microseconds, like 30s, or 0s for none",
            )
        })?,
        None => 0,
    };
    let spec = LimiterSpec::parse(&if block > 0 {
        format!(
            "vsthrottle:limit={limit},period={},block={}",
            format_duration(period),
            format_duration(block)
        )
    } else {
        format!(
            "vsthrottle:limit={limit},period={}",
            format_duration(period)
        )
    })?;
    Ok(vec![Config {
        source: "vsthrottle",
        spec,
        limit,
        period,
        line,
        headers: true,
    }])
}

#[cfg(test)]
// Each reads into a limiter of the `libraries` feature.
#[cfg(feature = "libraries")]
mod tests {
    use crate::check::read_config;

    #[test]
    fn a_vcl_reads_as_its_limiter() {
        let vcl = "vcl 4.1;\nimport vsthrottle;\n\nsub vcl_recv {\n    # 15 requests per 10 seconds per client\n    if (vsthrottle.is_denied(client.identity, 15, 10s)) {\n        return (synth(429, \"Too Many Requests\"));\n    }\n}\n";
        let c = &read_config(vcl).expect("reads")[0];
        assert_eq!(c.spec.text, "vsthrottle:limit=15,period=10s");
        assert_eq!(c.line, 6);
        // The manual's example: a block of 30 s after the 15.
        let c = &read_config("if (vsthrottle.is_denied(client.identity, 15, 10s, 30s)) {}")
            .expect("reads")[0];
        assert_eq!(c.spec.text, "vsthrottle:limit=15,period=10s,block=30s");
    }
}
