//! The graph canvas: one `<canvas>`, no DOM node per element. Wheel zooms about the cursor, drag
//! pans, click selects, double-click (or Enter) expands; arrows pan, +/- zoom, 0 fits, n/p step
//! through the nodes. Drawing lives in `draw.rs`; the view math in `crate::view::viewport`.

use std::cell::RefCell;
use std::rc::Rc;

use memtrace::layout::NodeRef;
use memtrace::Trace;
use web_sys::{HtmlCanvasElement, KeyboardEvent, MouseEvent, WheelEvent};
use yew::prelude::*;

use super::draw::{draw, Scene};
use super::Shared;
use crate::view::graph_model::{self, Hue};
use crate::view::viewport::Viewport;

#[derive(Properties, PartialEq)]
pub struct Props {
    pub trace: Shared<Trace>,
    pub case: Option<usize>,
    pub verdict_op: Option<String>,
    /// Node and op ids to highlight instead of the verdict's path (a transcript step's).
    #[prop_or_default]
    pub highlight: Vec<String>,
    pub expanded: Vec<NodeRef>,
    pub selected: Option<NodeRef>,
    pub fit_requests: u32,
    pub on_select: Callback<Option<NodeRef>>,
    pub on_expand: Callback<NodeRef>,
    /// Switches between the failure's slice and the whole trace.
    pub on_toggle_whole: Callback<()>,
    /// Back to the selected failure's story (`g`), when there is one.
    #[prop_or_default]
    pub on_story: Option<Callback<()>>,
    /// The ops of the failure's decisive set ("find all causes"), cause 1 first: shown (added
    /// to the view when outside it) and ringed in one colour each.
    #[prop_or_default]
    pub causes: Vec<String>,
}

/// Mouse-down position and whether the mouse moved enough to be a drag.
#[derive(Clone, Copy)]
struct Drag {
    x: f64,
    y: f64,
    moved: bool,
}

type Cell<T> = Rc<RefCell<T>>;

fn redraw(canvas: &yew::NodeRef, scene: &Cell<Scene>, view: &Cell<Viewport>) {
    if let Some(c) = canvas.cast::<HtmlCanvasElement>() {
        draw(&c, &mut scene.borrow_mut(), &mut view.borrow_mut());
    }
}

fn offset(e: &MouseEvent) -> (f64, f64) {
    (f64::from(e.offset_x()), f64::from(e.offset_y()))
}

