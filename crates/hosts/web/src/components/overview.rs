//! The zoomed-out overview of a large graph, rastered once per (model, zoom, pixel ratio, theme)
//! into an offscreen canvas and blitted while panning: a pan frame then costs one `drawImage`
//! instead of a walk over every node and edge.

use std::rc::Rc;

use wasm_bindgen::JsCast;
use web_sys::{CanvasRenderingContext2d, HtmlCanvasElement};

use crate::view::graph_model::GraphModel;
use crate::view::raster::Raster;

/// What the cached picture was drawn for; any change redraws it.
#[derive(Debug, Clone)]
pub struct Key {
    /// The model (held, so its address cannot be reused by a later one while this is kept).
    pub model: Rc<GraphModel>,
    pub scale: f64,
    pub dpr: f64,
    pub dark: bool,
}

impl PartialEq for Key {
    fn eq(&self, o: &Key) -> bool {
        Rc::ptr_eq(&self.model, &o.model)
            && self.scale.to_bits() == o.scale.to_bits()
            && self.dpr.to_bits() == o.dpr.to_bits()
            && self.dark == o.dark
    }
}

impl Key {
    pub fn new(model: &Rc<GraphModel>, scale: f64, dpr: f64, dark: bool) -> Key {
        Key {
            model: model.clone(),
            scale,
            dpr,
            dark,
        }
    }
}

/// The whole model at one zoom, in device pixels: `image = world × scale × dpr − origin`.
pub struct Overview {
    pub key: Key,
    canvas: HtmlCanvasElement,
    /// Device-pixel position of the image's top-left corner at translation 0.
    origin: (f64, f64),
    /// Edges drawn into it (for the stats).
    pub drawn_edges: u32,
}

/// Pixels of room around the bounds for node squares and the path's lines.
const PAD: f64 = 8.0;

/// The image rectangle (origin, width, height) in device pixels for the model at this zoom.
pub fn extent(m: &GraphModel, scale: f64, dpr: f64) -> Option<((f64, f64), u32, u32)> {
    let b = m.bounds?;
    let k = scale * dpr;
    let (x0, y0) = ((b.x0 * k).floor() - PAD, (b.y0 * k).floor() - PAD);
    let (x1, y1) = ((b.x1 * k).ceil() + PAD, (b.y1 * k).ceil() + PAD);
    let (w, h) = (x1 - x0 + 1.0, y1 - y0 + 1.0);
    if !(w.is_finite() && h.is_finite()) || w > 16_384.0 || h > 16_384.0 {
        return None;
    }
    let whole = |v: f64| u32::try_from(crate::services::files::whole(v)).ok();
    Some(((x0, y0), whole(w)?, whole(h)?))
}

impl Overview {
    /// Puts `raster` (whose top-left is `origin`) into a new offscreen canvas. None when the
    /// browser gives no canvas.
    pub fn build(
        key: Key,
        origin: (f64, f64),
        raster: &Raster,
        document: &web_sys::Document,
        drawn_edges: u32,
    ) -> Option<Overview> {
        let canvas: HtmlCanvasElement = document.create_element("canvas").ok()?.dyn_into().ok()?;
        let (w, h) = (
            u32::try_from(raster.width).ok()?,
            u32::try_from(raster.height).ok()?,
        );
        canvas.set_width(w);
        canvas.set_height(h);
        let ctx: CanvasRenderingContext2d = canvas.get_context("2d").ok()??.dyn_into().ok()?;
        let img = web_sys::ImageData::new_with_u8_clamped_array_and_sh(
            wasm_bindgen::Clamped(&raster.pixels),
            w,
            h,
        )
        .ok()?;
        ctx.put_image_data(&img, 0.0, 0.0).ok()?;
        Some(Overview {
            key,
            canvas,
            origin,
            drawn_edges,
        })
    }

    /// Blits the picture for translation (tx, ty) (CSS pixels) on a context in device pixels.
    pub fn blit(&self, ctx: &CanvasRenderingContext2d, tx: f64, ty: f64) {
        let (dx, dy) = (
            (self.origin.0 + tx * self.key.dpr).round(),
            (self.origin.1 + ty * self.key.dpr).round(),
        );
        // Device pixels, one to one (drawImage follows the transform; the picture is already
        // at the pixel ratio).
        ctx.save();
        let _ = ctx.set_transform(1.0, 0.0, 0.0, 1.0, 0.0, 0.0);
        let _ = ctx.draw_image_with_html_canvas_element(&self.canvas, dx, dy);
        ctx.restore();
    }
}

#[cfg(test)]
mod tests;
