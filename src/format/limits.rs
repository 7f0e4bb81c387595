//! Size limits checked before parsing, so a huge or hostile file is refused with a clear sentence
//! instead of exhausting memory or the stack.

use super::parts::Parts;
use super::size::MIB;
use super::FormatError;

pub use super::size::{limit_for, parse_size, size_text};
use crate::model::StrLen;

/// The largest input memtrace reads, carried by [`super::LoadOptions::limits`]. A user sets
/// only the file size (`--max-bytes`, the page's settings, `Trace.load(bytes, {maxBytes})`,
/// Python's `load(..., max_bytes=)`); each host picks its own default for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Largest file, in bytes, once decompressed (default [`MAX_FILE_BYTES`]).
    pub max_file_bytes: u64,
    /// Deepest nesting of JSON arrays and objects (default 128, serde_json's own limit).
    pub max_depth: usize,
    /// Longest single JSON string, in bytes as written in the file (default 64 MiB).
    pub max_string_bytes: u64,
}

/// 512 MiB: the core's default largest file, what the page and the JavaScript module keep (a
/// load takes about three times the file in wasm32's 4 GiB); the native hosts default to a
/// share of the machine's memory.
pub const MAX_FILE_BYTES: u64 = 512 * MIB;

impl Limits {
    /// The default limits with the largest file set to `max_file_bytes`.
    pub fn with_max_file_bytes(max_file_bytes: u64) -> Self {
        Limits {
            max_file_bytes,
            ..Limits::default()
        }
    }
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_file_bytes: MAX_FILE_BYTES,
            max_depth: 128,
            max_string_bytes: 64 * 1024 * 1024,
        }
    }
}

/// Refuses `bytes` if it is larger, nests deeper or holds a longer string than `limits` allows.
/// One pass over the bytes that jumps through strings to their closing quote; it does not
/// validate JSON (the parser does that next).
///
/// # Errors
/// [`FormatError::TooLarge`] for the file size; [`FormatError::Field`] (located at a line and
/// column) for too deep nesting or too long a string.
///
/// # Complexity
/// O(n) time, O(1) memory.
pub fn check(bytes: &[u8], limits: &Limits) -> Result<(), FormatError> {
    Scan::default().step(bytes, limits, usize::MAX).map(|_| ())
}

/// The sentence refusing a string longer than `limits` allows.
fn too_long(limits: &Limits) -> String {
    format!(
        "a string value is longer than the limit of {}; memtrace refuses single values this large. Trim the value (e.g. a base64 attachment) before tracing.",
        size_text(limits.max_string_bytes)
    )
}

/// Refuses `bytes` if the file is larger than `limits` allows.
///
/// # Errors
/// [`FormatError::TooLarge`].
pub fn check_size(bytes: &[u8], limits: &Limits) -> Result<(), FormatError> {
    check_length(u64::try_from(bytes.len()).unwrap_or(u64::MAX), limits)
}

/// Refuses a file of `size_bytes` larger than `limits` allows, before it is read (a host that
/// knows the size first: a dropped file, a download, a path).
///
/// # Errors
/// [`FormatError::TooLarge`].
pub fn check_length(size_bytes: u64, limits: &Limits) -> Result<(), FormatError> {
    if size_bytes > limits.max_file_bytes {
        return Err(FormatError::TooLarge {
            size_bytes,
            limit_bytes: limits.max_file_bytes,
        });
    }
    Ok(())
}

/// The pass of [`check`] in pieces, for a caller that must not block for long: each
/// [`Scan::step`] goes on from where the last one stopped.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Scan {
    depth: usize,
    at: usize,
}

impl Scan {
    /// Bytes checked so far.
    pub fn done(&self) -> usize {
        self.at
    }

