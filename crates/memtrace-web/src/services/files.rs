//! Reads dropped or picked files in chunks, reporting progress, and turns each into an [`Action`].
//! Parsing then runs on the main thread after the browser has painted the progress bar.

use std::rc::Rc;
use std::time::Duration;

use crate::state::{Action, Progress};

/// A browser size or length (never negative) as a whole number.
#[allow(clippy::cast_sign_loss)] // clamped to >= 0 first
pub fn whole(x: f64) -> u64 {
    x.max(0.0).round() as u64
}

/// Bytes read per step; the progress bar moves between steps.
const CHUNK_BYTES: f64 = 4.0 * 1024.0 * 1024.0;

async fn read(
    file: &web_sys::File,
    progress: &mut Progress,
    emit: &impl Fn(Action),
) -> Result<Vec<u8>, String> {
    let size = file.size();
    let mut out = Vec::with_capacity(usize::try_from(whole(size)).unwrap_or(0));
    let mut start = 0.0;
    while start < size {
        let end = (start + CHUNK_BYTES).min(size);
        let part = file
            .slice_with_f64_and_f64(start, end)
            .map_err(|e| format!("the browser could not read the file: {e:?}"))?;
        let bytes = gloo_file::futures::read_as_bytes(&gloo_file::Blob::from(part))
            .await
            .map_err(|e| format!("the browser could not read the file: {e}"))?;
        out.extend_from_slice(&bytes);
        progress.bytes_done += whole(end - start);
        emit(Action::Progress(Some(*progress)));
        start = end;
    }
    Ok(out)
}

/// Reads every file; emits progress, then one `Load` or `ReadFailed` per file, in order.
pub fn read_all(files: Vec<web_sys::File>, emit: impl Fn(Action) + 'static) {
    wasm_bindgen_futures::spawn_local(async move {
        let mut progress = Progress {
            files_total: files.len(),
            bytes_total: files.iter().map(|f| whole(f.size())).sum(),
            ..Progress::default()
        };
        emit(Action::Progress(Some(progress)));
        for file in files {
            let name = file.name();
            // Refuse a file over the limit before reading a byte of it: the tab would run out of memory.
            let size_bytes = whole(file.size());
            let limit_bytes = memtrace::format::limits::MAX_FILE_BYTES;
            if size_bytes > limit_bytes {
                let message = memtrace::format::FormatError::TooLarge {
                    size_bytes,
                    limit_bytes,
                }
                .to_string();
                emit(Action::ReadFailed { name, message });
                progress.files_done += 1;
                emit(Action::Progress(Some(progress)));
                continue;
            }
            let read_stage = crate::timing::stage("read file");
            let bytes = read(&file, &mut progress, &emit).await;
            drop(read_stage);
            match bytes {
                Ok(bytes) => {
                    // Let the page paint "parsing …" before the synchronous parse.
                    yew::platform::time::sleep(Duration::from_millis(16)).await;
                    let _t = crate::timing::stage("load action (reduce, render)");
                    emit(Action::Load {
                        name,
                        bytes: Rc::from(bytes),
                    });
                }
                Err(message) => emit(Action::ReadFailed { name, message }),
            }
            progress.files_done += 1;
            emit(Action::Progress(Some(progress)));
        }
        emit(Action::Progress(None));
    });
}

/// Offers `bytes` as a download named `name`.
///
/// # Errors
/// A sentence when the browser refuses to make the file.
pub fn download(name: &str, bytes: &[u8], mime: &str) -> Result<(), String> {
    use wasm_bindgen::JsCast;
    let fail = |e: wasm_bindgen::JsValue| format!("could not save {name}: {e:?}");
    let parts = js_sys::Array::of1(&js_sys::Uint8Array::from(bytes));
    let opts = web_sys::BlobPropertyBag::new();
    opts.set_type(mime);
    let blob =
        web_sys::Blob::new_with_u8_array_sequence_and_options(&parts, &opts).map_err(fail)?;
    let url = web_sys::Url::create_object_url_with_blob(&blob).map_err(fail)?;
    let doc = web_sys::window()
        .and_then(|w| w.document())
        .ok_or_else(|| fail("no document".into()))?;
    let a = doc
        .create_element("a")
        .map_err(fail)?
        .dyn_into::<web_sys::HtmlAnchorElement>()
        .map_err(|e| fail(e.into()))?;
    a.set_href(&url);
    a.set_download(name);
    a.click();
    web_sys::Url::revoke_object_url(&url).map_err(fail)?;
    Ok(())
}
