//! Text diffs (the `similar` crate), one home for every view of a change: a unified line diff
//! ([`unified`], what a prompt version stores), the word changes ([`word_changes`], the
//! report's inline diff), word runs ([`word_diff`], a story card) and side-by-side rows
//! ([`side_by_side`], the page's inspector and prompt versions).

use serde::Serialize;
use similar::{DiffOp, TextDiff};

pub use similar::ChangeTag;

use super::one_line;

/// A unified line diff of two values of `name`, headed `name (old)` and `name (new)`.
pub fn unified(name: &str, old: &str, new: &str) -> String {
    TextDiff::from_lines(old, new)
        .unified_diff()
        .header(&format!("{name} (old)"), &format!("{name} (new)"))
        .to_string()
}

/// The word diff of `old` and `new`: every word and space, tagged kept, removed or added.
pub fn word_changes<'a>(old: &'a str, new: &'a str) -> Vec<(ChangeTag, &'a str)> {
    TextDiff::from_words(old, new)
        .iter_all_changes()
        .map(|c| (c.tag(), c.value()))
        .collect()
}

/// A word-diff piece between a version and the one before it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DiffPart {
    /// `same`, `removed` or `added`.
    pub change: &'static str,
    pub text: String,
}

/// Word diff of two versions: removed and added runs (a change across several words reads as
/// one run each), unchanged runs longer than 12 words shortened to their ends.
pub fn word_diff(old: &str, new: &str) -> Vec<DiffPart> {
    let (old, new) = (one_line(old), one_line(new));
    let mut out: Vec<DiffPart> = Vec::new();
    let (mut removed, mut added) = (String::new(), String::new());
    // Spaces met inside a change, owed to each side's next word.
    let (mut gap_r, mut gap_a) = (String::new(), String::new());
    let flush = |out: &mut Vec<DiffPart>, removed: &mut String, added: &mut String| {
        for (change, text) in [("removed", removed), ("added", added)] {
            if !text.is_empty() {
                out.push(DiffPart {
                    change,
                    text: std::mem::take(text),
                });
            }
        }
    };
    for (tag, v) in word_changes(&old, &new) {
        let in_change = !(removed.is_empty() && added.is_empty());
        match tag {
            ChangeTag::Delete => {
                if !removed.is_empty() {
                    removed.push_str(&gap_r);
                }
                gap_r.clear();
                removed.push_str(v);
            }
            ChangeTag::Insert => {
                if !added.is_empty() {
                    added.push_str(&gap_a);
                }
                gap_a.clear();
                added.push_str(v);
            }
            ChangeTag::Equal if v.trim().is_empty() && in_change => {
                gap_r.push_str(v);
                gap_a.push_str(v);
            }
            ChangeTag::Equal => {
                flush(&mut out, &mut removed, &mut added);
                let text = format!("{}{v}", std::mem::take(&mut gap_a));
                gap_r.clear();
                match out.last_mut() {
                    Some(p) if p.change == "same" => p.text.push_str(&text),
                    _ => out.push(DiffPart {
                        change: "same",
                        text,
                    }),
                }
            }
        }
    }
    flush(&mut out, &mut removed, &mut added);
    if !gap_a.is_empty() {
        out.push(DiffPart {
            change: "same",
            text: gap_a,
        });
    }
    for p in out.iter_mut().filter(|p| p.change == "same") {
        let words: Vec<&str> = p.text.split_whitespace().collect();
        if words.len() > 12 {
            let (lead, tail) = (p.text.starts_with(' '), p.text.ends_with(' '));
            p.text = format!(
                "{}{} … {}{}",
                if lead { " " } else { "" },
                words[..4].join(" "),
                words[words.len() - 4..].join(" "),
                if tail { " " } else { "" }
            );
        }
    }
    out
}

/// What happened to a row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RowKind {
    Same,
    Changed,
    Removed,
    Added,
}

/// One side of a row: line number (1-based) and segments `(emphasized, text)`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cell {
    pub line: usize,
    pub segments: Vec<(bool, String)>,
}

