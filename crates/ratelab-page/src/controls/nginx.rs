//! nginx's `limit_req` as the lab's form sets it, in nginx's own units: the rate and its unit,
//! `burst=`, `delay=` or `nodelay`, and the nginx.conf lines and limiter spec they make.

use super::Named;
use ratelab::limiter::Rate;
use ratelab::time::{Micros, MINUTE, SECOND};

/// nginx's rate units: `r/s` and `r/m` (nginx has no other).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RateUnit {
    /// `r/s`.
    PerSecond,
    /// `r/m`.
    PerMinute,
}

impl RateUnit {
    /// The unit's span, in µs.
    pub fn micros(self) -> Micros {
        match self {
            RateUnit::PerSecond => SECOND,
            RateUnit::PerMinute => MINUTE,
        }
    }
}

impl Named for RateUnit {
    const ALL: &'static [Self] = &[RateUnit::PerSecond, RateUnit::PerMinute];
    fn name(self) -> &'static str {
        match self {
            RateUnit::PerSecond => "r/s",
            RateUnit::PerMinute => "r/m",
        }
    }
}

/// nginx's `limit_req` as a reader would configure it, in nginx's units: `rate=` (on
/// `limit_req_zone`), `burst=`, and `delay=` or `nodelay` (on `limit_req`). The defaults
/// are nginx's (burst 0, no `nodelay`, delay 0), with the lab's opening rate, 60 a minute.
/// [`Controls`](super::Controls) sends it to the page as one string, its fields' text ([`NginxConf::fields`]):
/// as five fields of its own, its serde code cost the main module (the first screen) 0.8 KB
/// gzipped, and the form's five more as much.
#[derive(Debug, Clone, PartialEq)]
pub struct NginxConf {
    /// `rate=`: how many requests per [`NginxConf::unit`].
    pub rate: u64,
    /// `r/s` or `r/m`.
    pub unit: RateUnit,
    /// `burst=`.
    pub burst: u64,
    /// `delay=`: how many requests above the rate pass at once; used only without `nodelay`
    /// (kept as the reader left it when `nodelay` is ticked).
    pub delay: u64,
    /// `nodelay`.
    pub nodelay: bool,
}

impl Default for NginxConf {
    fn default() -> Self {
        NginxConf {
            rate: 60,
            unit: RateUnit::PerMinute,
            burst: 0,
            delay: 0,
            nodelay: false,
        }
    }
}

/// Serde for [`NginxConf`]: its fields' text, `7 r/m 5 2` (and ` nodelay`), read back
/// through [`NginxConf::from_fields`].
pub mod nginx_fields {
    use super::NginxConf;
    use serde::de::Error as _;
    use serde::{Deserialize, Deserializer, Serializer};

    /// Writes the fields' text.
    pub fn serialize<S: Serializer>(v: &NginxConf, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&v.fields())
    }

    /// Reads the fields' text.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<NginxConf, D::Error> {
        let text = String::deserialize(d)?;
        NginxConf::from_fields(&text).ok_or_else(|| {
            D::Error::custom(format!(
                "nginx's fields '{}' are not 'RATE r/s|r/m BURST DELAY' and 'nodelay' if set",
                ratelab::text::shown(&text, ratelab::text::SHOWN)
            ))
        })
    }
}

impl NginxConf {
    /// Its fields' text, as the form's fields hold it, space-separated in nginx's order:
    /// `7 r/m 5 2`, with ` nodelay` after when set. How the page and the wasm pass it both
    /// ways (the form's [`crate::form::Form::nginx`] has the same shape, unchecked).
    pub fn fields(&self) -> String {
        format!(
            "{} {} {} {}{}",
            self.rate,
            self.unit.name(),
            self.burst,
            self.delay,
            if self.nodelay { " nodelay" } else { "" }
        )
    }

    /// The settings from [`NginxConf::fields`]' text, if it is that.
    pub fn from_fields(text: &str) -> Option<NginxConf> {
        let mut parts = text.split(' ');
        let mut number = || parts.next()?.parse::<u64>().ok();
        let rate = number().filter(|&r| r > 0)?;
        let unit = RateUnit::from_name(parts.next()?)?;
        let mut number = || parts.next()?.parse::<u64>().ok();
        let (burst, delay) = (number()?, number()?);
        let nodelay = match parts.next() {
            None => false,
            Some("nodelay") => true,
            Some(_) => return None,
        };
        parts.next().is_none().then_some(NginxConf {
            rate,
            unit,
            burst,
            delay,
            nodelay,
        })
    }

    /// The rate as nginx writes it: `7r/m`.
    pub fn rate_text(&self) -> String {
        format!("{}{}", self.rate, self.unit.name())
    }

    /// The rate as the core keeps it.
    pub fn rate(&self) -> Rate {
        Rate {
            count: self.rate,
            per: self.unit.micros(),
        }
    }

    /// `limit_req`'s own words after its zone, each after a space, as nginx.conf would have
    /// them: ` burst=5` (left out at 0, nginx's default), then ` nodelay`, or ` delay=2`
    /// (left out at 0).
    fn limit_req_words(&self) -> String {
        let mut words = String::new();
        if self.burst > 0 {
            words += &format!(" burst={}", self.burst);
        }
        if self.nodelay {
            words += " nodelay";
        } else if self.delay > 0 {
            words += &format!(" delay={}", self.delay);
        }
        words
    }

    /// The limiter spec's keys: `rate=7r/m,burst=5,delay=2`.
    pub fn spec_keys(&self) -> String {
        format!("rate={}{}", self.rate_text(), self.limit_req_words()).replace(' ', ",")
    }

    /// The two lines of nginx.conf that configure this limiter, for a zone named `lab`
    /// keyed on the client's address.
    pub fn config(&self) -> String {
        format!(
            "limit_req_zone $binary_remote_addr zone=lab:10m rate={};\nlimit_req zone=lab{};",
            self.rate_text(),
            self.limit_req_words()
        )
    }
}
