//! A chart packed for the page's on-demand module to draw: a [`Plot`] as its numbers (a
//! `Float64Array` in JavaScript) and its text (one string), and back. The section worker
//! packs the section figures for the page's thread, and the Real limiters' recorded reports
//! ship with theirs ([`crate::probe_view::View`]). Unpacking is all the module needs: it
//! keeps it free of a general deserializer's code for `Plot` (about 5 KB gzipped through
//! serde-wasm-bindgen) and moves a chart's thousands of points as one typed array.
//!
//! A string is its length in UTF-8 bytes among the numbers and its bytes in the text; a list
//! is its length, then its items; an option is 0 or 1, then its value; a colour is three
//! numbers. Unpacking checks everything and never panics: a packed chart that does not read
//! back is an error, as is anything left over.

use ratelab::plot::{Bins, Plot, Rgb, Series};
use ratelab::Error;
use serde::Serialize;

/// A packed [`Plot`] (as JSON, `{"numbers": [...], "text": "..."}`, in a shipped
/// [`crate::probe_view::View`]).
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct Packed {
    /// Its numbers, in order.
    pub numbers: Vec<f64>,
    /// Its strings, one after the other.
    pub text: String,
}

impl Packed {
    fn num(&mut self, x: f64) {
        self.numbers.push(x);
    }

    fn len(&mut self, n: usize) {
        self.num(n as f64);
    }

    fn str(&mut self, s: &str) {
        self.len(s.len());
        self.text.push_str(s);
    }

    fn nums(&mut self, xs: &[f64]) {
        self.len(xs.len());
        self.numbers.extend_from_slice(xs);
    }

    fn counts(&mut self, xs: &[u32]) {
        self.len(xs.len());
        self.numbers.extend(xs.iter().map(|&x| f64::from(x)));
    }

    fn color(&mut self, c: Rgb) {
        self.numbers.extend(c.map(f64::from));
    }

    fn pair(&mut self, (x, y): (f64, f64)) {
        self.num(x);
        self.num(y);
    }

    fn option<T>(&mut self, x: Option<T>, put: impl FnOnce(&mut Self, T)) {
        self.num(f64::from(u8::from(x.is_some())));
        if let Some(x) = x {
            put(self, x);
        }
    }
}

/// `plot` as numbers and text.
pub fn pack(plot: &Plot) -> Packed {
    let mut p = Packed::default();
    // Every field is named, so a field added to `Plot` fails to compile here until it is packed.
    match plot {
        Plot::Arrivals(Bins {
            width_s,
            admitted,
            rejected,
        }) => {
            p.num(0.0);
            p.num(*width_s);
            p.counts(admitted);
            p.counts(rejected);
        }
        Plot::Window {
            times_s,
            counts,
            limit,
            bound,
            x_max,
        } => {
            p.num(1.0);
            p.nums(times_s);
            p.nums(counts);
            p.num(*limit);
            p.option(*bound, Packed::num);
            p.num(*x_max);
        }
        Plot::Xy {
            title,
            x_label,
            y_label,
            series,
            references,
            y_range,
            x_range,
        } => {
            p.num(2.0);
            p.str(title);
            p.str(x_label);
            p.str(y_label);
            p.len(series.len());
            for Series {
                name,
                points,
                color,
                markers,
                line,
            } in series
            {
                p.str(name);
                p.len(points.len());
                for &point in points {
                    p.pair(point);
                }
                p.color(*color);
                // 0 or 1: a line, its points marked or not; 2 or 3 likewise without the line.
                p.num(f64::from(u8::from(*markers) + 2 * u8::from(!*line)));
            }
            p.len(references.len());
            for (y, label) in references {
                p.num(*y);
                p.str(label);
            }
            p.option(*y_range, Packed::pair);
            p.option(*x_range, Packed::pair);
        }
        Plot::Bars {
            title,
            bars,
            max,
            unit,
        } => {
            p.num(3.0);
            p.str(title);
            p.len(bars.len());
            for (label, value, color) in bars {
                p.str(label);
                p.num(*value);
                p.color(*color);
            }
            p.num(*max);
            p.str(unit);
        }
    }
    p
}

