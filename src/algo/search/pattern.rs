//! Regex options and compilation (the `regex` crate: linear-time matching, no backtracking
//! blow-ups on user patterns).

use regex::{Regex, RegexBuilder};
use serde::{Deserialize, Serialize};

use crate::algo::AlgoError;

/// How to match and how much to return.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RegexOptions {
    /// Match without regard to case.
    #[serde(default)]
    pub case_insensitive: bool,
    /// Treat the pattern as plain text, not a regex.
    #[serde(default)]
    pub literal: bool,
    /// Stop after this many hits.
    pub max_hits: usize,
    /// Chars of context on each side of a hit.
    pub context_chars: usize,
}

impl Default for RegexOptions {
    fn default() -> Self {
        RegexOptions {
            case_insensitive: false,
            literal: false,
            max_hits: 100,
            context_chars: 80,
        }
    }
}

/// Largest compiled program accepted, so a hostile pattern cannot exhaust memory.
const SIZE_LIMIT: usize = 1 << 22;

/// Compiles `pattern` with `opts` (case, literal).
///
/// # Errors
/// [`AlgoError::Regex`] with the parser's message when the pattern is invalid or too large.
pub fn compile(pattern: &str, opts: &RegexOptions) -> Result<Regex, AlgoError> {
    let source = if opts.literal {
        regex::escape(pattern)
    } else {
        pattern.to_owned()
    };
    RegexBuilder::new(&source)
        .case_insensitive(opts.case_insensitive)
        .size_limit(SIZE_LIMIT)
        .build()
        .map_err(|e| AlgoError::Regex {
            pattern: pattern.to_owned(),
            message: e.to_string(),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literal_and_case_options_apply() {
        let lit = RegexOptions {
            literal: true,
            case_insensitive: true,
            ..RegexOptions::default()
        };
        let re = compile("a.B", &lit).unwrap();
        assert!(re.is_match("xA.bx"));
        assert!(!re.is_match("aXb"));
        let err = compile("(", &RegexOptions::default()).unwrap_err();
        assert!(matches!(err, AlgoError::Regex { .. }), "{err}");
    }
}
