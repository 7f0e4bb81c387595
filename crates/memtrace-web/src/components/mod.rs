//! Small components, one per file: data and `on_*` callbacks come in as props.

pub mod drop_zone;
pub mod errors;
pub mod summary;
