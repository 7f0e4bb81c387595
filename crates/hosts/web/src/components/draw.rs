//! Draws a [`GraphModel`] on a canvas: lifeline band, edges, nodes by colour bucket, labels when
//! zoomed in, only what is in the viewport. Publishes `window.__memtrace_graph_stats` (drawn
//! counts, frame time, screen points of the first lifeline) for tests and the benchmark.

use std::collections::BTreeMap;
use std::f64::consts::TAU;
use std::rc::Rc;
use std::sync::Arc;

use js_sys::{Array, Object, Reflect};
use memtrace::layout::NodeRef;
use memtrace::Trace;
use wasm_bindgen::{JsCast, JsValue};
use web_sys::{CanvasRenderingContext2d, HtmlCanvasElement};

use super::overview::{self, Overview};
use crate::view::graph_model::{label, preview, GraphModel, Hue};
use crate::view::raster::{rgb, Raster, Rgb};
use crate::view::viewport::{Detail, Rect, Viewport};

/// What the canvas shows now; updated on every render, read by event handlers.
#[derive(Default)]
pub struct Scene {
    pub model: Option<Rc<GraphModel>>,
    pub trace: Option<Arc<Trace>>,
    pub selected: Option<NodeRef>,
    pub hover: Option<u32>,
    /// Laid indices of the decisive set's ops with their 1-based cause number.
    pub causes: Vec<(u32, usize)>,
    /// The zoomed-out picture of a large model, reused while only the translation changes.
    pub overview: Option<Overview>,
}

/// Theme colours, from `prefers-color-scheme`.
struct Theme {
    dark: bool,
    bg: &'static str,
    /// The edge colour as RGB for the raster (drawn at partial alpha).
    edge_rgb: Rgb,
    fg: &'static str,
    muted: &'static str,
    edge: &'static str,
    band: &'static str,
    path: &'static str,
    verdict: &'static str,
}

fn theme() -> Theme {
    let dark = web_sys::window()
        .and_then(|w| w.match_media("(prefers-color-scheme: dark)").ok().flatten())
        .is_some_and(|m| m.matches());
    if dark {
        Theme {
            dark: true,
            bg: "#16181c",
            edge_rgb: [154, 161, 171],
            fg: "#e6e8eb",
            muted: "#9aa1ab",
            edge: "rgba(154,161,171,0.35)",
            band: "rgba(81,207,102,0.07)",
            path: "#ffd43b",
            verdict: "#ff6b6b",
        }
    } else {
        Theme {
            dark: false,
            bg: "#ffffff",
            edge_rgb: [95, 102, 112],
            fg: "#1d1f23",
            muted: "#5f6670",
            edge: "rgba(95,102,112,0.30)",
            band: "rgba(47,158,68,0.06)",
            path: "#fd7e14",
            verdict: "#e03131",
        }
    }
}

/// The fill colour of a hue (readable on both themes).
pub fn color(h: Hue) -> &'static str {
    match h {
        Hue::Message => "#4c6ef5",
        Hue::Memory => "#2f9e44",
        Hue::Llm => "#9775fa",
        Hue::Prompt => "#a0652a",
        Hue::Retrieval => "#1098ad",
        Hue::Query => "#d6336c",
        Hue::Extraction => "#364fc7",
        Hue::Update => "#2b8a3e",
        Hue::Deletion => "#c92a2a",
        Hue::Evaluation => "#0b7285",
        Hue::Other => "#868e96",
    }
}

