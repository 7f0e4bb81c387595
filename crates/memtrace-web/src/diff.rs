//! Side-by-side diff of two variable versions (the `similar` crate), as rows the inspector
//! renders: each row has a left and a right cell; changed cells carry word-level emphasis.

use similar::{ChangeTag, DiffOp, TextDiff};

use memtrace::model::pyrepr;

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

/// A value as the inspector shows it: pretty JSON when it parses as a JSON (or Python-literal)
/// object or list, else the plain text.
pub fn pretty_value(raw: &str) -> String {
    match pyrepr::to_json(raw) {
        v @ (serde_json::Value::Object(_) | serde_json::Value::Array(_)) => {
            serde_json::to_string_pretty(&v).unwrap_or_else(|_| raw.to_owned())
        }
        _ => pyrepr::display(raw),
    }
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
    let d = TextDiff::from_words(&old, &new);
    let (mut l, mut r): (Segments, Segments) = (Vec::new(), Vec::new());
    let push = |side: &mut Segments, emph: bool, s: &str| match side.last_mut() {
        Some((e, text)) if *e == emph => text.push_str(s),
        _ => side.push((emph, s.to_owned())),
    };
    for c in d.iter_all_changes() {
        match c.tag() {
            ChangeTag::Equal => {
                push(&mut l, false, c.value());
                push(&mut r, false, c.value());
            }
            ChangeTag::Delete => push(&mut l, true, c.value()),
            ChangeTag::Insert => push(&mut r, true, c.value()),
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

    #[test]
    fn values_are_pretty_printed_when_structured() {
        assert_eq!(pretty_value("'hello'"), "hello");
        let p = pretty_value("{'memory': 'likes tea', 'score': 1.0}");
        assert!(p.contains("\n  \"memory\": \"likes tea\""), "{p}");
        assert_eq!(pretty_value("plain text"), "plain text");
    }
}
