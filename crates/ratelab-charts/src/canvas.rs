//! The page's canvases, crisp on every screen. The page gives each canvas a backing store of
//! `devicePixelRatio` (and, in the presenter view, a zoom) times its CSS size, and writes the
//! size the chart is laid out at as `data-w` × `data-h`, in CSS pixels. [`area`] scales the
//! canvas's context by backing ÷ layout width and hands the charts an area of the layout size:
//! the charts draw in CSS pixels (12 and 14 px text stays 12 and 14 px), the screen shows them
//! at its full resolution. A canvas without `data-w` is drawn one to one.
//!
//! [`Canvas`] draws on it as plotters-canvas 0.3.1's `CanvasBackend` does, call for call, and
//! measures text as plotters' web font does (a hidden span), but writes the numbers in its CSS
//! strings (a colour's alpha, a font's size) with [`ratelab::decimal`]: the standard library's
//! float formatting is not in the page's wasm modules.

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters_backend::text_anchor::{HPos, VPos};
use plotters_backend::{
    BackendColor, BackendCoord, BackendStyle, BackendTextStyle, DrawingErrorKind, FontTransform,
};
use ratelab::decimal::shortest;
use wasm_bindgen::{JsCast, JsValue};
use web_sys::{CanvasRenderingContext2d, HtmlCanvasElement, HtmlElement};

/// A plotters backend drawing on an HTML canvas's 2d context.
#[derive(Debug)]
pub struct Canvas {
    canvas: HtmlCanvasElement,
    context: CanvasRenderingContext2d,
    /// The fill last set (feature `cached-fill`): a chart draws hundreds of marks in one
    /// colour, and each colour set is a string crossing into JavaScript. (This backend is the
    /// context's only user while a chart is drawn.) The first-screen modules go without: it
    /// weighs more than it saves them.
    #[cfg(feature = "cached-fill")]
    fill: Option<Key>,
}

/// A canvas call that failed: the JavaScript exception, as JSON.
#[derive(Debug)]
pub struct CanvasError(String);

impl std::fmt::Display for CanvasError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Canvas Error: {}", self.0)
    }
}

impl std::error::Error for CanvasError {}

fn error_cast(e: JsValue) -> DrawingErrorKind<CanvasError> {
    DrawingErrorKind::DrawingError(CanvasError(
        js_sys::JSON::stringify(&e)
            .map(String::from)
            .unwrap_or_else(|_| "Unknown".to_owned()),
    ))
}

/// A colour as CSS: `rgba(r,g,b,a)`.
fn css_color(color: BackendColor) -> String {
    let (r, g, b) = color.rgb;
    format!("rgba({r},{g},{b},{})", shortest(color.alpha))
}

/// Moves a horizontal or vertical line half a pixel, so that a one-pixel line covers one row
/// or column of pixels instead of blurring over two.
fn fine_hor_ver_lines(from: BackendCoord, end: BackendCoord) -> ((f64, f64), (f64, f64)) {
    let mut from = (f64::from(from.0), f64::from(from.1));
    let mut end = (f64::from(end.0), f64::from(end.1));
    if from.0 == end.0 {
        from.0 -= 0.5;
        end.0 -= 0.5;
    }
    if from.1 == end.1 {
        from.1 -= 0.5;
        end.1 -= 0.5;
    }
    (from, end)
}

/// A colour, comparable: `(r, g, b, alpha's bits)`.
#[cfg(feature = "cached-fill")]
type Key = (u8, u8, u8, u64);

impl Canvas {
    fn set_line_style(&self, style: &impl BackendStyle) {
        self.context.set_stroke_style_str(&css_color(style.color()));
        self.context.set_line_width(style.stroke_width() as f64);
    }

    fn set_fill(&mut self, color: BackendColor) {
        #[cfg(feature = "cached-fill")]
        {
            let (r, g, b) = color.rgb;
            let now = Some((r, g, b, color.alpha.to_bits()));
            if self.fill == now {
                return;
            }
            self.fill = now;
        }
        self.context.set_fill_style_str(&css_color(color));
    }
}

impl DrawingBackend for Canvas {
    type ErrorType = CanvasError;

    fn get_size(&self) -> (u32, u32) {
        (self.canvas.width(), self.canvas.height())
    }

    fn ensure_prepared(&mut self) -> Result<(), DrawingErrorKind<CanvasError>> {
        Ok(())
    }

    fn present(&mut self) -> Result<(), DrawingErrorKind<CanvasError>> {
        Ok(())
    }

