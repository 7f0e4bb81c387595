//! What the module's browser tests share: the fixtures, and reading results back as JSON.
#![allow(
    dead_code,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::needless_pass_by_value
)]

use memtrace_wasm::Trace;
use serde_json::Value;
use wasm_bindgen::JsValue;

/// The LoCoMo smartcomment fixtures (as the core's browser tests embed them) and the demo.
pub const FIXTURE_1: &[u8] =
    include_bytes!("../../../../../tests/fixtures/smartcomment/locomo/locomo_locomo-1.json");
pub const FIXTURE_2: &[u8] =
    include_bytes!("../../../../../tests/fixtures/smartcomment/locomo/locomo_locomo-2.json");
pub const DEMO: &[u8] = include_bytes!("../../../../../www/demo.json");

/// Every fixture with its name.
pub fn fixtures() -> [(&'static str, &'static [u8]); 3] {
    [
        ("locomo-1", FIXTURE_1),
        ("locomo-2", FIXTURE_2),
        ("demo", DEMO),
    ]
}

/// A JS value as JSON.
pub fn json(v: JsValue) -> Value {
    serde_wasm_bindgen::from_value(v).expect("a JSON-shaped value")
}

/// Loads `bytes` with default options.
pub fn load(bytes: &[u8]) -> Trace {
    Trace::load(bytes, JsValue::UNDEFINED)
        .map_err(|e| js_sys::Error::from(e).message())
        .expect("the fixture loads")
}

/// A JS options object from JSON.
pub fn opts(v: &Value) -> JsValue {
    v.serialize(&serde_wasm_bindgen::Serializer::json_compatible())
        .expect("options serialize")
}

use serde::Serialize;

/// The thrown `MemtraceError` as `{name, message, kind, path, line, column, hint}`.
pub fn thrown(e: JsValue) -> Value {
    let get = |k: &str| js_sys::Reflect::get(&e, &JsValue::from_str(k)).unwrap();
    let field = |k: &str| {
        let v = get(k);
        if v.is_undefined() {
            Value::Null
        } else {
            serde_wasm_bindgen::from_value(v).unwrap()
        }
    };
    serde_json::json!({
        "name": field("name"),
        "message": field("message"),
        "kind": field("kind"),
        "path": field("path"),
        "line": field("line"),
        "column": field("column"),
        "hint": field("hint"),
    })
}

/// The scripted LLM server (`python3 tests/llm_server/server.py`; another URL is compiled in
/// with `MEMTRACE_TEST_LLM_URL`).
pub const BASE: &str = match option_env!("MEMTRACE_TEST_LLM_URL") {
    Some(url) => url,
    None => "http://127.0.0.1:8765",
};
