//! The words of dates: month and weekday names, the units of time, and the words that place a
//! date relative to another ("yesterday", "last week", "3 days ago", "the week before").

/// Month names, 1-based.
pub const MONTHS: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];

/// Weekday names, 0 = Sunday.
const WEEKDAYS: [&str; 7] = [
    "sunday",
    "monday",
    "tuesday",
    "wednesday",
    "thursday",
    "friday",
    "saturday",
];

/// A unit of time a relative date counts in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    Day,
    Night,
    Week,
    Weekend,
    Month,
    Year,
    /// A named weekday, 0 = Sunday.
    Weekday(i64),
}

/// Unit words, singular and plural.
const UNITS: [(&str, &str, Unit); 6] = [
    ("day", "days", Unit::Day),
    ("night", "nights", Unit::Night),
    ("week", "weeks", Unit::Week),
    ("weekend", "weekends", Unit::Weekend),
    ("month", "months", Unit::Month),
    ("year", "years", Unit::Year),
];

/// Days named from the speaker's own: yesterday is one back.
const DEICTIC_DAYS: [(&str, i64); 4] = [
    ("yesterday", -1),
    ("today", 0),
    ("tonight", 0),
    ("tomorrow", 1),
];

/// Which way a word before a unit points ("last week", "this month", "next Friday").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Toward {
    Back,
    This,
    Next,
}

const TOWARD: [(&str, Toward); 5] = [
    ("last", Toward::Back),
    ("past", Toward::Back),
    ("previous", Toward::Back),
    ("this", Toward::This),
    ("next", Toward::Next),
];

/// Words that place a date from a stated one: "the week before 9 June", "the day after".
const RELATIONS: [(&str, i64); 2] = [("before", -1), ("after", 1)];

/// The word after a count that makes it a date back from now ("3 days ago").
pub const AGO: &str = "ago";

/// The word joining a day to its month or a weekend to its date ("27th of March", "the weekend
/// of 9 June").
pub const OF: &str = "of";

/// Articles that may open a relative date ("the week before", "a week ago").
const ARTICLES: [&str; 3] = ["the", "a", "an"];

/// The 1-based month a lowercase word names (full name or three-letter form; `may` only in
/// full).
#[must_use]
pub fn month_of(w: &str) -> Option<i64> {
    let i = MONTHS.iter().position(|m| {
        let m = m.to_ascii_lowercase();
        m == w || (w.len() >= 3 && m.len() > 3 && m.starts_with(w) && w.len() <= 4)
    })?;
    i64::try_from(i).ok().map(|i| i + 1)
}

/// The weekday a lowercase word names (`friday`, `fridays`), 0 = Sunday.
#[must_use]
pub fn weekday_of(w: &str) -> Option<i64> {
    let w = w
        .strip_suffix('s')
        .filter(|s| s.ends_with("day"))
        .unwrap_or(w);
    WEEKDAYS
        .iter()
        .position(|d| *d == w)
        .and_then(|i| i64::try_from(i).ok())
}

/// The unit a lowercase word names and whether it is plural (`days`, `Fridays`).
#[must_use]
pub fn unit_of(w: &str) -> Option<(Unit, bool)> {
    if let Some(d) = weekday_of(w) {
        return Some((Unit::Weekday(d), w.ends_with('s')));
    }
    UNITS.iter().find_map(|&(one, many, u)| {
        (w == one)
            .then_some((u, false))
            .or((w == many).then_some((u, true)))
    })
}

/// The offset in days of a day named from the speaker's own (`yesterday` −1).
#[must_use]
pub fn deictic_day(w: &str) -> Option<i64> {
    DEICTIC_DAYS.iter().find(|(d, _)| *d == w).map(|&(_, k)| k)
}

/// Which way a lowercase word before a unit points.
#[must_use]
pub fn toward(w: &str) -> Option<Toward> {
    TOWARD.iter().find(|(d, _)| *d == w).map(|&(_, t)| t)
}

/// The direction a word relates a date to a stated one (`before` −1, `after` +1).
#[must_use]
pub fn relation_of(w: &str) -> Option<i64> {
    RELATIONS.iter().find(|(d, _)| *d == w).map(|&(_, k)| k)
}

/// Whether a lowercase word is an article.
#[must_use]
pub fn is_article(w: &str) -> bool {
    ARTICLES.contains(&w)
}
