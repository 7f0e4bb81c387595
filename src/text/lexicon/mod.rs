//! The lexicon: every English word list the core reads text with, in one place, each with what
//! it is for. Attribution decides from structure and data flow; these words are how it reads
//! the text that flows (a negation that flips a fact, a date said relative to the day it was
//! said, a number spelled out) and the names it takes as hints. A trace in another language
//! reads through the same structure with these lists unmatched.
//!
//! | list | for | held-out change when removed (lab voices and libraries, no evidence ids) |
//! |---|---|---|
//! | [`stopwords`] | which words of a gold answer a text carries | see `docs/benchmarks.md` |
//! | [`negation`] | a copy that negates the gold fact does not hold it | see `docs/benchmarks.md` |
//! | [`numbers`] | a number changed ("three dogs" → "two") | see `docs/benchmarks.md` |
//! | [`dates`] | a date moved; relative dates resolved from the day they were said | see `docs/benchmarks.md` |
//! | [`people`] | one speaker's words told of another | see `docs/benchmarks.md` |
//! | [`edits`] | what a memory edit does (ADD / UPDATE / DELETE / NONE) | see `docs/benchmarks.md` |
//! | [`names`] | role hints from op names, message kinds, readable keys | see `docs/benchmarks.md` |

pub mod dates;
pub mod edits;
pub mod names;
pub mod negation;
pub mod numbers;
pub mod people;
pub mod stopwords;

pub use dates::{
    deictic_day, is_article, month_of, relation_of, toward, unit_of, weekday_of, Toward, Unit, AGO,
    MONTHS, OF,
};
pub use edits::{edit_verb, name_verb, says_verb, EditVerb};
pub use names::{
    names_messages, DATE_KEYS, DELETION_HINTS, EXTRACTION_HINTS, JUDGE_HINTS, RESPONSE_HINTS,
    RETRIEVAL_HINTS, TEXT_KEYS, UPDATE_HINTS,
};
pub use negation::{affirms, is_contracted_negation, is_negation, ANSWER_NO, NEGATION_REACH};
pub use numbers::{count_of, is_ordinal_suffix, is_vague, number_of, ordinal_digits};
pub use people::is_first_person;
pub use stopwords::{is_stop, StopList};
