//! Reading redis-cell's `CL.THROTTLE key max_burst count period [quantity]` as users write
//! it: a command line, or the arguments of a client's call (`redis.call("CL.THROTTLE", key,
//! 15, 30, 60)`, `["CL.THROTTLE", "user123", "15", "30", "60"]`).

use super::config::Config;
use crate::error::Error;
use crate::spec::LimiterSpec;
use crate::time::SECOND;

/// `CL.THROTTLE`'s numbers, in order, after its key.
pub(super) fn read_throttle(text: &str) -> Result<Vec<Config>, Error> {
    let upper = text.to_ascii_uppercase();
    let at = upper.find("CL.THROTTLE").ok_or_else(|| Error::Missing {
        what: "redis-cell configuration".into(),
        key: "a CL.THROTTLE key max_burst count period command".into(),
        example: "CL.THROTTLE user123 15 30 60".into(),
    })?;
    let line = text[..at].matches('\n').count() + 1;
    let rest = &text[at + "CL.THROTTLE".len()..];
    let rest = rest.lines().next().unwrap_or("");
    // A client's call separates its arguments with commas (a key like `KEYS[1]` whole); a
    // command line, with spaces.
    let trim = |w: &str| {
        w.trim()
            .trim_matches(|c: char| matches!(c, '"' | '\'' | '(' | ')' | '[' | ']' | ';' | ','))
            .trim()
            .to_owned()
    };
    let words: Vec<String> = if rest.contains(',') {
        rest.split(',')
            .map(trim)
            .filter(|w| !w.is_empty())
            .collect()
    } else {
        rest.split_whitespace()
            .map(trim)
            .filter(|w| !w.is_empty())
            .collect()
    };
    let what = |part: &str| format!("line {line}: CL.THROTTLE {part}");
    let accepted = "CL.THROTTLE KEY MAX_BURST COUNT PERIOD [QUANTITY], whole numbers: CL.THROTTLE user123 15 30 60";
    if words.len() < 4 {
        return Err(Error::invalid(&what("command"), rest.trim(), accepted));
    }
    let number = |i: usize, part: &str, min: u64, max: u64| {
        words[i]
            .parse::<u64>()
            .ok()
            .filter(|v| (min..=max).contains(v))
            .ok_or_else(|| {
                Error::invalid(
                    &what(part),
                    &words[i],
                    &format!("a whole number from {min} to {max}"),
                )
            })
    };
    let burst = number(1, "max_burst", 0, 10_000_000)?;
    let count = number(2, "count", 1, 10_000_000)?;
    let period = number(3, "period", 1, 86_400 * 366)?;
    // The cells each request takes: 1 unless given. A request of more cells than the bucket
    // holds is refused every time, and one of more than a period's count less than once a
    // period, which the configured rule, whole requests per period, cannot say.
    let quantity = if words.len() > 4 {
        number(4, "quantity", 1, (burst + 1).min(count))?
    } else {
        1
    };
    let mut text = format!("redis-cell:max-burst={burst},count={count},period={period}");
    if quantity > 1 {
        text.push_str(&format!(",quantity={quantity}"));
    }
    let spec = LimiterSpec::parse(&text)?;
    Ok(vec![Config {
        source: "redis-cell",
        spec,
        // Whole requests per period.
        limit: count / quantity,
        period: period * SECOND,
        line,
        // The reply's retry_after, which a server sends as Retry-After.
        headers: true,
    }])
}

#[cfg(test)]
// Each reads into a limiter of the `libraries` feature.
#[cfg(feature = "libraries")]
mod tests {
    use crate::check::read_config;

    #[test]
    fn a_command_or_a_clients_call_reads_as_its_limiter() {
        let c = &read_config("127.0.0.1:6379> CL.THROTTLE user123 15 30 60 1").expect("reads")[0];
        assert_eq!(c.spec.text, "redis-cell:max-burst=15,count=30,period=60");
        let c = &read_config("local r = redis.call('CL.THROTTLE', KEYS[1], 3, 30, 60)")
            .expect("reads")[0];
        assert_eq!(c.spec.text, "redis-cell:max-burst=3,count=30,period=60");
        let e = read_config("CL.THROTTLE user123 15 thirty 60")
            .expect_err("refused")
            .to_string();
        assert!(e.contains("line 1") && e.contains("thirty"), "{e}");
    }

    #[test]
    fn a_quantity_takes_that_many_cells_a_request_and_the_worst_window_is_reached() {
        // redis-cell's README: `CL.THROTTLE user123 15 30 60 3`, 16 cells, 30 a minute, each
        // request 3 of them: 5 at once and 10 a minute, so 15 in a minute at most.
        let c = &read_config("CL.THROTTLE user123 15 30 60 3").expect("reads")[0];
        assert_eq!(
            c.spec.text,
            "redis-cell:max-burst=15,count=30,period=60,quantity=3"
        );
        assert_eq!((c.limit, c.period), (10, 60 * crate::time::SECOND));
        let found = crate::check::check(c, None, 1).expect("checks");
        assert_eq!((found.worst_window, found.worst_found), (15, 15));
        // More cells than the bucket holds, or than a period's count: named, with the range.
        for bad in ["CL.THROTTLE k 2 30 60 4", "CL.THROTTLE k 15 3 60 4"] {
            let e = read_config(bad).expect_err(bad).to_string();
            assert!(e.contains("quantity") && e.contains("from 1 to 3"), "{e}");
        }
    }
}
