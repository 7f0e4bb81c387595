//! IndexedDB persistence: the trace files the user loaded and the page settings, restored on the
//! next visit. Database `memtrace` v1 with two stores: `files` (key = file name, value =
//! `{name, bytes: Blob}`; earlier versions stored a `Uint8Array`, still read) and `settings` (key
//! `"settings"`, value = JSON text). API keys are never stored here.

use std::time::Duration;

use js_sys::{Array, ArrayBuffer, Object, Promise, Reflect, Uint8Array};
use wasm_bindgen::closure::Closure;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use web_sys::{Blob, IdbDatabase, IdbOpenDbRequest, IdbRequest, IdbTransactionMode};

const DB: &str = "memtrace";
const FILES: &str = "files";
const SETTINGS: &str = "settings";

/// A storage failure as a sentence for the page.
fn fail(what: &str, e: &JsValue) -> String {
    let detail = e
        .dyn_ref::<js_sys::Error>()
        .map(|e| String::from(e.message()))
        .or_else(|| e.as_string())
        .unwrap_or_else(|| format!("{e:?}"));
    format!("browser storage (IndexedDB) could not {what}: {detail}. The page still works; loaded traces will not survive a reload.")
}

/// A future of an IndexedDB request's result. The handlers are set at once (not on first
/// poll), so requests can be issued together and awaited later.
fn done(req: &IdbRequest) -> JsFuture {
    let r1 = req.clone();
    let r2 = req.clone();
    let p = Promise::new(&mut |resolve, reject| {
        let ok_req = r1.clone();
        let on_ok = Closure::once_into_js(move |_: web_sys::Event| {
            let v = ok_req.result().unwrap_or(JsValue::UNDEFINED);
            let _ = resolve.call1(&JsValue::NULL, &v);
        });
        let err_req = r2.clone();
        let on_err = Closure::once_into_js(move |_: web_sys::Event| {
            let e = err_req
                .error()
                .ok()
                .flatten()
                .map_or(JsValue::from_str("request failed"), JsValue::from);
            let _ = reject.call1(&JsValue::NULL, &e);
        });
        r1.set_onsuccess(Some(on_ok.unchecked_ref()));
        r1.set_onerror(Some(on_err.unchecked_ref()));
    });
    JsFuture::from(p)
}

async fn open() -> Result<IdbDatabase, String> {
    let factory = web_sys::window()
        .and_then(|w| w.indexed_db().ok().flatten())
        .ok_or_else(|| fail("open", &JsValue::from_str("IndexedDB is not available")))?;
    let req: IdbOpenDbRequest = factory.open_with_u32(DB, 1).map_err(|e| fail("open", &e))?;
    let upgrade_req = req.clone();
    let on_upgrade = Closure::once_into_js(move |_: web_sys::Event| {
        if let Ok(db) = upgrade_req
            .result()
            .and_then(wasm_bindgen::JsCast::dyn_into::<IdbDatabase>)
        {
            let names = db.object_store_names();
            for store in [FILES, SETTINGS] {
                if !names.contains(store) {
                    let _ = db.create_object_store(store);
                }
            }
        }
    });
    req.set_onupgradeneeded(Some(on_upgrade.unchecked_ref()));
    let db = done(&req).await.map_err(|e| fail("open", &e))?;
    db.dyn_into::<IdbDatabase>().map_err(|e| fail("open", &e))
}

fn store(
    db: &IdbDatabase,
    name: &str,
    mode: IdbTransactionMode,
) -> Result<web_sys::IdbObjectStore, String> {
    db.transaction_with_str_and_mode(name, mode)
        .and_then(|tx| tx.object_store(name))
        .map_err(|e| fail("start a transaction", &e))
}

/// Everything stored: the files (sorted by name) and the settings JSON, if any.
///
/// # Errors
/// A sentence saying storage is unavailable.
pub async fn restore() -> Result<(Vec<(String, Vec<u8>)>, Option<String>), String> {
    let db = open().await?;
    let files = store(&db, FILES, IdbTransactionMode::Readonly)?;
    let all = files.get_all().map_err(|e| fail("read files", &e))?;
    let all = done(&all).await.map_err(|e| fail("read files", &e))?;
    let mut out = Vec::new();
    for item in Array::from(&all).iter() {
        let name = Reflect::get(&item, &"name".into())
            .ok()
            .and_then(|n| n.as_string());
        let bytes = match Reflect::get(&item, &"bytes".into()) {
            Ok(b) => bytes_of(b).await,
            Err(_) => None,
        };
        if let (Some(name), Some(bytes)) = (name, bytes) {
            out.push((name, bytes));
        }
    }
    let settings = store(&db, SETTINGS, IdbTransactionMode::Readonly)?;
    let req = settings
        .get(&SETTINGS.into())
        .map_err(|e| fail("read settings", &e))?;
    let settings = done(&req)
        .await
        .map_err(|e| fail("read settings", &e))?
        .as_string();
    db.close();
    Ok((out, settings))
}

