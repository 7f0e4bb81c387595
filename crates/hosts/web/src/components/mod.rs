//! Small components, one per file: data and `on_*` callbacks come in as props.

pub mod attribution;
pub mod causes;
pub mod compare;
pub mod compare_traces;
pub mod draw;
pub mod drop_zone;
pub mod errors;
pub mod fail_rules;
pub mod failures;
pub mod graph;
pub mod help;
pub mod inspector;
pub mod llm_run;
pub mod optimize;
pub mod overview;
pub mod progress;
pub mod provider;
pub mod report;
pub mod roles;
pub mod search;
pub mod story;
pub mod summary;
pub mod transcript;

use std::sync::Arc;

/// Shared data passed as a prop; equal when it is the same allocation (cheap to compare,
/// unlike the deep `PartialEq` of a whole trace).
#[derive(Debug)]
pub struct Shared<T>(pub Arc<T>);

impl<T> Clone for Shared<T> {
    fn clone(&self) -> Self {
        Shared(Arc::clone(&self.0))
    }
}

impl<T> PartialEq for Shared<T> {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}