    /// Checks about `budget` more bytes of `bytes` (the same bytes every step; a string is
    /// passed whole). True when all of `bytes` is checked.
    ///
    /// # Errors
    /// As [`check`].
    pub fn step(
        &mut self,
        bytes: &[u8],
        limits: &Limits,
        budget: usize,
    ) -> Result<bool, FormatError> {
        check_size(bytes, limits)?;
        // Where a refusal is: counted only then, so the pass itself skips through strings.
        let at = |i: usize| {
            let before = bytes.get(..i).unwrap_or(bytes);
            let line = memchr::memchr_iter(b'\n', before).count() + 1;
            let line_start = memchr::memrchr(b'\n', before).map_or(0, |p| p + 1);
            format!("line {line}, column {}", i - line_start + 1)
        };
        let stop = self.at.saturating_add(budget);
        let mut depth = self.depth;
        let mut i = self.at;
        while let Some(&b) = bytes.get(i).filter(|_| i < stop) {
            match b {
                b'"' => {
                    // The closing quote: the next `"` not escaped by a backslash (or the end).
                    let mut j = i + 1;
                    let end = loop {
                        let rest = bytes.get(j..).unwrap_or_default();
                        match memchr::memchr2(b'"', b'\\', rest) {
                            Some(k) if rest.get(k) == Some(&b'\\') => j += k + 2,
                            Some(k) => break j + k,
                            None => break bytes.len(),
                        }
                    };
                    // Content bytes (the opening quote is at `i`).
                    let len = u64::try_from(end.saturating_sub(i + 1)).unwrap_or(u64::MAX);
                    if len > limits.max_string_bytes {
                        return Err(FormatError::Field {
                            path: at(i),
                            message: too_long(limits),
                        });
                    }
                    i = end;
                }
                b'[' | b'{' => {
                    depth += 1;
                    if depth > limits.max_depth {
                        return Err(FormatError::Field {
                            path: at(i),
                            message: format!(
                                "the JSON nests deeper than {} levels of arrays/objects, memtrace's limit; a trace never needs this, so the file is probably not a trace or is malicious.",
                                limits.max_depth
                            ),
                        });
                    }
                }
                b']' | b'}' => depth = depth.saturating_sub(1),
                _ => {}
            }
            i += 1;
        }
        self.depth = depth;
        self.at = i.min(bytes.len());
        Ok(self.at >= bytes.len())
    }
}

/// True when [`check`] can be left out for a smartcomment file read in one go: its parser
/// refuses nesting past 128 levels itself (saying so clearly), and [`check_strings`] checks the
/// strings on the records it read. The pre-pass costs as much as a fifth of a load in the browser.
pub(crate) fn parser_enforces(limits: &Limits) -> bool {
    limits.max_depth >= 128
}