    fn draw_pixel(
        &mut self,
        point: BackendCoord,
        color: BackendColor,
    ) -> Result<(), DrawingErrorKind<CanvasError>> {
        if color.alpha == 0.0 {
            return Ok(());
        }
        self.set_fill(color);
        self.context
            .fill_rect(f64::from(point.0), f64::from(point.1), 1.0, 1.0);
        Ok(())
    }

    fn draw_line<S: BackendStyle>(
        &mut self,
        from: BackendCoord,
        to: BackendCoord,
        style: &S,
    ) -> Result<(), DrawingErrorKind<CanvasError>> {
        if style.color().alpha == 0.0 {
            return Ok(());
        }
        let (from, to) = fine_hor_ver_lines(from, to);
        self.set_line_style(style);
        self.context.begin_path();
        self.context.move_to(from.0, from.1);
        self.context.line_to(to.0, to.1);
        self.context.stroke();
        Ok(())
    }

    fn draw_rect<S: BackendStyle>(
        &mut self,
        upper_left: BackendCoord,
        bottom_right: BackendCoord,
        style: &S,
        fill: bool,
    ) -> Result<(), DrawingErrorKind<CanvasError>> {
        if style.color().alpha == 0.0 {
            return Ok(());
        }
        let (x, y) = (f64::from(upper_left.0), f64::from(upper_left.1));
        let w = f64::from(bottom_right.0 - upper_left.0);
        let h = f64::from(bottom_right.1 - upper_left.1);
        if fill {
            self.set_fill(style.color());
            self.context.fill_rect(x, y, w, h);
        } else {
            self.set_line_style(style);
            self.context.stroke_rect(x, y, w, h);
        }
        Ok(())
    }

    fn draw_path<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        path: I,
        style: &S,
    ) -> Result<(), DrawingErrorKind<CanvasError>> {
        if style.color().alpha == 0.0 {
            return Ok(());
        }
        let mut path = path.into_iter();
        self.context.begin_path();
        if let Some(start) = path.next() {
            self.set_line_style(style);
            self.context.move_to(f64::from(start.0), f64::from(start.1));
            for next in path {
                self.context.line_to(f64::from(next.0), f64::from(next.1));
            }
        }
        self.context.stroke();
        Ok(())
    }

    fn fill_polygon<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        path: I,
        style: &S,
    ) -> Result<(), DrawingErrorKind<CanvasError>> {
        if style.color().alpha == 0.0 {
            return Ok(());
        }
        let mut path = path.into_iter();
        self.context.begin_path();
        if let Some(start) = path.next() {
            self.set_fill(style.color());
            self.context.move_to(f64::from(start.0), f64::from(start.1));
            for next in path {
                self.context.line_to(f64::from(next.0), f64::from(next.1));
            }
            self.context.close_path();
        }
        self.context.fill();
        Ok(())
    }

    fn draw_circle<S: BackendStyle>(
        &mut self,
        center: BackendCoord,
        radius: u32,
        style: &S,
        fill: bool,
    ) -> Result<(), DrawingErrorKind<CanvasError>> {
        if style.color().alpha == 0.0 {
            return Ok(());
        }
        if fill {
            self.set_fill(style.color());
        } else {
            self.set_line_style(style);
        }
        self.context.begin_path();
        self.context
            .arc(
                f64::from(center.0),
                f64::from(center.1),
                f64::from(radius),
                0.0,
                std::f64::consts::PI * 2.0,
            )
            .map_err(error_cast)?;
        if fill {
            self.context.fill();
        } else {
            self.context.stroke();
        }
        Ok(())
    }

    fn draw_text<S: BackendTextStyle>(
        &mut self,
        text: &str,
        style: &S,
        pos: BackendCoord,
    ) -> Result<(), DrawingErrorKind<CanvasError>> {
        let color = style.color();
        if color.alpha == 0.0 {
            return Ok(());
        }
        let (mut x, mut y) = (pos.0, pos.1);
        let degree = match style.transform() {
            FontTransform::None => 0.0,
            FontTransform::Rotate90 => 90.0,
            FontTransform::Rotate180 => 180.0,
            FontTransform::Rotate270 => 270.0,
        } / 180.0
            * std::f64::consts::PI;
        // Set before the rotation's save, so that its restore keeps it.
        self.set_fill(color);
        if degree != 0.0 {
            self.context.save();
            self.context
                .translate(f64::from(x), f64::from(y))
                .map_err(error_cast)?;
            self.context.rotate(degree).map_err(error_cast)?;
            x = 0;
            y = 0;
        }
        self.context.set_text_baseline(match style.anchor().v_pos {
            VPos::Top => "top",
            VPos::Center => "middle",
            VPos::Bottom => "bottom",
        });
        self.context.set_text_align(match style.anchor().h_pos {
            HPos::Left => "start",
            HPos::Right => "end",
            HPos::Center => "center",
        });
        self.context.set_font(&format!(
            "{} {}px {}",
            style.style().as_str(),
            shortest(style.size()),
            style.family().as_str(),
        ));
        self.context
            .fill_text(text, f64::from(x), f64::from(y))
            .map_err(error_cast)?;
        if degree != 0.0 {
            self.context.restore();
        }
        Ok(())
    }

    /// The text's size as the page lays it out: a hidden span in the font, measured and
    /// removed, as plotters' web font measures it.
    fn estimate_text_size<S: BackendTextStyle>(
        &self,
        text: &str,
        style: &S,
    ) -> Result<(u32, u32), DrawingErrorKind<CanvasError>> {
        let unavailable = |what: &str| {
            DrawingErrorKind::DrawingError(CanvasError(format!("no {what} to measure text in")))
        };
        let document = web_sys::window()
            .and_then(|w| w.document())
            .ok_or_else(|| unavailable("document"))?;
        let body = document.body().ok_or_else(|| unavailable("body"))?;
        let span = document.create_element("span").map_err(error_cast)?;
        span.set_text_content(Some(text));
        span.set_attribute(
            "style",
            &format!(
                "display: inline-block; font-family:{}; font-style:{}; font-size: {}px; position: fixed; top: 100%",
                style.family().as_str(),
                style.style().as_str(),
                shortest(style.size())
            ),
        )
        .map_err(error_cast)?;
        body.append_with_node_1(&span).map_err(error_cast)?;
        let span: HtmlElement = span.dyn_into().map_err(|e| error_cast(e.into()))?;
        let (width, height) = (span.offset_width(), span.offset_height());
        span.remove();
        Ok((width as u32, height as u32))
    }
}

