//! The simulated provider follows its prompts, so an optimizer that rewrites them changes the
//! outcome: asking the extractor for dates (and the answerer for memory timestamps) lifts
//! temporal (category 2) LoCoMo accuracy. Reads `tests/data/locomo/` (fails when absent).
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests: a failed expectation should panic

mod common {
    include!("common/locomo.rs");
}

use memtrace_memsys::simulated::SimulatedLlm;
use memtrace_memsys::{self as memsys, Config, Prompts};

fn temporal_right(convs: &[memsys::Conversation], prompts: &Prompts) -> (usize, usize) {
    let (mut right, mut total) = (0, 0);
    for conv in convs {
        let qs: Vec<usize> = conv
            .questions
            .iter()
            .enumerate()
            .filter(|(_, q)| q.category == 2)
            .map(|(i, _)| i)
            .collect();
        let cfg = Config::default();
        let run = futures_executor::block_on(memsys::run(
            &SimulatedLlm,
            conv,
            prompts,
            &cfg,
            &[],
            &qs,
            &memsys::recorder_for(conv, &cfg, false),
        ))
        .expect("run");
        let (r, t) = run.accuracy(|_| true);
        right += r;
        total += t;
    }
    (right, total)
}

#[test]
fn date_prompts_lift_temporal_accuracy() {
    let dir = common::locomo_dir();
    let convs = common::conversations(&dir);
    let base = Prompts::default();
    let dates = Prompts {
        fact_extraction: format!(
            "{} Keep every date: resolve relative dates.",
            base.fact_extraction
        ),
        ..base.clone()
    };
    let both = Prompts {
        question_answering: format!(
            "Use each memory's timestamp for when-questions. {}",
            base.question_answering
        ),
        ..dates.clone()
    };
    let (b, total) = temporal_right(&convs, &base);
    let (d, _) = temporal_right(&convs, &dates);
    let (x, _) = temporal_right(&convs, &both);
    println!("temporal (category 2) right: default prompts {b}/{total}, extraction keeps dates {d}/{total}, plus timestamped answers {x}/{total}");
    assert!(
        d > b + total / 10,
        "keeping dates should lift temporal accuracy by 10 points: {b} -> {d} of {total}"
    );
    assert!(
        x > d,
        "timestamped answers should lift it further: {d} -> {x}"
    );
}