/// Reads a packed plot back.
struct Reader<'a> {
    numbers: &'a [f64],
    text: &'a str,
}

fn bad(problem: &str) -> Error {
    Error::Invalid {
        what: "packed chart".into(),
        got: problem.into(),
        accepted: "a chart packed by the same module".into(),
    }
}

impl Reader<'_> {
    fn num(&mut self) -> Result<f64, Error> {
        let (&x, rest) = self.numbers.split_first().ok_or_else(|| bad("too short"))?;
        self.numbers = rest;
        Ok(x)
    }

    /// A whole number up to `max`.
    fn whole(&mut self, max: f64) -> Result<f64, Error> {
        let x = self.num()?;
        if x.fract() == 0.0 && (0.0..=max).contains(&x) {
            Ok(x)
        } else {
            Err(bad("not a whole number in range"))
        }
    }

    /// A length, at most what is left (each item takes at least one number or byte).
    fn len(&mut self) -> Result<usize, Error> {
        let left = self.numbers.len().max(self.text.len());
        Ok(self.whole(left as f64)? as usize)
    }

    fn str(&mut self) -> Result<String, Error> {
        let n = self.len()?;
        if n > self.text.len() || !self.text.is_char_boundary(n) {
            return Err(bad("a string cut short"));
        }
        let (s, rest) = self.text.split_at(n);
        self.text = rest;
        Ok(s.to_owned())
    }

    fn nums(&mut self) -> Result<Vec<f64>, Error> {
        let n = self.len()?;
        if n > self.numbers.len() {
            return Err(bad("a list cut short"));
        }
        let (xs, rest) = self.numbers.split_at(n);
        self.numbers = rest;
        Ok(xs.to_vec())
    }

    fn counts(&mut self) -> Result<Vec<u32>, Error> {
        self.list(|r| Ok(r.whole(f64::from(u32::MAX))? as u32))
    }

    /// A list: its length, then each item read by `item`. (Loops, not `collect`, which would
    /// make the module a copy of its machinery per item type.)
    fn list<T>(
        &mut self,
        mut item: impl FnMut(&mut Self) -> Result<T, Error>,
    ) -> Result<Vec<T>, Error> {
        let n = self.len()?;
        let mut out = Vec::new();
        for _ in 0..n {
            out.push(item(self)?);
        }
        Ok(out)
    }

    fn color(&mut self) -> Result<Rgb, Error> {
        Ok([self.byte()?, self.byte()?, self.byte()?])
    }

    fn byte(&mut self) -> Result<u8, Error> {
        Ok(self.whole(255.0)? as u8)
    }

    fn flag(&mut self) -> Result<bool, Error> {
        Ok(self.whole(1.0)? == 1.0)
    }

    fn pair(&mut self) -> Result<(f64, f64), Error> {
        Ok((self.num()?, self.num()?))
    }

    fn option<T>(
        &mut self,
        get: impl FnOnce(&mut Self) -> Result<T, Error>,
    ) -> Result<Option<T>, Error> {
        if self.flag()? {
            get(self).map(Some)
        } else {
            Ok(None)
        }
    }

    fn plot(&mut self) -> Result<Plot, Error> {
        Ok(match self.whole(3.0)? as u8 {
            0 => Plot::Arrivals(Bins {
                width_s: self.num()?,
                admitted: self.counts()?,
                rejected: self.counts()?,
            }),
            1 => Plot::Window {
                times_s: self.nums()?,
                counts: self.nums()?,
                limit: self.num()?,
                bound: self.option(Self::num)?,
                x_max: self.num()?,
            },
            2 => Plot::Xy {
                title: self.str()?,
                x_label: self.str()?,
                y_label: self.str()?,
                series: self.list(|r| {
                    let (name, points, color) = (r.str()?, r.list(Self::pair)?, r.color()?);
                    let marks = r.whole(3.0)?;
                    Ok(Series {
                        name,
                        points,
                        color,
                        markers: marks == 1.0 || marks == 3.0,
                        line: marks < 2.0,
                    })
                })?,
                references: self.list(|r| Ok((r.num()?, r.str()?)))?,
                y_range: self.option(Self::pair)?,
                x_range: self.option(Self::pair)?,
            },
            _ => Plot::Bars {
                title: self.str()?,
                bars: self.list(|r| Ok((r.str()?, r.num()?, r.color()?)))?,
                max: self.num()?,
                unit: self.str()?,
            },
        })
    }
}

