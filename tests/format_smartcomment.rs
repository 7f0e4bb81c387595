//! smartcomment / MemTraceBench files: counts, byte-exact round trip, and located errors.

#[macro_use]
mod common {
    include!("common/smartcomment_cases.rs");
}

smartcomment_cases!(test);
