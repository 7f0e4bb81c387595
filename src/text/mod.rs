//! Text helpers every layer shares, one of each: tokens ([`tokenize`]), stop words
//! ([`is_stop`], from the [`lexicon`]), a light stemmer ([`stem`]), markup escaping ([`escape_markup`]), the fences
//! that keep trace text from reading as instructions in a prompt ([`fence`]), a text cut to a
//! length ([`shorten`], [`fit`]) or put on one line ([`one_line`]), and the text of a JSON value
//! ([`text_of`]). [`diff`] holds the text diffs; [`lexicon`] every English word list the core reads text with.

pub mod diff;
mod escape;
mod fence;
pub mod lexicon;
mod line;
mod stem;
mod tokenize;
mod value;

pub use escape::{escape_markup, xml_escape};
pub use fence::{fence, Fence, DATA_CLOSE, DATA_OPEN};
pub use lexicon::{is_stop, StopList};
pub use line::{fit, one_line, shorten};
pub use stem::stem;
pub use tokenize::{tokenize, tokens, Word};
pub use value::text_of;