/// The plot that [`pack`] packed as `numbers` and `text`.
pub fn unpack(numbers: &[f64], text: &str) -> Result<Plot, Error> {
    let mut r = Reader { numbers, text };
    let plot = r.plot()?;
    if r.numbers.is_empty() && r.text.is_empty() {
        Ok(plot)
    } else {
        Err(bad("more than one chart"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sections::{self, Dials, Section};
    use proptest::prelude::*;

    fn round_trip(plot: &Plot) {
        let p = pack(plot);
        assert_eq!(unpack(&p.numbers, &p.text).as_ref(), Ok(plot));
    }

    #[test]
    fn every_chart_the_worker_sends_unpacks_as_it_was_packed() {
        for &s in <Section as crate::controls::Named>::ALL {
            if let Some(plot) = s.figure(&s.params(&Dials::default())).expect("runs").plot {
                round_trip(&plot);
            }
        }
        for plot in sections::rules().expect("runs").plots {
            round_trip(&plot);
        }
    }

    #[test]
    fn every_kind_of_chart_unpacks_with_its_text_and_options() {
        round_trip(&Plot::Arrivals(Bins {
            width_s: 0.5,
            admitted: vec![0, 3, u32::MAX],
            rejected: vec![1, 0, 2],
        }));
        for bound in [None, Some(12.0)] {
            round_trip(&Plot::Window {
                times_s: vec![0.0, 1.5, f64::MAX],
                counts: vec![1.0, -2.0, 0.0],
                limit: 10.0,
                bound,
                x_max: 60.0,
            });
        }
        // Lines with their points marked or not, and points marked alone.
        for (markers, line) in [(true, true), (false, true), (true, false), (false, false)] {
            round_trip(&Plot::Xy {
                title: "bob's «log» ✓".into(),
                x_label: String::new(),
                y_label: "y".into(),
                series: vec![Series {
                    name: "naïve".into(),
                    points: vec![(0.0, 1.0), (f64::MIN_POSITIVE, f64::INFINITY)],
                    color: [0, 0x72, 0xff],
                    markers,
                    line,
                }],
                references: vec![(100.0, "L".into()), (0.5, "".into())],
                y_range: Some((0.0, 105.0)),
                x_range: None,
            });
        }
        round_trip(&Plot::Bars {
            title: "served".into(),
            bars: vec![("token bucket".into(), 99.5, [1, 2, 3])],
            max: 100.0,
            unit: "%".into(),
        });
    }

    #[test]
    fn what_does_not_unpack_is_an_error_naming_it() {
        let p = pack(&Plot::Bars {
            title: "é".into(),
            bars: vec![("a".into(), 1.0, [1, 2, 3])],
            max: 1.0,
            unit: "%".into(),
        });
        for (numbers, text) in [
            (&p.numbers[..p.numbers.len() - 1], p.text.as_str()),
            (&p.numbers[..], &p.text[..2]),
            (&[4.0][..], ""),
            (&[0.0, 1.0, 1e300][..], ""),
        ] {
            let e = unpack(numbers, text).expect_err("refused");
            assert!(e.to_string().contains("packed chart"), "{e}");
        }
        let mut longer = p.clone();
        longer.numbers.push(0.0);
        assert!(unpack(&longer.numbers, &longer.text).is_err());
        // A length that would cut a character in two.
        let mut cut = p;
        cut.numbers[1] = 1.0;
        assert!(unpack(&cut.numbers, &cut.text).is_err());
    }

    proptest! {
        #[test]
        fn unpacking_anything_never_panics(
            numbers in proptest::collection::vec(prop_oneof![(0u8..8).prop_map(f64::from), any::<f64>()], 0..40),
            text in ".{0,12}",
        ) {
            let _ = unpack(&numbers, &text);
        }
    }
}