#[function_component(Graph)]
pub fn graph(props: &Props) -> Html {
    let canvas = use_node_ref();
    let base = use_memo(
        (
            props.trace.clone(),
            props.case,
            props.verdict_op.clone(),
            props.expanded.clone(),
            props.causes.clone(),
        ),
        |(t, case, verdict, expanded, causes)| {
            let c = case.and_then(|i| t.0.cases.get(i));
            let mut grown = expanded.clone();
            grown.extend(
                causes
                    .iter()
                    .filter_map(|id| t.0.op_by_id(id).map(NodeRef::Op)),
            );
            graph_model::build(&t.0, c, verdict.as_deref(), &grown)
        },
    );
    let model = if props.highlight.is_empty() {
        base
    } else {
        Rc::new(graph_model::GraphModel {
            on_path: graph_model::marked(&props.trace.0, &base, &props.highlight),
            ..(*base).clone()
        })
    };
    let highlighted = if props.highlight.is_empty() {
        0
    } else {
        model.on_path.iter().filter(|&&b| b).count()
    };
    let view = use_mut_ref(Viewport::default);
    let drag = use_mut_ref(|| None::<Drag>);
    let scene = use_mut_ref(Scene::default);
    {
        let mut s = scene.borrow_mut();
        s.model = Some(model.clone());
        s.trace = Some(props.trace.0.clone());
        s.selected = props.selected;
        s.causes = props
            .causes
            .iter()
            .enumerate()
            .filter_map(|(i, id)| {
                let o = props.trace.0.op_by_id(id)?;
                Some((model.layout.index_of(NodeRef::Op(o))?, i + 1))
            })
            .collect();
    }
    let drawn_causes: Vec<&str> = props
        .causes
        .iter()
        .filter(|id| {
            props
                .trace
                .0
                .op_by_id(id)
                .and_then(|o| model.layout.index_of(NodeRef::Op(o)))
                .is_some()
        })
        .map(String::as_str)
        .collect();

    // Fit when asked (new case, `f`) or when the trace changes; then draw.
    {
        let (canvas, scene, view) = (canvas.clone(), scene.clone(), view.clone());
        use_effect_with(
            (props.fit_requests, props.trace.clone(), props.case),
            move |_| {
                if let Some(c) = canvas.cast::<HtmlCanvasElement>() {
                    let mut v = view.borrow_mut();
                    v.width = f64::from(c.client_width().max(1));
                    v.height = f64::from(c.client_height().max(1));
                    if let Some(b) = scene.borrow().model.as_ref().and_then(|m| m.bounds) {
                        v.fit(b, 40.0, 1.2);
                    }
                }
            },
        );
    }
    // Draw after every render (selection, expansion, theme).
    {
        let (canvas, scene, view) = (canvas.clone(), scene.clone(), view.clone());
        use_effect(move || {
            redraw(&canvas, &scene, &view);
        });
    }
    // Redraw on window resize and when the system theme flips.
    {
        let (canvas, scene, view) = (canvas.clone(), scene.clone(), view.clone());
        use_effect_with((), move |()| {
            let window = web_sys::window();
            let listener = window.map(|w| {
                gloo_events::EventListener::new(&w, "resize", move |_| {
                    redraw(&canvas, &scene, &view);
                })
            });
            move || drop(listener)
        });
    }

    let onwheel = {
        let (canvas, scene, view) = (canvas.clone(), scene.clone(), view.clone());
        Callback::from(move |e: WheelEvent| {
            e.prevent_default();
            let factor = (-e.delta_y() * 0.0015).exp();
            let (x, y) = offset(&e);
            view.borrow_mut().zoom_at(factor, x, y);
            redraw(&canvas, &scene, &view);
        })
    };
    let onmousedown = {
        let drag = drag.clone();
        Callback::from(move |e: MouseEvent| {
            let (x, y) = offset(&e);
            *drag.borrow_mut() = Some(Drag { x, y, moved: false });
        })
    };
    let onmousemove = {
        let (canvas, scene, view, drag) =
            (canvas.clone(), scene.clone(), view.clone(), drag.clone());
        Callback::from(move |e: MouseEvent| {
            let (x, y) = offset(&e);
            let mut d = drag.borrow_mut();
            if let Some(d) = d.as_mut() {
                let (dx, dy) = (x - d.x, y - d.y);
                if d.moved || dx.abs() + dy.abs() > 4.0 {
                    d.moved = true;
                    view.borrow_mut().pan(dx, dy);
                    d.x = x;
                    d.y = y;
                }
            } else {
                let hit = hit_test(&scene.borrow(), &view.borrow(), x, y);
                let mut s = scene.borrow_mut();
                if s.hover == hit {
                    return;
                }
                s.hover = hit;
            }
            drop(d);
            redraw(&canvas, &scene, &view);
        })
    };
    let onmouseup = {
        let (scene, view, drag) = (scene.clone(), view.clone(), drag.clone());
        let on_select = props.on_select.clone();
        Callback::from(move |e: MouseEvent| {
            let was = drag.borrow_mut().take();
            if let Some(Drag { moved: false, .. }) = was {
                let (x, y) = offset(&e);
                let s = scene.borrow();
                let hit = hit_test(&s, &view.borrow(), x, y);
                let node = hit.and_then(|i| {
                    s.model
                        .as_ref()
                        .and_then(|m| m.layout.nodes.get(i as usize))
                        .map(|n| n.node)
                });
                on_select.emit(node);
            }
        })
    };
    let onmouseleave = {
        let (canvas, scene, view, drag) =
            (canvas.clone(), scene.clone(), view.clone(), drag.clone());
        Callback::from(move |_: MouseEvent| {
            drag.borrow_mut().take();
            scene.borrow_mut().hover = None;
            redraw(&canvas, &scene, &view);
        })
    };
    let ondblclick = {
        let (scene, view) = (scene.clone(), view.clone());
        let on_expand = props.on_expand.clone();
        Callback::from(move |e: MouseEvent| {
            let (x, y) = offset(&e);
            let s = scene.borrow();
            let node = hit_test(&s, &view.borrow(), x, y).and_then(|i| {
                s.model
                    .as_ref()
                    .and_then(|m| m.layout.nodes.get(i as usize))
                    .map(|n| n.node)
            });
            if let Some(n) = node {
                on_expand.emit(n);
            }
        })
    };
    let onkeydown = {
        let (canvas, scene, view) = (canvas.clone(), scene.clone(), view.clone());
        let (on_select, on_expand) = (props.on_select.clone(), props.on_expand.clone());
        let selected = props.selected;
        Callback::from(move |e: KeyboardEvent| {
            let mut v = view.borrow_mut();
            let (cx, cy) = (v.width / 2.0, v.height / 2.0);
            match e.key().as_str() {
                "ArrowLeft" => v.pan(80.0, 0.0),
                "ArrowRight" => v.pan(-80.0, 0.0),
                "ArrowUp" => v.pan(0.0, 80.0),
                "ArrowDown" => v.pan(0.0, -80.0),
                "+" | "=" => v.zoom_at(1.25, cx, cy),
                "-" => v.zoom_at(0.8, cx, cy),
                "0" => {
                    if let Some(b) = scene.borrow().model.as_ref().and_then(|m| m.bounds) {
                        v.fit(b, 40.0, 1.2);
                    }
                }
                "Enter" => {
                    if let Some(n) = selected {
                        on_expand.emit(n);
                    }
                    return;
                }
                "n" | "p" => {
                    let s = scene.borrow();
                    let next = step(&s, selected, e.key() == "n");
                    if let Some((node, x, y)) = next {
                        v.center_on(x, y);
                        on_select.emit(Some(node));
                    }
                }
                _ => return,
            }
            e.prevent_default();
            drop(v);
            redraw(&canvas, &scene, &view);
        })
    };

    let legend = Hue::ALL.iter().map(|h| {
        html! { <span class="legend-item"><i class={classes!("swatch", format!("hue-{h:?}").to_lowercase())}></i>{ h.label() }</span> }
    });
    let shown = model.layout.nodes.len();
    let total = props.trace.0.vars.len() + props.trace.0.ops.len();
    html! {
        <section id="graph" class="graph-pane" aria-label="execution graph">
            <div class="graph-bar">
                <span class="graph-count" data-field="shown">
                    { format!("{shown} of {total} nodes") }
                    { if props.case.is_some() { " · backward slice of the prediction" } else { " · whole trace, by time" } }
                </span>
                <button class="button small" onclick={props.on_toggle_whole.reform(|_: MouseEvent| ())}
                        title="whole trace or the selected failure's slice (w)">
                    { if props.case.is_some() { "whole trace (w)" } else { "failure slice (w)" } }
                </button>
                if let Some(cb) = props.on_story.clone() {
                    <button class="button small" id="story-toggle" onclick={cb.reform(|_: MouseEvent| ())}
                            title="the failure's story: its decisive path as cards (g)">{"story (g)"}</button>
                }
                <span class="legend">
                    <span class="legend-item"><i class="shape-op"></i>{"operation"}</span>
                    <span class="legend-item"><i class="shape-var"></i>{"variable"}</span>
                    <span class="legend-item"><i class="shape-path"></i>{"information path"}</span>
                    if !drawn_causes.is_empty() {
                        <span class="legend-item"><i class="shape-cause"></i>{"cause N: decisive set"}</span>
                    }
                    { for legend }
                </span>
            </div>
            <canvas id="graph-canvas" ref={canvas} tabindex="0" data-highlighted={highlighted.to_string()}
                data-causes={drawn_causes.join(" ")}
                aria-label="graph canvas: arrows pan, + and - zoom, 0 fits, n and p step through nodes, Enter expands"
                {onwheel} {onmousedown} {onmousemove} {onmouseup} {onmouseleave} {ondblclick} {onkeydown}>
            </canvas>
        </section>
    }
}

/// The laid node under screen point (x, y), if any.
fn hit_test(scene: &Scene, view: &Viewport, x: f64, y: f64) -> Option<u32> {
    let m = scene.model.as_ref()?;
    let (wx, wy) = view.to_world(x, y);
    let radius = (12.0 / view.scale).max(12.0);
    m.grid.nearest(wx, wy, radius)
}

/// The next (or previous) node after `from` in reading order (column, then lane).
fn step(scene: &Scene, from: Option<NodeRef>, forward: bool) -> Option<(NodeRef, f64, f64)> {
    let m = scene.model.as_ref()?;
    let mut order: Vec<&memtrace::layout::LaidNode> = m.layout.nodes.iter().collect();
    order.sort_by_key(|n| (n.column, n.lane));
    let at = from.and_then(|f| order.iter().position(|n| n.node == f));
    let next = match (at, forward) {
        (None, _) => 0,
        (Some(i), true) => (i + 1).min(order.len().saturating_sub(1)),
        (Some(i), false) => i.saturating_sub(1),
    };
    order
        .get(next)
        .map(|n| (n.node, f64::from(n.x), f64::from(n.y)))
}
