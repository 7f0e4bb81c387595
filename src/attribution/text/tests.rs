use super::*;

#[test]
fn answer_words_count_only_as_close_together_as_the_evidence_has_them() {
    let key = Key::new(
        &["a ceramic owl and a silk scarf".into()],
        "What souvenirs did Ana bring back?",
        &["I brought back a ceramic owl and a silk scarf for my sister.".into()],
    );
    assert!(key.carry("Ana brought a ceramic owl and a silk scarf home.") > 0.9);
    let apart = "Ana keeps a ceramic pot on her desk. Her brother studies birds; the owl \
                 is his favourite. Their mother, who travelled through Portugal and Spain \
                 all of last spring with two old friends from school, likes silk.";
    // Three of the four words are in it, at most two of them close together.
    assert!(key.carry(apart) <= 0.5, "{}", key.carry(apart));
}

#[test]
fn a_text_about_something_else_does_not_hold_the_answer() {
    let key = Key::new(
        &["a Quechua weaving class".into()],
        "What class did Rosa take?",
        &["Last week I took a Quechua weaving class at the museum.".into()],
    );
    assert!(key.carry("Rosa took a Quechua weaving class.") > 0.9);
    // The answer's name, but not what was asked about (a class).
    let other = "Rosa's grandmother spoke Quechua at home.";
    assert!(key.carry(other) < 0.6, "{}", key.carry(other));
}

#[test]
fn a_name_alone_does_not_hold_a_longer_answer() {
    let key = Key::new(
        &["a Machu Picchu hiking tour".into()],
        "What did Rosa book for June?",
        &["I booked a Machu Picchu hiking tour for June!".into()],
    );
    assert!(key.carry("Rosa booked a Machu Picchu hiking tour.") > 0.9);
    let other = "Rosa dreams of seeing Machu Picchu one day.";
    assert!(key.carry(other) < 0.6, "{}", key.carry(other));
}

#[test]
fn terms_meet_at_their_stems() {
    let key = Key::new(
        &["They lost their jobs".into()],
        "What do they share?",
        &["I lost my job yesterday.".into()],
    );
    assert!(key.gold_is_literal);
    assert!(key.carry("Jon lost his job.") > 0.9);
    assert!(key.carry("Jon found a new hobby.") < 0.1);
}

#[test]
fn gold_words_are_counted_in_one_paragraph() {
    let key = Key::new(
        &["in awe of the universe".into()],
        "How did Melanie feel?",
        &[],
    );
    assert!(key.gold_carry("Melanie felt in awe of the universe.") > 0.99);
    let split = format!("{}\n\nawe-inspiring\n\nthe universe", "filler ".repeat(100));
    assert_eq!(key.gold_found(&split).len(), 1);
    assert!(key.gold_carry("nothing here") < 0.01);
}

#[test]
fn a_negated_question_is_answered_under_its_negation() {
    let key = Key::new(
        &["quit".into()],
        "What does Jon tell Gina he won't do?",
        &[],
    );
    assert!(key.gold_carry("Thanks! I won't quit, no matter what.") > 0.99);
    assert!(key.gold_carry("Jon will quit the studio.") < 0.01);
}

#[test]
fn a_long_gold_answer_has_a_lower_bar() {
    let gold = ["helping trans people accept themselves and supporting mental health".into()];
    let evidence = [
        "I want to keep helping trans people accept themselves and supporting their mental health."
            .into(),
    ];
    let long = Key::new(&gold, "What does she want?", &evidence);
    // Half its words, as close together as the evidence has them.
    assert!((long.bar(0.6) - 0.5).abs() < 1e-9);
    let short = Key::new(&["Sweden".into()], "Where?", &["From Sweden.".into()]);
    assert!(short.bar(0.6) > 0.59);
}

#[test]
fn carry_prefers_the_best_paragraph() {
    let key = Key::new(
        &["hot cocoa".into()],
        "What does Mom drink?",
        &["Mom drinks hot cocoa every evening.".into()],
    );
    assert!(key.carry("Mom drinks hot cocoa every evening.") > 0.9);
    assert!(key.carry("Mom drinks coffee every evening.") < 0.6);
    let long = format!(
        "{}\n\nMom drinks hot cocoa.",
        "Grandpa likes tea. ".repeat(50)
    );
    assert!(key.carry(&long) > 0.9);
}
