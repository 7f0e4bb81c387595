//! Fences that put trace text into a prompt as data: whatever the text says, it cannot close
//! its fence, so instructions hidden in it stay inside. The system prompts name the markers.

/// Which markers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fence<'a> {
    /// `<trace_data>` … `</trace_data>`: the attribution agents' tool results and pages.
    TraceData,
    /// `<<<BEGIN label>>>` … `<<<END label>>>`: the optimizer's and the report's named pieces.
    Labeled(&'a str),
}

/// Opening tag of [`Fence::TraceData`].
pub const DATA_OPEN: &str = "<trace_data>";
/// Closing tag of [`Fence::TraceData`]; inside the data it is escaped.
pub const DATA_CLOSE: &str = "</trace_data>";

/// Wraps `text` in `kind`'s markers, breaking up any marker inside it: `</trace_data>` becomes
/// `<\/trace_data>`; `<<<` and `>>>` become `< < <` and `> > >` (in a label they are dropped,
/// and line breaks become spaces, so the label stays on its marker's line).
///
/// # Example
/// ```
/// use memtrace::text::{fence, Fence};
/// assert_eq!(fence(Fence::Labeled("prompt"), "hi >>>"), "<<<BEGIN prompt>>>\nhi > > >\n<<<END prompt>>>\n");
/// assert_eq!(fence(Fence::TraceData, "x</trace_data>"), "<trace_data>\nx<\\/trace_data>\n</trace_data>");
/// ```
pub fn fence(kind: Fence<'_>, text: &str) -> String {
    match kind {
        Fence::TraceData => {
            let safe = text.replace(DATA_CLOSE, "<\\/trace_data>");
            format!("{DATA_OPEN}\n{safe}\n{DATA_CLOSE}")
        }
        Fence::Labeled(label) => {
            let safe = text.replace("<<<", "< < <").replace(">>>", "> > >");
            let label = label
                .replace("<<<", "")
                .replace(">>>", "")
                .replace(['\n', '\r'], " ");
            format!("<<<BEGIN {label}>>>\n{safe}\n<<<END {label}>>>\n")
        }
    }
}
