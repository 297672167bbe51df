//! How every chart looks and fails: the light and dark [`Theme`], the font, palette colours as
//! plotters takes them, and the error every chart function returns.

use plotters::style::{FontDesc, FontFamily, FontStyle, RGBColor};
use ratelab::plot::Rgb;

/// Foreground, background and grid colours, so one chart serves light and dark pages.
#[derive(Debug, Clone, Copy)]
pub struct Theme {
    /// Text and axes.
    pub fg: RGBColor,
    /// The plot background.
    pub bg: RGBColor,
    /// Grid lines.
    pub grid: RGBColor,
}

impl Theme {
    /// Dark text on white.
    pub const LIGHT: Theme = Theme {
        fg: RGBColor(0x1f, 0x23, 0x28),
        bg: RGBColor(0xff, 0xff, 0xff),
        grid: RGBColor(0xe3, 0xe6, 0xea),
    };
    /// Light text on near-black.
    pub const DARK: Theme = Theme {
        fg: RGBColor(0xe6, 0xe8, 0xeb),
        bg: RGBColor(0x16, 0x19, 0x1d),
        grid: RGBColor(0x33, 0x38, 0x3f),
    };
}

/// The charts' font. Built from the family value rather than from the name `"sans-serif"`,
/// whose conversion lowercases the name and so pulls Unicode case tables into the page's wasm.
pub(crate) fn font(size: f64) -> FontDesc<'static> {
    FontDesc::new(FontFamily::SansSerif, size, FontStyle::Normal)
}

/// The error every chart function returns: whatever the backend could not draw.
pub type ChartResult = Result<(), String>;

pub(crate) fn err<E: std::fmt::Display>(e: E) -> String {
    e.to_string()
}

/// A palette colour as plotters takes it.
pub const fn rgb(c: Rgb) -> RGBColor {
    RGBColor(c[0], c[1], c[2])
}