impl Cell {
    /// The cell's text without emphasis.
    pub fn text(&self) -> String {
        self.segments.iter().map(|(_, s)| s.as_str()).collect()
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    pub kind: RowKind,
    pub left: Option<Cell>,
    pub right: Option<Cell>,
}

/// Diffs `old` against `new` line by line; replaced lines are paired and diffed word by word.
///
/// # Complexity
/// Myers' diff: O((n + m) · d) for d differences.
pub fn side_by_side(old: &str, new: &str) -> Vec<Row> {
    let diff = TextDiff::from_lines(old, new);
    let old_lines: Vec<&str> = diff.old_slices().to_vec();
    let new_lines: Vec<&str> = diff.new_slices().to_vec();
    let plain = |lines: &[&str], i: usize| Cell {
        line: i + 1,
        segments: vec![(false, trim_eol(lines.get(i).copied().unwrap_or("")))],
    };
    let mut rows = Vec::new();
    for op in diff.ops() {
        match *op {
            DiffOp::Equal {
                old_index,
                new_index,
                len,
            } => {
                for k in 0..len {
                    rows.push(Row {
                        kind: RowKind::Same,
                        left: Some(plain(&old_lines, old_index + k)),
                        right: Some(plain(&new_lines, new_index + k)),
                    });
                }
            }
            DiffOp::Delete {
                old_index, old_len, ..
            } => {
                for k in 0..old_len {
                    rows.push(Row {
                        kind: RowKind::Removed,
                        left: Some(plain(&old_lines, old_index + k)),
                        right: None,
                    });
                }
            }
            DiffOp::Insert {
                new_index, new_len, ..
            } => {
                for k in 0..new_len {
                    rows.push(Row {
                        kind: RowKind::Added,
                        left: None,
                        right: Some(plain(&new_lines, new_index + k)),
                    });
                }
            }
            DiffOp::Replace {
                old_index,
                old_len,
                new_index,
                new_len,
            } => {
                for k in 0..old_len.max(new_len) {
                    let (l, r) = (
                        (k < old_len).then(|| old_lines[old_index + k]),
                        (k < new_len).then(|| new_lines[new_index + k]),
                    );
                    rows.push(match (l, r) {
                        (Some(l), Some(r)) => {
                            let (ls, rs) = words(l, r);
                            Row {
                                kind: RowKind::Changed,
                                left: Some(Cell {
                                    line: old_index + k + 1,
                                    segments: ls,
                                }),
                                right: Some(Cell {
                                    line: new_index + k + 1,
                                    segments: rs,
                                }),
                            }
                        }
                        (Some(_), None) => Row {
                            kind: RowKind::Removed,
                            left: Some(plain(&old_lines, old_index + k)),
                            right: None,
                        },
                        _ => Row {
                            kind: RowKind::Added,
                            left: None,
                            right: Some(plain(&new_lines, new_index + k)),
                        },
                    });
                }
            }
        }
    }
    rows
}

fn trim_eol(s: &str) -> String {
    s.trim_end_matches(['\n', '\r']).to_owned()
}

/// Word-level segments of a changed line pair: (left, right).
type Segments = Vec<(bool, String)>;
fn words(old: &str, new: &str) -> (Segments, Segments) {
    let (old, new) = (trim_eol(old), trim_eol(new));
    let (mut l, mut r): (Segments, Segments) = (Vec::new(), Vec::new());
    let push = |side: &mut Segments, emph: bool, s: &str| match side.last_mut() {
        Some((e, text)) if *e == emph => text.push_str(s),
        _ => side.push((emph, s.to_owned())),
    };
    for (tag, v) in word_changes(&old, &new) {
        match tag {
            ChangeTag::Equal => {
                push(&mut l, false, v);
                push(&mut r, false, v);
            }
            ChangeTag::Delete => push(&mut l, true, v),
            ChangeTag::Insert => push(&mut r, true, v),
        }
    }
    (l, r)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_text_gives_only_same_rows() {
        let rows = side_by_side("a\nb\n", "a\nb\n");
        assert_eq!(rows.len(), 2);
        assert!(rows.iter().all(|r| r.kind == RowKind::Same));
    }

    #[test]
    fn changed_line_is_paired_with_word_emphasis() {
        let rows = side_by_side(
            "keep\nCaroline went to the group on 7 May\n",
            "keep\nCaroline went to the group\nnew line\n",
        );
        let kinds: Vec<RowKind> = rows.iter().map(|r| r.kind).collect();
        assert_eq!(
            kinds,
            vec![RowKind::Same, RowKind::Changed, RowKind::Added],
            "{rows:?}"
        );
        let left = rows[1].left.as_ref().unwrap();
        assert_eq!(left.text(), "Caroline went to the group on 7 May");
        let emphasized: String = left
            .segments
            .iter()
            .filter(|(e, _)| *e)
            .map(|(_, s)| s.as_str())
            .collect();
        assert!(emphasized.contains("7 May"), "{:?}", left.segments);
        assert!(!emphasized.contains("Caroline"));
        assert_eq!(rows[2].right.as_ref().unwrap().line, 3);
    }

    #[test]
    fn removed_lines_have_no_right_cell() {
        let rows = side_by_side("a\nb\nc\n", "a\nc\n");
        let removed: Vec<&Row> = rows.iter().filter(|r| r.kind == RowKind::Removed).collect();
        assert_eq!(removed.len(), 1);
        assert!(removed[0].right.is_none());
        assert_eq!(removed[0].left.as_ref().unwrap().text(), "b");
    }
}