/// Draws the scene and returns nothing; errors (no 2D context) leave the canvas blank.
pub fn draw(canvas: &HtmlCanvasElement, scene: &mut Scene, view: &mut Viewport) {
    let Some(window) = web_sys::window() else {
        return;
    };
    let t0 = window.performance().map(|p| p.now());
    let (w, h) = (
        f64::from(canvas.client_width().max(1)),
        f64::from(canvas.client_height().max(1)),
    );
    let dpr = window.device_pixel_ratio().max(1.0);
    let (pw, ph) = (
        crate::services::files::whole(w * dpr) as u32,
        crate::services::files::whole(h * dpr) as u32,
    );
    if canvas.width() != pw || canvas.height() != ph {
        canvas.set_width(pw);
        canvas.set_height(ph);
    }
    view.width = w;
    view.height = h;
    let Some(ctx) = canvas
        .get_context("2d")
        .ok()
        .flatten()
        .and_then(|c| c.dyn_into::<CanvasRenderingContext2d>().ok())
    else {
        return;
    };
    let th = theme();
    let _ = ctx.set_transform(dpr, 0.0, 0.0, dpr, 0.0, 0.0);
    ctx.set_fill_style_str(th.bg);
    ctx.fill_rect(0.0, 0.0, w, h);
    let (Some(m), Some(trace)) = (scene.model.clone(), scene.trace.clone()) else {
        return;
    };
    let l = &m.layout;
    let s = view.scale;
    let detail = view.detail();
    let visible = view.visible().grow(60.0 / s.max(0.01));
    let lane_gap = if l.lanes > 1 {
        f64::from(l.height) / f64::from(l.lanes - 1)
    } else {
        34.0
    };

    // Sizes follow the zoom between a readable minimum and maximum.
    let (op_w, op_h, r) = (
        (26.0 * s).clamp(3.0, 34.0),
        (16.0 * s).clamp(2.0, 20.0),
        (7.0 * s).clamp(1.5, 9.0),
    );
    let side = ((r * dpr).round() as i64 / 2).clamp(0, 4);
    // A large model zoomed out: blit its cached picture (redrawn only when the zoom changes).
    let cached = detail == Detail::Dots && l.nodes.len() > RASTER_MIN_NODES && !overview_off();
    if !cached {
        scene.overview = None;
    }
    let blitted = cached
        && blit_overview(
            &ctx,
            scene,
            view,
            &th,
            (dpr, side),
            u64::from(pw) * u64::from(ph),
        );
    let (shown, shown_count) = if blitted {
        (Vec::new(), m.grid.count(view.visible()))
    } else {
        let v = m.grid.query(visible);
        let n = v.len();
        (v, n)
    };
    // Many nodes on screen: one pixel buffer instead of a canvas call per element.
    let raster = blitted || (detail == Detail::Dots && shown.len() > RASTER_MIN_NODES);
    let mut drawn_edges = scene.overview.as_ref().map_or(0, |o| o.drawn_edges);
    if raster && !blitted {
        let px = |x: f32, y: f32| {
            let (sx, sy) = view.to_screen(f64::from(x), f64::from(y));
            (sx * dpr, sy * dpr)
        };
        let mut ras = Raster::new(pw as usize, ph as usize, rgb(th.bg));
        drawn_edges = paint(&mut ras, &m, px, Some(view.visible()), &shown, &th, side);
        if let Ok(img) = web_sys::ImageData::new_with_u8_clamped_array_and_sh(
            wasm_bindgen::Clamped(&ras.pixels),
            pw,
            ph,
        ) {
            let _ = ctx.put_image_data(&img, 0.0, 0.0);
        }
    }
    // Lifeline band and lanes.
    if l.lifeline_lanes > 0 {
        let (_, y0) = view.to_screen(0.0, -lane_gap / 2.0);
        let (_, y1) = view.to_screen(0.0, (f64::from(l.lifeline_lanes) - 0.5) * lane_gap);
        ctx.set_fill_style_str(th.band);
        ctx.fill_rect(0.0, y0, w, y1 - y0);
        if detail != Detail::Dots {
            ctx.set_fill_style_str(th.muted);
            ctx.set_font("11px system-ui, sans-serif");
            let _ = ctx.fill_text(
                "memory units: one lane each, versions left → right",
                8.0,
                y0.max(0.0) + 13.0,
            );
        }
    }
    if !raster {
        ctx.set_line_width(3.0_f64.min(6.0 * s).max(1.0));
        ctx.set_stroke_style_str("rgba(47,158,68,0.55)");
        ctx.begin_path();
        for (a, b) in l.lifeline_ends() {
            let (a, b) = (
                (f64::from(a.x), f64::from(a.y)),
                (f64::from(b.x), f64::from(b.y)),
            );
            if visible.meets_segment(a, b) {
                let (ax, ay) = view.to_screen(a.0, a.1);
                let (bx, by) = view.to_screen(b.0, b.1);
                ctx.move_to(ax, ay);
                ctx.line_to(bx, by);
            }
        }
        ctx.stroke();

        // Edges: plain first, the information path on top.
        for on_path in [false, true] {
            ctx.begin_path();
            for e in &l.edges {
                let (Some(a), Some(b)) = (l.nodes.get(e.from as usize), l.nodes.get(e.to as usize))
                else {
                    continue;
                };
                let hot = m.on_path.get(e.from as usize).copied().unwrap_or(false)
                    && m.on_path.get(e.to as usize).copied().unwrap_or(false);
                if hot != on_path {
                    continue;
                }
                let (a, b) = (
                    (f64::from(a.x), f64::from(a.y)),
                    (f64::from(b.x), f64::from(b.y)),
                );
                if !visible.meets_segment(a, b) {
                    continue;
                }
                drawn_edges += 1;
                let (ax, ay) = view.to_screen(a.0, a.1);
                let (bx, by) = view.to_screen(b.0, b.1);
                ctx.move_to(ax, ay);
                if detail == Detail::Dots {
                    ctx.line_to(bx, by);
                } else {
                    let mx = (ax + bx) / 2.0;
                    ctx.bezier_curve_to(mx, ay, mx, by, bx, by);
                }
            }
            if on_path {
                ctx.set_stroke_style_str(th.path);
                ctx.set_line_width((5.0 * s).clamp(2.5, 5.0));
                ctx.set_global_alpha(0.75);
                ctx.stroke();
                ctx.set_global_alpha(1.0);
                continue;
            }
            ctx.set_stroke_style_str(th.edge);
            ctx.set_line_width((1.2 * s).clamp(0.5, 1.5));
            ctx.stroke();
        }

        // Nodes, bucketed by colour and shape so each bucket is one path.
        let mut buckets: BTreeMap<(bool, &'static str), Vec<(f64, f64)>> = BTreeMap::new();
        for &i in &shown {
            let Some(n) = l.nodes.get(i as usize) else {
                continue;
            };
            let hue = m.hues.get(i as usize).copied().unwrap_or(Hue::Other);
            let is_op = matches!(n.node, NodeRef::Op(_));
            let p = view.to_screen(f64::from(n.x), f64::from(n.y));
            buckets.entry((is_op, color(hue))).or_default().push(p);
        }
        for ((is_op, fill), points) in &buckets {
            ctx.set_fill_style_str(fill);
            ctx.begin_path();
            for &(x, y) in points {
                if detail == Detail::Dots {
                    ctx.rect(x - r, y - r, 2.0 * r, 2.0 * r);
                } else if *is_op {
                    ctx.rect(x - op_w / 2.0, y - op_h / 2.0, op_w, op_h);
                } else {
                    ctx.move_to(x + r, y);
                    let _ = ctx.arc(x, y, r, 0.0, TAU);
                }
            }
            ctx.fill();
        }
    }
    // Rings: path, verdict, selection, hover.
    let ring = |i: u32, style: &str, width: f64, pad: f64| {
        let Some(n) = l.nodes.get(i as usize) else {
            return;
        };
        let (x, y) = view.to_screen(f64::from(n.x), f64::from(n.y));
        ctx.set_stroke_style_str(style);
        ctx.set_line_width(width);
        ctx.begin_path();
        if matches!(n.node, NodeRef::Op(_)) {
            ctx.rect(
                x - op_w / 2.0 - pad,
                y - op_h / 2.0 - pad,
                op_w + 2.0 * pad,
                op_h + 2.0 * pad,
            );
        } else {
            let _ = ctx.arc(x, y, r + pad, 0.0, TAU);
        }
        ctx.stroke();
    };
    if detail != Detail::Dots {
        for &i in &shown {
            if m.on_path.get(i as usize).copied().unwrap_or(false) {
                ring(i, th.path, 2.0, 2.0);
            }
        }
    }
    if let Some(v) = m.verdict {
        ring(v, th.verdict, 3.0, 5.0);
    }
    // The decisive set: a ring and a `cause N` tag per op, at every zoom; a tag that would
    // cover an earlier one moves up.
    ctx.set_font("bold 11px system-ui, sans-serif");
    let mut tags: Vec<(f64, f64, f64)> = Vec::new();
    for &(i, n) in &scene.causes {
        let color = crate::runs::causes::cause_color(n);
        ring(i, color, 3.0, 8.0);
        if let Some(node) = l.nodes.get(i as usize) {
            let (x, y) = view.to_screen(f64::from(node.x), f64::from(node.y));
            let text = format!("cause {n}");
            let tw = ctx.measure_text(&text).map_or(44.0, |m| m.width());
            let bx = x - tw / 2.0 - 4.0;
            let top = y - op_h / 2.0 - 28.0;
            let mut by = top;
            while tags.iter().any(|&(ox, oy, ow)| {
                bx < ox + ow + 2.0 && ox < bx + tw + 10.0 && (by - oy).abs() < 18.0
            }) {
                by -= 18.0;
            }
            tags.push((bx, by, tw + 8.0));
            if by < top {
                ctx.set_stroke_style_str(color);
                ctx.set_line_width(1.5);
                ctx.begin_path();
                ctx.move_to(x, by + 16.0);
                ctx.line_to(x, y - op_h / 2.0 - 8.0);
                ctx.stroke();
            }
            ctx.set_fill_style_str(color);
            ctx.fill_rect(bx, by, tw + 8.0, 16.0);
            ctx.set_fill_style_str("#ffffff");
            let _ = ctx.fill_text(&text, bx + 4.0, by + 12.0);
        }
    }
    let selected = scene.selected.and_then(|n| l.index_of(n));
    if let Some(i) = selected {
        ring(i, th.fg, 2.5, 4.0);
    }
    if let Some(i) = scene.hover {
        ring(i, th.muted, 1.5, 3.0);
    }

    // Labels when zoomed in and not crowded.
    if detail == Detail::Labels && shown.len() <= 2500 {
        ctx.set_fill_style_str(th.fg);
        ctx.set_font("11px system-ui, sans-serif");
        ctx.set_text_align("center");
        for &i in &shown {
            let Some(n) = l.nodes.get(i as usize) else {
                continue;
            };
            let (x, y) = view.to_screen(f64::from(n.x), f64::from(n.y));
            let _ = ctx.fill_text(&label(&trace, n.node), x, y + op_h / 2.0 + 12.0);
        }
        ctx.set_text_align("start");
    }
    // Hover tooltip.
    if let Some(n) = scene.hover.and_then(|i| l.nodes.get(i as usize)) {
        let (x, y) = view.to_screen(f64::from(n.x), f64::from(n.y));
        let text = preview(&trace, n.node);
        ctx.set_font("12px system-ui, sans-serif");
        let tw = ctx.measure_text(&text).map_or(200.0, |m| m.width());
        let (bx, by) = ((x + 12.0).min(w - tw - 16.0).max(0.0), (y - 34.0).max(0.0));
        ctx.set_fill_style_str(th.fg);
        ctx.fill_rect(bx, by, tw + 12.0, 20.0);
        ctx.set_fill_style_str(th.bg);
        let _ = ctx.fill_text(&text, bx + 6.0, by + 14.0);
    }

    let frame_ms = match (t0, window.performance()) {
        (Some(a), Some(p)) => p.now() - a,
        _ => 0.0,
    };
    publish_stats(view, &m, shown_count, drawn_edges, frame_ms, detail, raster);
    publish_causes(view, &m, &scene.causes);
}

/// Above this many nodes on screen (zoomed out), draw into a pixel buffer.
pub(crate) const RASTER_MIN_NODES: usize = 2000;
/// Above this many nodes on screen only the information path's edges are drawn.
const RASTER_EDGE_LIMIT_NODES: usize = 20_000;

/// Largest cached overview, in multiples of the canvas's pixels: past this (zoomed in) drawing
/// only what is on screen each frame is cheaper than keeping the whole picture.
const OVERVIEW_MAX_SCREENS: u64 = 3;

/// True when `window.__memtrace_overview_off` is set: the benchmark's before/after switch
/// (every frame is then rastered from scratch, as before the cache).
fn overview_off() -> bool {
    web_sys::window()
        .and_then(|w| Reflect::get(&w, &"__memtrace_overview_off".into()).ok())
        .is_some_and(|v| v.is_truthy())
}

/// Blits the cached overview for this view, rastering it first when the model, zoom, pixel ratio
/// or theme changed. False when it would be too large (then the caller draws per frame).
fn blit_overview(
    ctx: &CanvasRenderingContext2d,
    scene: &mut Scene,
    view: &Viewport,
    th: &Theme,
    (dpr, side): (f64, i64),
    screen_px: u64,
) -> bool {
    let Some(m) = scene.model.clone() else {
        return false;
    };
    let key = overview::Key::new(&m, view.scale, dpr, th.dark);
    if scene.overview.as_ref().is_none_or(|o| o.key != key) {
        scene.overview = None;
        let Some((origin, w, h)) = overview::extent(&m, view.scale, dpr) else {
            return false;
        };
        if u64::from(w) * u64::from(h) > screen_px.saturating_mul(OVERVIEW_MAX_SCREENS) {
            return false;
        }
        let k = view.scale * dpr;
        let px = |x: f32, y: f32| (f64::from(x) * k - origin.0, f64::from(y) * k - origin.1);
        let mut ras = Raster::new(w as usize, h as usize, rgb(th.bg));
        let all: Vec<u32> = (0..u32::try_from(m.layout.nodes.len()).unwrap_or(u32::MAX)).collect();
        let drawn = paint(&mut ras, &m, px, None, &all, th, side);
        let doc = web_sys::window().and_then(|w| w.document());
        scene.overview = doc.and_then(|d| Overview::build(key, origin, &ras, &d, drawn));
    }
    let Some(o) = scene.overview.as_ref() else {
        return false;
    };
    o.blit(ctx, view.tx, view.ty);
    true
}

/// The zoomed-out picture into a pixel buffer: edges (only the information path's when crowded),
/// lifelines and nodes. `px` maps world to raster pixels; `cull` skips edges outside (world).
/// Returns the edges drawn.
fn paint(
    ras: &mut Raster,
    m: &GraphModel,
    px: impl Fn(f32, f32) -> (f64, f64),
    cull: Option<Rect>,
    shown: &[u32],
    th: &Theme,
    side: i64,
) -> u32 {
    let l = &m.layout;
    let mut drawn = 0u32;
    let max_steps = (ras.width + ras.height) * 2;
    let path_rgb = rgb(th.path);
    // With this many nodes on screen plain edges are a grey mush: draw the path only.
    let plain_edges = shown.len() <= RASTER_EDGE_LIMIT_NODES;
    for e in &l.edges {
        let (Some(a), Some(b)) = (l.nodes.get(e.from as usize), l.nodes.get(e.to as usize)) else {
            continue;
        };
        let hot = m.on_path.get(e.from as usize).copied().unwrap_or(false)
            && m.on_path.get(e.to as usize).copied().unwrap_or(false);
        if !hot && !plain_edges {
            continue;
        }
        let (wa, wb) = (
            (f64::from(a.x), f64::from(a.y)),
            (f64::from(b.x), f64::from(b.y)),
        );
        if cull.is_some_and(|v| !v.meets_segment(wa, wb)) {
            continue;
        }
        let (c, alpha) = if hot {
            (path_rgb, 255)
        } else {
            (th.edge_rgb, 70)
        };
        drawn += 1;
        ras.line(px(a.x, a.y), px(b.x, b.y), c, alpha, max_steps);
    }
    let memory = rgb(color(Hue::Memory));
    for (a, b) in l.lifeline_ends() {
        ras.line(px(a.x, a.y), px(b.x, b.y), memory, 160, max_steps);
    }
    for &i in shown {
        let Some(n) = l.nodes.get(i as usize) else {
            continue;
        };
        let hue = m.hues.get(i as usize).copied().unwrap_or(Hue::Other);
        let (x, y) = px(n.x, n.y);
        ras.square(x, y, side, rgb(color(hue)));
    }
    drawn
}

/// `window.__memtrace_graph_stats`: what the last frame drew.
fn publish_stats(
    view: &Viewport,
    m: &GraphModel,
    drawn_nodes: usize,
    drawn_edges: u32,
    frame_ms: f64,
    detail: Detail,
    raster: bool,
) {
    let Some(window) = web_sys::window() else {
        return;
    };
    let o = Object::new();
    let set = |k: &str, v: JsValue| {
        let _ = Reflect::set(&o, &k.into(), &v);
    };
    set("nodes", JsValue::from(m.layout.nodes.len() as u32));
    set("edges", JsValue::from(m.layout.edges.len() as u32));
    set("lifelines", JsValue::from(m.layout.lifelines.len() as u32));
    set("drawn_nodes", JsValue::from(drawn_nodes as u32));
    set("drawn_edges", JsValue::from(drawn_edges));
    set("frame_ms", JsValue::from(frame_ms));
    set("raster", JsValue::from(raster));
    set("scale", JsValue::from(view.scale));
    set(
        "detail",
        JsValue::from(format!("{detail:?}").to_lowercase()),
    );
    set(
        "path_nodes",
        JsValue::from(m.on_path.iter().filter(|&&b| b).count() as u32),
    );
    // Screen points (CSS px in the canvas) of the longest lifeline's versions, for click tests.
    let longest = m.layout.lifelines.iter().max_by_key(|l| l.nodes.len());
    let points = Array::new();
    for &i in longest.map_or(&[][..], |l| l.nodes.as_slice()) {
        if let Some(n) = m.layout.nodes.get(i as usize) {
            let (x, y) = view.to_screen(f64::from(n.x), f64::from(n.y));
            points.push(&Array::of2(&x.into(), &y.into()));
        }
    }
    set("lifeline_points", points.into());
    let _ = Reflect::set(&window, &"__memtrace_graph_stats".into(), &o);
}

/// Adds `causes` to the published stats: per cause op drawn, its number and screen point.
fn publish_causes(view: &Viewport, m: &GraphModel, causes: &[(u32, usize)]) {
    let Some(stats) = web_sys::window()
        .and_then(|w| Reflect::get(&w, &"__memtrace_graph_stats".into()).ok())
        .filter(JsValue::is_object)
    else {
        return;
    };
    let list = Array::new();
    for &(i, n) in causes {
        if let Some(node) = m.layout.nodes.get(i as usize) {
            let (x, y) = view.to_screen(f64::from(node.x), f64::from(node.y));
            list.push(&Array::of3(&JsValue::from(n as u32), &x.into(), &y.into()));
        }
    }
    let _ = Reflect::set(&stats, &"causes".into(), &list.into());
}
