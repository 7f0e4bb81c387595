//! Reads dropped or picked files and turns each into an [`Action`].

use std::rc::Rc;

use crate::state::Action;

/// Reads every file; calls `emit` once per file, in order, as each finishes.
pub fn read_all(files: Vec<web_sys::File>, emit: impl Fn(Action) + 'static) {
    wasm_bindgen_futures::spawn_local(async move {
        for file in files {
            let file = gloo_file::File::from(file);
            let name = file.name();
            match gloo_file::futures::read_as_bytes(&file).await {
                Ok(bytes) => emit(Action::Load {
                    name,
                    bytes: Rc::from(bytes),
                }),
                Err(e) => emit(Action::ReadFailed {
                    name,
                    message: format!("the browser could not read the file: {e}"),
                }),
            }
        }
    });
}
