//! The bottom of the core: small helpers every layer may use and that use nothing of the crate.
//! - [`rng`]: the seeded generator (SplitMix64) of the benchmarks, jitter and shuffles;
//! - [`hash`]: FNV-1a, for short stable names and seeds;
//! - [`calendar`]: civil dates ↔ day numbers, and a [`calendar::Date`];
//! - [`json`]: small readers of JSON values;
//! - [`strings`]: filling computed string fields without needless allocation, matching
//!   without a lower-case copy (the load path; words and tokens are in [`crate::text`]).

pub mod calendar;
pub mod hash;
pub mod json;
pub(crate) mod json_read;
pub mod rng;
pub mod strings;
