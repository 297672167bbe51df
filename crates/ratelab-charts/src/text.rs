//! Fitting text into a chart: a text's size as the backend measures it (remembered, since the
//! page's charts measure the same few texts at every redraw), and a text shortened or wrapped
//! to a width.

use crate::style::err;
use plotters::coord::Shift;
use plotters::prelude::*;
use std::cell::RefCell;

/// A measured text: the text, its font size and its width and height.
type Measured = (String, u32, (i32, i32));

thread_local! {
    /// Texts measured so far, with their font size. On the page measuring lays out a span in
    /// the document, and the charts measure the same few texts at every redraw (the mechanism
    /// view at every frame of its playback).
    static MEASURED: RefCell<Vec<Measured>> = const { RefCell::new(Vec::new()) };
}

/// The width and height of `text` in `style`, as the backend measures it: the browser in the
/// page, plotters' estimate in SVG.
pub(crate) fn measure<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    text: &str,
    style: &TextStyle,
) -> Result<(i32, i32), String> {
    let size = style.font.get_size().round() as u32;
    MEASURED.with(|m| {
        let mut m = m.borrow_mut();
        if let Some(e) = m.iter().find(|(t, s, _)| *s == size && t == text) {
            return Ok(e.2);
        }
        let (w, h) = area.estimate_text_size(text, style).map_err(err)?;
        let wh = (w as i32, h as i32);
        if m.len() >= 512 {
            m.clear();
        }
        m.push((text.to_owned(), size, wh));
        Ok(wh)
    })
}

/// How wide a text is, in pixels, as measured.
pub(crate) type Width<'w> = &'w mut dyn FnMut(&str) -> Result<i32, String>;

/// `text` cut to at most `max` pixels wide as `width` measures it, ending in an ellipsis where
/// it had to be cut (an ellipsis alone if nothing else fits).
pub(crate) fn shorten(text: &str, max: i32, width: Width) -> Result<String, String> {
    let full = width(text)?;
    if full <= max {
        return Ok(text.to_owned());
    }
    let chars = text.chars().count();
    // The first `n` characters, less any space they end in, and an ellipsis.
    let cut = |n: usize| {
        let end = text.char_indices().nth(n).map_or(text.len(), |(i, _)| i);
        let mut cut = text[..end].trim_end().to_owned();
        cut.push('…');
        cut
    };
    // Start from the share of characters that fits, then step to the longest that does.
    let mut n = (chars as i64 * i64::from(max.max(0)) / i64::from(full.max(1))) as usize;
    while n > 0 && width(&cut(n))? > max {
        n -= 1;
    }
    while n + 1 < chars && width(&cut(n + 1))? <= max {
        n += 1;
    }
    Ok(cut(n))
}

/// `text` broken at spaces into at most `lines` lines of at most `max` pixels each; a word
/// wider than a line, or the rest of the text when the lines run out, is shortened with an
/// ellipsis.
pub(crate) fn wrap(
    text: &str,
    max: i32,
    lines: usize,
    width: Width,
) -> Result<Vec<String>, String> {
    if text.is_empty() {
        return Ok(Vec::new());
    }
    // Most texts fit whole: one measurement.
    if width(text)? <= max {
        return Ok(vec![text.to_owned()]);
    }
    let words: Vec<&str> = text.split(' ').filter(|w| !w.is_empty()).collect();
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < words.len() {
        if out.len() + 1 == lines.max(1) {
            out.push(shorten(&words[i..].join(" "), max, width)?);
            break;
        }
        let mut line = words[i].to_owned();
        i += 1;
        while let Some(next) = words.get(i) {
            let mut longer = line.clone();
            longer.push(' ');
            longer.push_str(next);
            if width(&longer)? > max {
                break;
            }
            line = longer;
            i += 1;
        }
        out.push(shorten(&line, max, width)?);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Six pixels a character, as a stand-in for a font.
    fn six(s: &str) -> Result<i32, String> {
        Ok(6 * s.chars().count() as i32)
    }

    fn width(s: &str) -> i32 {
        6 * s.chars().count() as i32
    }

    fn cut(text: &str, max: i32) -> String {
        shorten(text, max, &mut six).expect("measures")
    }

    fn lines(text: &str, max: i32, n: usize) -> Vec<String> {
        wrap(text, max, n, &mut six).expect("measures")
    }

    #[test]
    fn shortening_keeps_what_fits_and_marks_the_cut() {
        assert_eq!(cut("sliding log", 200), "sliding log");
        let short = cut("token-bucket:burst=50", 60);
        assert_eq!(short, "token-buc…");
        assert!(width(&short) <= 60);
        assert_eq!(cut("a b c d", 25), "a b…");
        assert_eq!(cut("abc", 3), "…");
    }

    #[test]
    fn a_caption_wraps_at_spaces_within_the_width() {
        let title = "A retrying client after a spike of 200: share served over 200 minutes";
        let two = lines(title, 264, 3);
        assert_eq!(two.join(" "), title, "nothing lost: {two:?}");
        assert!(two.len() == 2 && two.iter().all(|l| width(l) <= 264));
        assert_eq!(lines(title, 1000, 3), [title]);
        // Out of lines: the last one says so.
        let cut = lines(title, 120, 2);
        assert!(cut.len() == 2 && cut[1].ends_with('…'), "{cut:?}");
        assert!(cut.iter().all(|l| width(l) <= 120), "{cut:?}");
        assert!(lines("", 100, 2).is_empty());
    }
}