/// Refuses records holding a string longer than `limits` allows, naming the field by its JSON
/// path. Counts decoded bytes (an escape counts as the character it stands for).
///
/// # Errors
/// [`FormatError::Field`] for the first such field, in file order of the lists.
pub(crate) fn check_strings(p: &Parts, limits: &Limits) -> Result<(), FormatError> {
    let max = usize::try_from(limits.max_string_bytes).unwrap_or(usize::MAX);
    let refuse = |path: String| FormatError::Field {
        path,
        message: too_long(limits),
    };
    let (n, field) = p.meta.longest_string();
    if n > max {
        return Err(refuse(field.to_owned()));
    }
    macro_rules! list {
        ($records:expr, $name:literal) => {
            for (i, r) in $records.iter().enumerate() {
                let (n, field) = r.longest_string();
                if n > max {
                    return Err(refuse(format!(
                        concat!("data.", $name, "[{}].{}"),
                        i, field
                    )));
                }
            }
        };
    }
    list!(p.nodes, "nodes");
    list!(p.edges, "edges");
    list!(p.ops, "operations");
    list!(p.sessions, "sessions");
    list!(p.annotations.as_deref().unwrap_or_default(), "annotations");
    for (k, v) in &p.data_extra {
        if k.len().max(v.str_len()) > max {
            return Err(refuse(format!("data.{k}")));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn small() -> Limits {
        Limits {
            max_file_bytes: 100,
            max_depth: 3,
            max_string_bytes: 5,
        }
    }

    #[test]
    fn refuses_each_limit_with_a_located_sentence() {
        let l = small();
        assert!(check(br#"{"a":[1,{"b":"12345"}]}"#, &l).is_ok());
        let big = vec![b' '; 101];
        assert_eq!(
            check(&big, &l),
            Err(FormatError::TooLarge {
                size_bytes: 101,
                limit_bytes: 100
            })
        );
        let Err(FormatError::Field { path, message }) = check(b"{\n [[[1]]]}", &l) else {
            panic!("depth 4 must be refused");
        };
        assert_eq!(path, "line 2, column 4");
        assert!(message.contains("deeper than 3 levels"), "{message}");
        let Err(FormatError::Field { path, message }) = check(br#"{"a":"123456"}"#, &l) else {
            panic!("a 6-byte string must be refused");
        };
        assert_eq!(path, "line 1, column 6");
        assert!(message.contains("longer than the limit"), "{message}");
    }

    #[test]
    fn the_largest_file_is_a_load_option_under_which_the_file_is_refused() {
        let file: &[u8] = include_bytes!("../../tests/fixtures/smartcomment/mem0_commented.json");
        let size = file.len() as u64;
        let load = |max: u64| {
            crate::format::load(file, crate::format::LoadOptions::with_max_file_bytes(max))
        };
        assert_eq!(
            load(size - 1).map(|_| ()).unwrap_err(),
            FormatError::TooLarge {
                size_bytes: size,
                limit_bytes: size - 1
            }
        );
        assert!(load(size).is_ok());
        // Above the core's default too: nothing else caps it.
        assert!(load(MAX_FILE_BYTES * 4).is_ok());
    }

    #[test]
    fn brackets_and_escaped_quotes_inside_strings_do_not_count() {
        let l = Limits {
            max_string_bytes: 100,
            ..small()
        };
        assert!(check(br#"{"a":"[[[[[[\"[[[[{{{{"}"#, &l).is_ok());
    }

    #[test]
    fn a_smartcomment_load_names_the_field_of_a_too_long_string() {
        let l = Limits {
            max_string_bytes: 10, // defaults filled in ("in_memory", "variable") fit
            ..Limits::default()
        };
        let file = |value: &str, meta: &str| {
            format!(
                r#"{{"graph_id":"g","metadata":{{"k":"{meta}"}},"data":{{"nodes":[{{"filename":"f","lineno":1,"name":"x","value":"{value}"}}]}}}}"#
            )
        };
        let opts = crate::format::LoadOptions {
            limits: l,
            ..Default::default()
        };
        let load = |f: String| crate::format::load(f.as_bytes(), opts);
        assert!(load(file("1234567890", "a")).is_ok());
        for (f, want) in [
            (file("12345678901", "a"), "data.nodes[0].value"),
            (file("1", "12345678901"), "metadata"),
        ] {
            let Err(FormatError::Field { path, message }) = load(f) else {
                panic!("an 11-byte string must be refused");
            };
            assert_eq!(path, want);
            assert!(message.contains("longer than the limit"), "{message}");
        }
    }

    #[test]
    fn load_refuses_deep_nesting_clearly_with_either_check() {
        let deep = format!(
            r#"{{"graph_id":"g","data":{{"nodes":[]}},"x":{}1{}}}"#,
            r#"{"a":"#.repeat(200),
            "}".repeat(200)
        );
        let opts = crate::format::LoadOptions::default();
        let ours = crate::format::load(deep.as_bytes(), opts)
            .map(|_| ())
            .unwrap_err();
        assert!(
            ours.to_string().contains("deeper than 128 levels"),
            "{ours}"
        );
        // With our depth check raised, serde_json's own limit must say the same clearly.
        let loose = Limits {
            max_depth: 1000,
            ..Limits::default()
        };
        let forced = crate::format::LoadOptions {
            format: Some(crate::format::Format::Smartcomment),
            lenient: false,
            limits: loose,
            ..Default::default()
        };
        let theirs = crate::format::load(deep.as_bytes(), forced)
            .map(|_| ())
            .unwrap_err();
        assert!(
            theirs.to_string().contains("deeper than 128 levels"),
            "{theirs}"
        );
    }
}
