//! Reads dropped or picked files in chunks, reporting progress, and opens each in steps of a few
//! milliseconds on the main thread ([`session::Opening`]: decompress, sort, parse, infer roles),
//! yielding to the browser between them, so the page keeps painting (and the progress bar
//! moving) while a large file loads; then each is one [`Action::Opened`]. No domain work here:
//! this is the I/O loop.

use std::sync::Arc;
use std::time::Duration;

use memtrace::format::LoadOptions;
use memtrace::session;

use crate::state::{Action, Progress};

thread_local! {
    /// Bumped by [`cancel`]: a load started under an older value stops at its next step.
    static CANCELS: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// Stops the loads under way (the progress bar's Cancel): each stops at its next step (a read
/// chunk or a few milliseconds of parsing) and its files are not loaded.
pub fn cancel() {
    CANCELS.with(|c| c.set(c.get() + 1));
}

fn cancels() -> u64 {
    CANCELS.with(std::cell::Cell::get)
}

/// The cancel count a load starting now compares against ([`cancel`] stops it).
pub fn started() -> u64 {
    cancels()
}

/// The load was cancelled.
pub struct Cancelled;

/// The longest stretch of opening a file between two yields to the browser, in ms.
const SLICE_MS: f64 = 25.0;

/// True when the benchmark asks for the one-go parse, its baseline
/// (`window.__memtrace_load_whole = true`).
fn whole_wanted() -> bool {
    web_sys::window()
        .and_then(|w| js_sys::Reflect::get(&w, &"__memtrace_load_whole".into()).ok())
        .is_some_and(|v| v.is_truthy())
}

fn now() -> f64 {
    web_sys::window()
        .and_then(|w| w.performance())
        .map_or(0.0, |p| p.now())
}

/// Lets the browser run what waits (input, paint) and resumes as soon as it has: with
/// `scheduler.yield()` where the browser has it, else a zero timeout (which nested timeouts
/// stretch to 4 ms each). The page's own timers wait until the load is done: it has none that
/// matter meanwhile (the JavaScript module's `loadAsync`, in someone else's page, yields with a
/// timeout instead).
pub(crate) async fn next_task() {
    use wasm_bindgen::JsCast;
    let yielded = js_sys::Reflect::get(&js_sys::global(), &"scheduler".into())
        .ok()
        .filter(wasm_bindgen::JsValue::is_object)
        .and_then(|s| {
            let f = js_sys::Reflect::get(&s, &"yield".into()).ok()?;
            let f: &js_sys::Function = f.dyn_ref()?;
            f.call0(&s).ok()?.dyn_into::<js_sys::Promise>().ok()
        });
    match yielded {
        Some(p) => drop(wasm_bindgen_futures::JsFuture::from(p).await),
        None => yew::platform::time::sleep(Duration::ZERO).await,
    }
}

/// Runs `opening` ([`session::Opening`]: decompress, sort, parse, infer roles) in slices of
/// about [`SLICE_MS`], yielding to the browser between them; the progress bar shows how far it
/// is. The file read to its end.
async fn open_in_steps(
    mut opening: session::Opening,
    progress: &mut Progress,
    emit: &impl Fn(Action),
    started: u64,
) -> Result<session::Ready, Cancelled> {
    let mut stage = (
        opening.stage(),
        crate::timing::stage(stage_name(opening.stage())),
    );
    loop {
        if cancels() != started {
            return Err(Cancelled);
        }
        let (start, mut last) = (now(), 0.0);
        // The next step is taken to last as long as the one before.
        while now() - start + last < SLICE_MS {
            let at = now();
            if let Some(ready) = opening.step() {
                return Ok(ready);
            }
            last = now() - at;
            if opening.stage() != stage.0 {
                drop(stage);
                stage = (
                    opening.stage(),
                    crate::timing::stage(stage_name(opening.stage())),
                );
                // A stage's single step can be long: each starts a task of its own.
                break;
            }
        }
        shown(progress, opening.progress(), emit);
        next_task().await;
    }
}

/// Shows `fraction` (0..=1) of the file as loaded, when the percent changes.
fn shown(progress: &mut Progress, fraction: f64, emit: &impl Fn(Action)) {
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)] // 0..=100
    let percent = Some((fraction * 100.0).clamp(0.0, 100.0) as u8);
    if progress.parsed != percent {
        progress.parsed = percent;
        emit(Action::Progress(Some(progress.clone())));
    }
}

