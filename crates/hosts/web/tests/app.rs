#![cfg(target_arch = "wasm32")]
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests: a failed expectation should panic
//! The page in a real browser: the demo summary renders on first visit.

use std::time::Duration;

use wasm_bindgen::JsCast;
use wasm_bindgen_test::{wasm_bindgen_test, wasm_bindgen_test_configure};

wasm_bindgen_test_configure!(run_in_browser);

/// The demo trace, which the page fetches from its `<link id="memtrace-demo">`.
const DEMO: &[u8] = include_bytes!("../../../../www/demo.json");

/// A root for the page, with the demo's link (a blob: address of [`DEMO`]) in the document.
fn root() -> web_sys::Element {
    let doc = web_sys::window()
        .and_then(|w| w.document())
        .expect("document");
    if doc
        .query_selector("#memtrace-demo")
        .ok()
        .flatten()
        .is_none()
    {
        let parts = js_sys::Array::of1(&js_sys::Uint8Array::from(DEMO));
        let blob = web_sys::Blob::new_with_u8_array_sequence(&parts).expect("blob");
        let url = web_sys::Url::create_object_url_with_blob(&blob).expect("url");
        let link = doc.create_element("link").expect("link");
        link.set_id("memtrace-demo");
        link.set_attribute("href", &url).expect("href");
        doc.body()
            .expect("body")
            .append_child(&link)
            .expect("append");
    }
    let div = doc.create_element("div").expect("div");
    doc.body()
        .expect("body")
        .append_child(&div)
        .expect("append");
    div
}

async fn text_of(root: &web_sys::Element, selector: &str) -> Option<String> {
    for _ in 0..50 {
        yew::platform::time::sleep(Duration::from_millis(20)).await;
        if let Ok(Some(el)) = root.query_selector(selector) {
            return el.text_content();
        }
    }
    None
}

#[wasm_bindgen_test]
async fn first_visit_renders_the_demo_summary() {
    let root = root();
    yew::Renderer::<memtrace_web::App>::with_root(root.clone()).render();
    let name = text_of(&root, "#summary [data-field=\"name\"]")
        .await
        .expect("summary rendered");
    assert!(name.contains("demo"), "{name}");
    let ops: usize = text_of(&root, "#summary [data-field=\"operations\"]")
        .await
        .unwrap_or_default()
        .parse()
        .unwrap_or(0);
    let expected = memtrace::summarize(DEMO).expect("demo").operations;
    assert_eq!(ops, expected);
}

#[wasm_bindgen_test]
async fn first_visit_lists_the_demo_failures_and_draws_the_graph() {
    let root = root();
    yew::Renderer::<memtrace_web::App>::with_root(root.clone()).render();
    let want = memtrace::load(DEMO, memtrace::LoadOptions::default())
        .expect("demo")
        .trace
        .cases
        .len();
    let mut rows = 0;
    for _ in 0..100 {
        yew::platform::time::sleep(Duration::from_millis(20)).await;
        rows = root
            .query_selector_all("#failures .failure")
            .map_or(0, |l| l.length());
        if rows > 0 {
            break;
        }
    }
    assert_eq!(rows as usize, want);
    let selected = root
        .query_selector("#failures .failure.selected")
        .expect("query")
        .expect("first failure selected");
    assert_eq!(selected.get_attribute("data-case").as_deref(), Some("0"));
    // A selected failure opens as its story; its "Graph view" button shows the graph.
    let cards = text_of(&root, "#story .story-card").await;
    assert!(cards.is_some(), "the story of the first failure");
    let button: web_sys::HtmlElement = root
        .query_selector("#story .story-graph")
        .expect("query")
        .expect("graph view button")
        .dyn_into()
        .expect("a button");
    button.click();
    assert!(
        text_of(&root, "#graph-canvas").await.is_some(),
        "graph shown"
    );
    let mut drawn = 0.0;
    for _ in 0..50 {
        yew::platform::time::sleep(Duration::from_millis(20)).await;
        drawn = graph_nodes_drawn();
        if drawn > 0.0 {
            break;
        }
    }
    assert!(drawn > 0.0, "graph drew its nodes");
}

/// Nodes the graph's last frame drew (`window.__memtrace_graph_stats.nodes`).
fn graph_nodes_drawn() -> f64 {
    let stats = js_sys::Reflect::get(
        &web_sys::window().expect("window"),
        &"__memtrace_graph_stats".into(),
    )
    .expect("stats");
    js_sys::Reflect::get(&stats, &"nodes".into())
        .ok()
        .and_then(|v| v.as_f64())
        .unwrap_or(0.0)
}
