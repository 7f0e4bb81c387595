//! The memtrace page. Everything browser-only is compiled for wasm32; natively this is empty.

#[cfg(target_arch = "wasm32")]
fn main() {
    console_error_panic_hook::set_once();
    yew::Renderer::<memtrace_web::App>::new().render();
}

#[cfg(not(target_arch = "wasm32"))]
fn main() {
    eprintln!("memtrace-web is the browser app: run scripts/serve and open http://127.0.0.1:8080");
}
