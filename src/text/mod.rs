//! Text helpers every layer shares, one of each: tokens ([`tokenize`]), stop words
//! ([`is_stop`]), a light stemmer ([`stem`]), markup escaping ([`escape_markup`]) and the fences
//! that keep trace text from reading as instructions in a prompt ([`fence`]).

mod escape;
mod fence;
mod stem;
mod stopwords;
mod tokenize;

pub use escape::{escape_markup, xml_escape};
pub use fence::{fence, Fence, DATA_CLOSE, DATA_OPEN};
pub use stem::stem;
pub use stopwords::{is_stop, StopList};
pub use tokenize::{tokenize, tokens, Word};
