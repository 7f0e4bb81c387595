#![cfg(target_arch = "wasm32")]
//! IndexedDB in headless Chromium: a saved file (a Blob of several parts) comes back byte for
//! byte, a file stored as a `Uint8Array` by an earlier version is still read, and a file no
//! longer loaded is dropped.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail by panicking

use std::sync::Arc;

use memtrace_web::services::storage::{restore, sync_files};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;
use wasm_bindgen_test::{wasm_bindgen_test, wasm_bindgen_test_configure};

wasm_bindgen_test_configure!(run_in_browser);

#[wasm_bindgen(inline_js = "
export function put_array(name, bytes) {
  return new Promise((ok, fail) => {
    const open = indexedDB.open('memtrace', 1);
    open.onupgradeneeded = () => {
      for (const s of ['files', 'settings']) {
        if (!open.result.objectStoreNames.contains(s)) open.result.createObjectStore(s);
      }
    };
    open.onerror = () => fail(open.error);
    open.onsuccess = () => {
      const db = open.result;
      const tx = db.transaction('files', 'readwrite');
      tx.objectStore('files').put({ name, bytes }, name);
      tx.oncomplete = () => { db.close(); ok(); };
      tx.onerror = () => fail(tx.error);
    };
  });
}")]
extern "C" {
    /// Stores `bytes` as a `Uint8Array` record, as versions before the Blob did.
    fn put_array(name: &str, bytes: &[u8]) -> js_sys::Promise;
}

/// `n` bytes that differ from part to part and within one.
fn pattern(n: usize) -> Vec<u8> {
    (0..n).map(|i| (i * 31 + i / 4096) as u8).collect()
}

#[wasm_bindgen_test]
async fn saved_files_come_back_whole_and_old_records_are_read() {
    // Over two Blob parts (8 MiB each), and a small one.
    let big = pattern(17 * 1024 * 1024 + 5);
    let small = b"{\"graph_id\": \"g\"}".to_vec();
    let files: Vec<(String, Arc<[u8]>)> = vec![
        ("big.json".into(), Arc::from(big.clone())),
        ("small.json".into(), Arc::from(small.clone())),
    ];
    sync_files(files).await.unwrap();
    let old = pattern(1000);
    JsFuture::from(put_array("old.json", &old)).await.unwrap();

    let (stored, _) = restore().await.unwrap();
    let names: Vec<&str> = stored.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["big.json", "old.json", "small.json"]);
    assert!(
        stored[0].1 == big,
        "the large file differs after a round trip"
    );
    assert_eq!(stored[1].1, old);
    assert_eq!(stored[2].1, small);

    // Only the small file is loaded now: the others are dropped.
    sync_files(vec![("small.json".into(), Arc::from(small.clone()))])
        .await
        .unwrap();
    let (stored, _) = restore().await.unwrap();
    assert_eq!(stored, vec![("small.json".to_owned(), small)]);
}