fn stage_name(s: &str) -> &'static str {
    match s {
        "parse" => "steps: parse",
        "validate" => "steps: validate",
        "index" => "steps: index",
        "failures" => "steps: failures",
        "roles" => "steps: roles",
        _ => "steps: other",
    }
}

/// A browser size or length (never negative) as a whole number.
#[allow(clippy::cast_sign_loss)] // clamped to >= 0 first
pub fn whole(x: f64) -> u64 {
    x.max(0.0).round() as u64
}

/// Bytes read per step; the progress bar moves between steps.
const CHUNK_BYTES: f64 = 16.0 * 1024.0 * 1024.0;

async fn read(
    file: &web_sys::File,
    progress: &mut Progress,
    emit: &impl Fn(Action),
    started: u64,
) -> Result<Result<Arc<[u8]>, String>, Cancelled> {
    let size = file.size();
    // The file's buffer, made once at its size: each chunk is copied straight into it (one copy
    // out of the browser, none more; no copy into an `Rc` afterwards).
    let len = usize::try_from(whole(size)).unwrap_or(0);
    let mut out = zeroed(len);
    let Some(buf_out) = Arc::get_mut(&mut out) else {
        return Ok(Err("the page could not make the file's buffer".into()));
    };
    let (mut start, mut at) = (0.0, 0);
    while start < size {
        if cancels() != started {
            return Err(Cancelled);
        }
        let end = (start + CHUNK_BYTES).min(size);
        let part = match file.slice_with_f64_and_f64(start, end) {
            Ok(p) => p,
            Err(e) => return Ok(Err(format!("the browser could not read the file: {e:?}"))),
        };
        let buf = match gloo_file::futures::read_as_array_buffer(&gloo_file::Blob::from(part)).await
        {
            Ok(b) => js_sys::Uint8Array::new(&b),
            Err(e) => return Ok(Err(format!("the browser could not read the file: {e}"))),
        };
        let n = buf.length() as usize;
        let Some(into) = buf_out.get_mut(at..at + n) else {
            return Ok(Err("the file grew while it was read; drop it again".into()));
        };
        buf.copy_to(into);
        at += n;
        progress.bytes_done += whole(end - start);
        emit(Action::Progress(Some(progress.clone())));
        start = end;
    }
    if at != len {
        return Ok(Err(
            "the file changed while it was read; drop it again".into()
        ));
    }
    Ok(Ok(out))
}

/// `len` zero bytes. A large allocation is fresh memory from the browser, already zero: no pass
/// over 100 MB before the first byte is read (filling them is a task of 70–120 ms).
/// (`Arc::new_zeroed_slice` is Rust 1.92; the page is built with the toolchain `scripts/test` uses.)
#[allow(unsafe_code, clippy::incompatible_msrv)]
fn zeroed(len: usize) -> Arc<[u8]> {
    let z = Arc::<[u8]>::new_zeroed_slice(len);
    // SAFETY: every byte is initialized (to zero), and any byte is a valid `u8`.
    unsafe { z.assume_init() }
}

/// Reads every file; emits progress, then one `Load` or `ReadFailed` per file, in order. After
/// [`cancel`], the file under way and those after it are not loaded (one `ReadFailed` says so).
/// Several files are read before any is shown, so that they open together
/// ([`session::arrange`]: OTLP log records joined to the traces file whose spans they name,
/// traces before the annotation files dropped with them).
pub fn read_all(files: Vec<web_sys::File>, options: LoadOptions, emit: impl Fn(Action) + 'static) {
    let started = cancels();
    wasm_bindgen_futures::spawn_local(async move {
        let mut progress = Progress {
            files_total: files.len(),
            bytes_total: files.iter().map(|f| whole(f.size())).sum(),
            ..Progress::default()
        };
        emit(Action::Progress(Some(progress.clone())));
        let count = files.len();
        let mut read_ok = Vec::new();
        for (k, file) in files.into_iter().enumerate() {
            let name = file.name();
            progress.file.clone_from(&name);
            match read_checked(&file, &options, &mut progress, &emit, started).await {
                Err(Cancelled) => {
                    emit(cancelled(count - k - 1, name));
                    emit(Action::Progress(None));
                    return;
                }
                Ok(Err(message)) => emit(Action::ReadFailed { name, message }),
                Ok(Ok(bytes)) => read_ok.push((name, bytes)),
            }
        }
        show_each(read_ok, options, &mut progress, &emit, started).await;
    });
}

