//! Text views of the graph for LLM agents, each under a hard character budget and paginated.
//!
//! - [`xml`]: an operation's subgraph as XML, with values;
//! - [`preview`]: a node's neighbourhood without values;
//! - [`value_window`]: a window of one value, or its regex hits with context;
//! - [`flat_log`]: all operations as flat text blocks in time order (the obstrace view).
//!
//! Budgets count chars (Unicode scalar values). Pages are numbered from 0; a page never exceeds
//! its budget, footer included.

pub mod flat_log;
pub mod preview;
pub mod value_window;
pub mod xml;

use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

use super::text::{byte_at_char, char_window};
use super::AlgoError;
use crate::text::shorten;

pub use flat_log::{flat_log_blocks, render_flat_log, FlatLog, LogHit};
pub use preview::render_preview;
pub use value_window::{render_value, render_value_hits};
pub use xml::render_op_xml;

/// The default budget per call: about what an agent tool result may hold (~128k chars).
pub const DEFAULT_BUDGET_CHARS: usize = 128_000;

/// Smallest budget honoured; smaller budgets are raised to it so every page can say something.
pub const MIN_BUDGET_CHARS: usize = 200;

/// Chars kept for the page footer when there is more than one page.
const FOOTER_CHARS: usize = 60;

/// One page of a rendering.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Page {
    pub text: String,
    /// This page's number, from 0.
    pub page: usize,
    /// Number of pages.
    pub pages: usize,
}

/// Packs `blocks` into pages: each page is `head`, whole blocks in order, `tail`, and, when there
/// are several pages, a footer saying which page this is. A block longer than a page is cut
/// into page-size pieces. `head` is shortened when it alone would take half the budget.
///
/// # Errors
/// [`AlgoError::PageOutOfRange`] when `page` is past the last page.
///
/// # Complexity
/// O(total length).
pub fn paginate(
    head: &str,
    blocks: &[String],
    tail: &str,
    budget_chars: usize,
    page: usize,
) -> Result<Page, AlgoError> {
    let budget = budget_chars.max(MIN_BUDGET_CHARS);
    let tail = char_window(tail, 0, budget / 4);
    let tail_len = tail.chars().count();
    // The head whole when it fits its room, else cut with `…` and a line break, in the room.
    let room = budget / 2 - tail_len;
    let head = if head.chars().count() <= room {
        head.to_owned()
    } else {
        shorten(head, room.saturating_sub(2)) + "\n"
    };
    let fixed = head.chars().count() + tail_len;
    let single = pack(blocks, budget - fixed);
    let (pieces, pages) = if single.len() <= 1 {
        (single, 1)
    } else {
        let many = pack(blocks, budget - fixed - FOOTER_CHARS);
        let n = many.len();
        (many, n)
    };
    if page >= pages {
        return Err(AlgoError::PageOutOfRange { page, pages });
    }
    let mut text = String::with_capacity(budget);
    text.push_str(&head);
    if let Some(body) = pieces.get(page) {
        text.push_str(body);
    }
    text.push_str(tail);
    if pages > 1 {
        let more = if page + 1 < pages {
            format!("; next: page {}", page + 1)
        } else {
            String::new()
        };
        let _ = write!(text, "\n[page {page} of 0..{}{more}]", pages - 1);
    }
    Ok(Page { text, page, pages })
}

/// Greedy packing of blocks into bodies of at most `room` chars, cutting oversize blocks.
fn pack(blocks: &[String], room: usize) -> Vec<String> {
    let room = room.max(1);
    let mut pages: Vec<String> = Vec::new();
    let mut cur = String::new();
    let mut cur_len = 0usize;
    for block in blocks {
        let len = block.chars().count();
        if cur_len + len <= room {
            cur.push_str(block);
            cur_len += len;
            continue;
        }
        if cur_len > 0 {
            pages.push(std::mem::take(&mut cur));
            cur_len = 0;
        }
        if len <= room {
            cur.push_str(block);
            cur_len = len;
            continue;
        }
        let mut rest = block.as_str();
        while !rest.is_empty() {
            let cut = byte_at_char(rest, room);
            let (piece, tail) = rest.split_at(cut);
            if tail.is_empty() {
                cur.push_str(piece);
                cur_len = piece.chars().count();
            } else {
                pages.push(piece.to_owned());
            }
            rest = tail;
        }
    }
    if cur_len > 0 || pages.is_empty() {
        pages.push(cur);
    }
    pages
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_respect_the_budget_and_keep_every_char() {
        let blocks: Vec<String> = (0..50)
            .map(|i| format!("block {i} {}\n", "x".repeat(i * 7)))
            .collect();
        let first = paginate("<h>\n", &blocks, "</h>", 300, 0).unwrap();
        assert!(first.pages > 1);
        let mut body = String::new();
        for p in 0..first.pages {
            let page = paginate("<h>\n", &blocks, "</h>", 300, p).unwrap();
            assert!(
                page.text.chars().count() <= 300,
                "page {p}: {}",
                page.text.chars().count()
            );
            assert!(page.text.starts_with("<h>\n"));
            let end = page.text.find("</h>").unwrap();
            body.push_str(&page.text[4..end]);
        }
        assert_eq!(body, blocks.concat());
        let err = paginate("<h>\n", &blocks, "</h>", 300, first.pages).unwrap_err();
        assert_eq!(
            err,
            AlgoError::PageOutOfRange {
                page: first.pages,
                pages: first.pages
            }
        );
    }

    #[test]
    fn one_page_has_no_footer() {
        let p = paginate("a", &["b".to_owned()], "c", 1000, 0).unwrap();
        assert_eq!((p.text.as_str(), p.pages), ("abc", 1));
    }
}
