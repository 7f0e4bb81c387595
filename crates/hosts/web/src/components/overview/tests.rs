//! In a real browser: the blitted overview shows the pixels the per-frame raster draws, at
//! the same place, before and after pans (whole-pixel translations, where both agree exactly).
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests: a failed expectation should panic

use std::rc::Rc;

use js_sys::Reflect;
use wasm_bindgen::JsCast;
use wasm_bindgen_test::{wasm_bindgen_test, wasm_bindgen_test_configure};
use web_sys::{CanvasRenderingContext2d, HtmlCanvasElement};

use crate::components::draw::{draw, Scene, RASTER_MIN_NODES};
use crate::view::viewport::Viewport;

wasm_bindgen_test_configure!(run_in_browser);

fn set_cache_off(off: bool) {
    let w = web_sys::window().unwrap();
    Reflect::set(&w, &"__memtrace_overview_off".into(), &off.into()).unwrap();
}

fn pixels(c: &HtmlCanvasElement) -> Vec<u8> {
    let ctx: CanvasRenderingContext2d = c.get_context("2d").unwrap().unwrap().dyn_into().unwrap();
    let (w, h) = (f64::from(c.width()), f64::from(c.height()));
    ctx.get_image_data(0.0, 0.0, w, h).unwrap().data().0
}

#[wasm_bindgen_test]
fn blitted_overview_matches_the_per_frame_raster() {
    let opts = memtrace::format::synth::Options {
        nodes: 3000,
        seed: 7,
    };
    let trace = std::sync::Arc::new(memtrace::format::synth::trace(&opts).unwrap());
    let model = Rc::new(crate::view::graph_model::build(&trace, None, None, &[]));
    assert!(model.layout.nodes.len() > RASTER_MIN_NODES);
    let doc = web_sys::window().unwrap().document().unwrap();
    let canvas: HtmlCanvasElement = doc.create_element("canvas").unwrap().dyn_into().unwrap();
    canvas
        .set_attribute("style", "width:600px;height:400px;display:block")
        .unwrap();
    doc.body().unwrap().append_child(&canvas).unwrap();
    let mut scene = Scene {
        model: Some(model.clone()),
        trace: Some(trace),
        ..Scene::default()
    };
    let mut view = Viewport {
        width: 600.0,
        height: 400.0,
        ..Viewport::default()
    };
    view.fit(model.bounds.unwrap(), 40.0, 1.2);
    view.tx = view.tx.round();
    view.ty = view.ty.round();
    for (dx, dy) in [(0.0, 0.0), (37.0, 12.0), (-121.0, -40.0)] {
        view.pan(dx, dy);
        set_cache_off(false);
        draw(&canvas, &mut scene, &mut view);
        assert!(scene.overview.is_some(), "the overview is cached");
        let cached = pixels(&canvas);
        set_cache_off(true);
        draw(&canvas, &mut scene, &mut view);
        assert!(scene.overview.is_none());
        let plain = pixels(&canvas);
        let bg = &plain[..3];
        let ink = plain.chunks(4).filter(|p| &p[..3] != bg).count();
        assert!(ink > 500, "the raster drew something ({ink} pixels)");
        let differ = cached
            .chunks(4)
            .zip(plain.chunks(4))
            .filter(|(a, b)| a != b)
            .count();
        assert!(
            differ * 100 <= ink,
            "at pan ({dx}, {dy}) {differ} of {ink} inked pixels differ"
        );
    }
    set_cache_off(false);
    canvas.remove();
}