/// Bytes copied out of wasm memory per task when a file is saved.
const BLOB_PART: usize = 8 * 1024 * 1024;

/// `bytes` as a Blob, copied a part per task: storing a large file as one array held the page
/// for a quarter of a second (a copy, then the structured clone IndexedDB makes of it); a Blob is
/// stored by reference.
async fn blob_of(bytes: &[u8]) -> Result<Blob, JsValue> {
    let parts = Array::new();
    for part in bytes.chunks(BLOB_PART) {
        let arr = Uint8Array::from(part);
        let blob = Blob::new_with_u8_array_sequence(&Array::of1(&arr))?;
        parts.push(&blob);
        yew::platform::time::sleep(Duration::ZERO).await;
    }
    Blob::new_with_blob_sequence(&parts)
}

/// A stored file's bytes: a Blob (read back), or a `Uint8Array` as earlier versions stored them.
async fn bytes_of(v: JsValue) -> Option<Vec<u8>> {
    if let Some(blob) = v.dyn_ref::<Blob>() {
        let buf = JsFuture::from(blob.array_buffer()).await.ok()?;
        let buf = buf.dyn_into::<ArrayBuffer>().ok()?;
        return Some(Uint8Array::new(&buf).to_vec());
    }
    v.dyn_into::<Uint8Array>().ok().map(|a| a.to_vec())
}

/// Makes the stored files equal `files` (name, bytes): adds the new, drops the gone.
///
/// # Errors
/// A sentence saying what could not be written.
pub async fn sync_files(files: Vec<(String, std::sync::Arc<[u8]>)>) -> Result<(), String> {
    let db = open().await?;
    let keys = store(&db, FILES, IdbTransactionMode::Readonly)?
        .get_all_keys()
        .map_err(|e| fail("list files", &e))?;
    let keys = done(&keys).await.map_err(|e| fail("list files", &e))?;
    let stored: Vec<String> = Array::from(&keys)
        .iter()
        .filter_map(|k| k.as_string())
        .collect();
    // The new files' Blobs first: a transaction ends at the first await with nothing pending.
    let mut new = Vec::new();
    for (name, bytes) in files.iter().filter(|(n, _)| !stored.contains(n)) {
        new.push((name, blob_of(bytes).await.map_err(|e| fail("save", &e))?));
    }
    let s = store(&db, FILES, IdbTransactionMode::Readwrite)?;
    let mut pending = Vec::new();
    for k in stored
        .iter()
        .filter(|k| !files.iter().any(|(n, _)| n == *k))
    {
        let req = s.delete(&k.into()).map_err(|e| fail("delete", &e))?;
        pending.push(done(&req));
    }
    for (name, blob) in new {
        let v = Object::new();
        Reflect::set(&v, &"name".into(), &name.into()).map_err(|e| fail("save", &e))?;
        Reflect::set(&v, &"bytes".into(), &blob).map_err(|e| fail("save", &e))?;
        let req = s
            .put_with_key(&v, &name.into())
            .map_err(|e| fail("save", &e))?;
        pending.push(done(&req));
    }
    for p in pending {
        p.await.map_err(|e| fail("save", &e))?;
    }
    db.close();
    Ok(())
}

/// Stores the settings JSON.
///
/// # Errors
/// A sentence saying the settings could not be written.
pub async fn save_settings(json: String) -> Result<(), String> {
    let db = open().await?;
    let s = store(&db, SETTINGS, IdbTransactionMode::Readwrite)?;
    let req = s
        .put_with_key(&json.into(), &SETTINGS.into())
        .map_err(|e| fail("save settings", &e))?;
    done(&req).await.map_err(|e| fail("save settings", &e))?;
    db.close();
    Ok(())
}

/// Where the Optimize view's loop is kept: the `settings` store, under this key.
const LOOP: &str = "optimize-loop";

/// Stores the closed loop's JSON (`None` forgets it).
///
/// # Errors
/// A sentence saying the loop could not be written.
pub async fn save_loop(json: Option<String>) -> Result<(), String> {
    let db = open().await?;
    let s = store(&db, SETTINGS, IdbTransactionMode::Readwrite)?;
    let req = match json {
        Some(j) => s.put_with_key(&j.into(), &LOOP.into()),
        None => s.delete(&LOOP.into()),
    }
    .map_err(|e| fail("save the optimization loop", &e))?;
    done(&req)
        .await
        .map_err(|e| fail("save the optimization loop", &e))?;
    db.close();
    Ok(())
}

/// The closed loop's JSON, if one is stored.
///
/// # Errors
/// A sentence saying storage is unavailable.
pub async fn load_loop() -> Result<Option<String>, String> {
    let db = open().await?;
    let s = store(&db, SETTINGS, IdbTransactionMode::Readonly)?;
    let req = s
        .get(&LOOP.into())
        .map_err(|e| fail("read the optimization loop", &e))?;
    let v = done(&req)
        .await
        .map_err(|e| fail("read the optimization loop", &e))?
        .as_string();
    db.close();
    Ok(v)
}
