//! The graph engine on hand-made graphs (native run; `algo_browser.rs` runs the same checks in
//! headless Chromium).

mod algo_checks;
mod common;

use algo_checks as checks;

algo_checks!(#[test]);
