//! "Holds the answer" means the discriminating part: a text that keeps most of the gold
//! answer's words but changes its date, number, name or negation does not carry the key; one
//! that keeps that part in other words does. Each case below pairs a holder with a look-alike.

use memtrace::attribution::text::Key;
use memtrace_memsys::text::Date;

/// The bar infoflow uses by default.
const BAR: f64 = 0.6;

fn key(gold: &str, question: &str, evidence: &str) -> Key {
    Key::new(&[gold.into()], question, &[evidence.into()])
}

fn holds(k: &Key, text: &str) -> bool {
    k.carry(text) >= k.bar(BAR)
}

fn day(year: i64, month: i64, day: i64) -> Date {
    Date { year, month, day }
}

#[test]
fn a_changed_date_does_not_hold_the_answer() {
    let k = key(
        "27 March 2023",
        "When did Caroline move to Denver?",
        "I moved to Denver on 27 March 2023.",
    );
    assert!(holds(&k, "Caroline moved to Denver on 27 March 2023."));
    // A week earlier, a year later: two of the three words kept, the date lost.
    assert!(!holds(&k, "Caroline moved to Denver on 20 March 2023."));
    assert!(!holds(&k, "Caroline moved to Denver on 27 March 2024."));
    let why = k
        .parts
        .check("Caroline moved to Denver on 20 March 2023.", None);
    assert_eq!(
        why.map_err(|c| c.to_string()),
        Err("changed the date 27 March 2023 → 20 March 2023".to_owned())
    );
}

#[test]
fn a_reformatted_date_holds_the_answer() {
    let k = key(
        "27 March 2023",
        "When did Caroline move to Denver?",
        "I moved to Denver on 27 March 2023.",
    );
    for same in [
        "Caroline moved to Denver on 2023-03-27.",
        "Caroline moved to Denver on March 27, 2023.",
        "Caroline moved to Denver on the 27th of March, 2023.",
    ] {
        assert!(holds(&k, same), "{same}");
    }
    assert!(!holds(&k, "Caroline moved to Denver on March 28, 2023."));
}

#[test]
fn a_relative_date_holds_the_answer_only_from_the_right_day() {
    let k = key(
        "27 March 2023",
        "When did Caroline move to Denver?",
        "I moved to Denver yesterday.",
    );
    let text = "Caroline moved to Denver yesterday.";
    assert!(k.carry_at(text, Some(day(2023, 3, 28))) >= BAR);
    assert!(k.carry_at(text, Some(day(2023, 4, 4))) < BAR);
    // "last week" is vaguer than the day asked for.
    assert!(k.carry_at("Caroline moved to Denver last week.", Some(day(2023, 4, 3))) < BAR);
    // A gold answer that is itself relative to a date meets the same week said from that date.
    let week = key(
        "The week before 9 June 2023",
        "When did Jon go to the fair?",
        "I went to the fair last week.",
    );
    let fair = "Jon went to the fair last week.";
    assert!(week.carry_at(fair, Some(day(2023, 6, 9))) >= BAR);
    assert!(week.carry_at(fair, Some(day(2023, 6, 16))) < BAR);
}

#[test]
fn a_changed_number_does_not_hold_the_answer() {
    let k = key(
        "adopted 3 dogs from the shelter",
        "What did Caroline do last month?",
        "I adopted 3 dogs from the shelter!",
    );
    assert!(holds(&k, "Caroline adopted 3 dogs from the shelter."));
    assert!(!holds(&k, "Caroline adopted 2 dogs from the shelter."));
    let why = k
        .parts
        .check("Caroline adopted 2 dogs from the shelter.", None);
    assert_eq!(
        why.map_err(|c| c.to_string()),
        Err("changed the number 3 → 2".to_owned())
    );
}

#[test]
fn a_number_word_holds_the_answer() {
    let k = key(
        "adopted 3 dogs from the shelter",
        "What did Caroline do last month?",
        "I adopted 3 dogs from the shelter!",
    );
    assert!(holds(&k, "Caroline adopted three dogs from the shelter."));
    assert!(!holds(&k, "Caroline adopted two dogs from the shelter."));
    let years = key(
        "twenty-five years",
        "How long has Jon danced?",
        "For 25 years now.",
    );
    assert!(holds(&years, "Jon has danced for twenty five years."));
    assert!(!holds(&years, "Jon has danced for twenty years."));
}

#[test]
fn a_swapped_name_does_not_hold_the_answer() {
    let k = key(
        "a camping trip to Banff",
        "Where did Caroline travel with her family?",
        "Last summer we went on a camping trip to Banff.",
    );
    assert!(holds(&k, "Caroline went on a camping trip to Banff."));
    assert!(!holds(&k, "Caroline plans a camping trip to Yosemite."));
    let why = k
        .parts
        .check("Caroline plans a camping trip to Yosemite.", None);
    assert_eq!(
        why.map_err(|c| c.to_string()),
        Err("changed the name Banff → Yosemite".to_owned())
    );
}

#[test]
fn an_added_negation_does_not_hold_the_answer() {
    let k = key(
        "finished the marathon",
        "What did Melanie do in October?",
        "I finished the marathon!",
    );
    assert!(holds(&k, "Melanie finished the marathon."));
    assert!(!holds(&k, "Melanie did not finish the marathon."));
    assert!(!holds(&k, "Melanie didn't finish the marathon."));
    // A negation elsewhere, or one that affirms, changes nothing.
    assert!(holds(
        &k,
        "Melanie never trained much, but finished the marathon."
    ));
    assert!(holds(&k, "Don't forget: Melanie finished the marathon."));
}

#[test]
fn a_dropped_negation_does_not_hold_the_answer() {
    let k = key(
        "not defined by his weight",
        "What does Evan tell Sam about his worth?",
        "Your worth is not defined by your weight.",
    );
    assert!(holds(
        &k,
        "Evan told Sam his worth is not defined by his weight."
    ));
    assert!(!holds(
        &k,
        "Evan told Sam his worth is defined by his weight."
    ));
}

#[test]
fn a_paraphrase_keeping_the_discriminating_part_holds_the_answer() {
    let k = key(
        "went to Paris",
        "What did Caroline do in May?",
        "I went to Paris with my mom.",
    );
    assert!(holds(&k, "Caroline visited Paris."));
    assert!(!holds(&k, "Caroline visited Rome."));
    let date = key(
        "moved to Denver on 27 March 2023",
        "What happened to Caroline in spring?",
        "I moved to Denver on 27 March 2023.",
    );
    assert!(holds(&date, "On 2023-03-27 Caroline relocated to Denver."));
}

#[test]
fn a_date_answer_holds_where_it_speaks_of_the_event_as_the_evidence_did() {
    // The question's verb is not the evidence's ("meet" / "met"): a copy keeping the
    // evidence's words and the date holds the answer.
    let k = key(
        "February 24, 2023",
        "When did Maria meet Jean?",
        "Session date: 25 February, 2023. Maria: While volunteering yesterday, I met this amazing \
         woman, Jean.",
    );
    assert!(holds(
        &k,
        "While volunteering on 24 February 2023, Maria met this wonderful woman, Jean."
    ));
    assert!(!holds(
        &k,
        "While volunteering on 3 March 2023, Maria met this wonderful woman, Jean."
    ));
    // Evidence that says the question's event words: a copy must say them too.
    let k = key(
        "February 24, 2023",
        "When did Maria meet Jean?",
        "Maria: I meet Jean at the shelter on 24 February 2023.",
    );
    assert!(!holds(&k, "Maria baked a cake on 24 February 2023."));
}
