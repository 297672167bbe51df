//! The page's canvases, crisp on every screen. The page gives each canvas a backing store of
//! `devicePixelRatio` (and, in the presenter view, a zoom) times its CSS size, and writes the
//! size the chart is laid out at as `data-w` × `data-h`, in CSS pixels. [`area`] scales the
//! canvas's context by backing ÷ layout width and hands the charts an area of the layout size:
//! the charts draw in CSS pixels (12 and 14 px text stays 12 and 14 px), the screen shows them
//! at its full resolution. A canvas without `data-w` is drawn one to one.

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters_canvas::CanvasBackend;
use wasm_bindgen::JsCast;
use web_sys::{CanvasRenderingContext2d, HtmlCanvasElement};

/// The drawing area of the canvas `id`, in its layout size (see the module's text).
pub fn area(id: &str) -> Result<DrawingArea<CanvasBackend, Shift>, String> {
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
    let backend = CanvasBackend::with_canvas_object(canvas)
        .ok_or_else(|| format!("canvas '{id}' has no 2d context"))?;
    Ok(backend.into_drawing_area().shrink((0, 0), (w, h)))
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
