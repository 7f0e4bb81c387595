//! The clean reference run with the simulated provider answers most single-hop (category 4)
//! LoCoMo questions. Reads `tests/data/locomo/` at run time (fails when absent).
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests: a failed expectation should panic

mod common {
    include!("common/locomo.rs");
}

use memtrace_memsys::Config;

#[test]
fn clean_run_answers_most_single_hop_questions() {
    let dir = common::locomo_dir();
    let convs = common::conversations(&dir);
    assert_eq!(convs.len(), 7);
    let (mut right, mut total) = (0u32, 0u32);
    for conv in &convs {
        let run = common::clean_run(conv, &Config::default(), &common::single_hop(conv));
        let (r, t) = run.accuracy(|_| true);
        println!(
            "{}: {r}/{t} category-4 questions right ({} live units)",
            conv.user_id(),
            run.store.live()
        );
        right += u32::try_from(r).unwrap();
        total += u32::try_from(t).unwrap();
    }
    let share = f64::from(right) / f64::from(total);
    println!(
        "category-4 accuracy of the clean run (simulated provider): {right}/{total} = {:.1} %",
        share * 100.0
    );
    assert!(
        share >= 0.60,
        "category-4 accuracy {share:.3} is below 60 %"
    );
}