/// The drawing area of the canvas `id`, in its layout size (see the module's text).
pub fn area(id: &str) -> Result<DrawingArea<Canvas, Shift>, String> {
    let canvas: HtmlCanvasElement = web_sys::window()
        .and_then(|w| w.document())
        .and_then(|d| d.get_element_by_id(id))
        .and_then(|e| e.dyn_into().ok())
        .ok_or_else(|| format!("no canvas with id '{id}'"))?;
    let (backing_w, backing_h) = (canvas.width(), canvas.height());
    let attr = |name: &str, or: u32| {
        canvas
            .get_attribute(name)
            .and_then(|v| v.parse::<u32>().ok())
            .filter(|&v| v > 0)
            .unwrap_or(or)
    };
    let (w, h) = layout(backing_w, backing_h, attr("data-w", 0), attr("data-h", 0));
    let scale = f64::from(backing_w) / f64::from(w);
    let context: CanvasRenderingContext2d = canvas
        .get_context("2d")
        .ok()
        .flatten()
        .and_then(|c| c.dyn_into().ok())
        .ok_or_else(|| format!("canvas '{id}' has no 2d context"))?;
    // Absolute, not cumulative: every draw starts from the same transform.
    context
        .set_transform(scale, 0.0, 0.0, scale, 0.0, 0.0)
        .map_err(|_| format!("canvas '{id}' refused its scale"))?;
    Ok(Canvas {
        canvas,
        context,
        #[cfg(feature = "cached-fill")]
        fill: None,
    }
    .into_drawing_area()
    .shrink((0, 0), (w, h)))
}

/// The layout size of a canvas whose backing store is `backing_w` × `backing_h` and whose page
/// asked for `w` × `h` (0: not given). Never larger than the backing store (a scale below 1
/// would blur); without a width, the backing store itself.
pub fn layout(backing_w: u32, backing_h: u32, w: u32, h: u32) -> (u32, u32) {
    let backing_w = backing_w.max(1);
    let backing_h = backing_h.max(1);
    if w == 0 {
        return (backing_w, backing_h);
    }
    let w = w.min(backing_w);
    let h = if h == 0 { backing_h } else { h.min(backing_h) };
    (w, h)
}

#[cfg(test)]
mod tests {
    use super::layout;

    #[test]
    fn a_canvas_is_laid_out_at_the_size_the_page_gave_never_above_its_backing_store() {
        assert_eq!(layout(880, 260, 0, 0), (880, 260), "no data-w: one to one");
        assert_eq!(layout(1760, 520, 880, 260), (880, 260), "2x");
        assert_eq!(layout(1080, 780, 360, 260), (360, 260), "3x");
        assert_eq!(layout(400, 100, 880, 260), (400, 100), "a stale data-w");
        assert_eq!(layout(0, 0, 0, 0), (1, 1));
    }
}