/// Shows files already in memory (restored from storage, the demo) as a drop shows them once
/// read: traces parsed in steps, traces before their annotation files, with progress; a
/// [`cancel`] stops it.
pub async fn show_all(
    files: Vec<(String, Arc<[u8]>)>,
    options: LoadOptions,
    emit: &impl Fn(Action),
) {
    let bytes: u64 = files.iter().map(|f| f.1.len() as u64).sum();
    let mut progress = Progress {
        files_total: files.len(),
        bytes_total: bytes,
        bytes_done: bytes,
        ..Progress::default()
    };
    emit(Action::Progress(Some(progress.clone())));
    show_each(files, options, &mut progress, emit, cancels()).await;
}

/// Shows each file ([`show`]) as they open together ([`session::arrange`]: OTLP logs joined to
/// their traces, traces before the annotation files that merge into them); then the progress
/// bar goes.
async fn show_each(
    files: Vec<(String, Arc<[u8]>)>,
    options: LoadOptions,
    progress: &mut Progress,
    emit: &impl Fn(Action),
    started: u64,
) {
    let files = session::arrange(files);
    let count = files.len();
    for (k, (name, bytes)) in files.into_iter().enumerate() {
        progress.file.clone_from(&name);
        progress.parsed = None;
        if show(name.clone(), bytes, options, progress, emit, started)
            .await
            .is_err()
        {
            emit(cancelled(count - k - 1, name));
            break;
        }
        progress.files_done += 1;
        emit(Action::Progress(Some(progress.clone())));
    }
    emit(Action::Progress(None));
}

/// What a cancel says of file `name` and the `more` after it.
fn cancelled(more: usize, name: String) -> Action {
    let message = match more {
        0 => "loading cancelled; the file was not loaded".to_owned(),
        more => format!("loading cancelled; this file and {more} after it were not loaded"),
    };
    Action::ReadFailed { name, message }
}

/// Reads one file's bytes, refusing one over the largest file (the page's setting) before
/// reading a byte of it (the tab would run out of memory).
async fn read_checked(
    file: &web_sys::File,
    options: &LoadOptions,
    progress: &mut Progress,
    emit: &impl Fn(Action),
    started: u64,
) -> Result<Result<Arc<[u8]>, String>, Cancelled> {
    if let Err(e) = memtrace::format::limits::check_length(whole(file.size()), &options.limits) {
        return Ok(Err(crate::state::error_text(&e)));
    }
    let _t = crate::timing::stage("read file");
    read(file, progress, emit, started).await
}

/// Shows a file's bytes (read from a file or fetched from an address): opened in steps by
/// [`session::Opening`] (a compressed file decompressed and named without its ending; a trace
/// parsed and its roles inferred), then given to the reducer, which adds it to the project.
///
/// # Errors
/// [`Cancelled`] when [`cancel`] stopped the load (nothing was shown).
pub async fn show(
    name: String,
    bytes: Arc<[u8]>,
    options: LoadOptions,
    progress: &mut Progress,
    emit: &impl Fn(Action),
    started: u64,
) -> Result<(), Cancelled> {
    let opening = if whole_wanted() {
        session::Opening::whole(&name, bytes)
    } else {
        session::Opening::new(&name, bytes, options)
    };
    let ready = open_in_steps(opening, progress, emit, started).await?;
    // The first render of the file is a task of its own.
    next_task().await;
    if cancels() != started {
        return Err(Cancelled);
    }
    let _t = crate::timing::stage("show (reduce, render)");
    emit(Action::Opened(Box::new(ready)));
    Ok(())
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
