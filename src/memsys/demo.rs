//! The demo: a household robot that must remember the family's preferences.
pub const PLACEHOLDER: u8 = 0;
