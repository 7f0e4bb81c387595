//! The demo: a household robot that must remember a family's preferences. A short
//! conversation written by us (no dataset text), run through the reference memory system with
//! the simulated provider, with one injected and verified failure of each error type.
//! `memtrace demo --out www/demo.json` regenerates the page's first-visit demo from it.

use super::bench::{build_file, plan_fault};
use super::locomo::{Conversation, Question, Session, Turn};
use super::{recorder_for, run, Config, MemsysError, Prompts};
use memtrace::model::ErrorType;
use memtrace::provider::Llm;
use memtrace::util::rng::SplitMix64;

/// Where the demo trace says it came from.
pub const SOURCE: &str = "memtrace demo: a household robot's memory, written by the memtrace authors; every LLM call is the SIMULATED provider (rule-based stand-in, not an LLM)";

const SESSIONS: &[(&str, &[(&str, &str)])] = &[
    (
        "7:30 pm on 3 March, 2025",
        &[
            (
                "Maya",
                "Hi Robo! Let me tell you about the family so you can help out at home.",
            ),
            (
                "Robo",
                "Hello Maya! I am ready to learn what everyone likes.",
            ),
            ("Maya", "Mom drinks hot cocoa every evening before bed."),
            ("Robo", "Noted. What does Dad like for breakfast?"),
            ("Maya", "Dad eats oatmeal with blueberries every morning."),
            ("Robo", "Great. Does anyone have allergies?"),
            (
                "Maya",
                "Grandpa Joe is allergic to peanuts, so never buy peanut butter.",
            ),
            ("Robo", "Understood, no peanuts in the house."),
            (
                "Maya",
                "My little brother Leo practices the trumpet after school.",
            ),
            (
                "Robo",
                "I will keep the living room quiet for his practice.",
            ),
        ],
    ),
    (
        "9:15 am on 10 March, 2025",
        &[
            ("Maya", "Our cat Pixel only eats salmon flavored cat food."),
            ("Robo", "Salmon food for Pixel, noted."),
            ("Maya", "Mom waters the orchids on Sunday mornings."),
            ("Robo", "Should I remind her about the orchids?"),
            (
                "Maya",
                "Yes please. Dad parks the blue hatchback in the garage.",
            ),
            (
                "Robo",
                "Okay, I will keep the garage clear for the blue hatchback.",
            ),
            (
                "Maya",
                "Actually Mom switched to chamomile tea every evening before bed.",
            ),
            (
                "Robo",
                "Thanks, I will brew chamomile tea for her in the evening.",
            ),
        ],
    ),
    (
        "6:00 pm on 17 March, 2025",
        &[
            ("Maya", "Leo no longer practices the trumpet after school."),
            ("Robo", "Understood, no more trumpet practice."),
            ("Maya", "Leo started piano lessons on Friday afternoons."),
            ("Robo", "I will remind Leo about piano on Fridays."),
            (
                "Maya",
                "Grandma Rosa loves mystery novels by Agatha Christie.",
            ),
            (
                "Robo",
                "I will look for Agatha Christie novels at the library.",
            ),
            (
                "Maya",
                "Dad goes jogging in the park every Saturday morning.",
            ),
            (
                "Robo",
                "I will have water ready when Dad comes back from the park.",
            ),
            (
                "Maya",
                "Mom wants the windows opened every morning for fresh air.",
            ),
            ("Robo", "Windows open every morning, noted."),
        ],
    ),
];

const QUESTIONS: &[(&str, &str, &[&str])] = &[
    (
        "What does Mom drink every evening before bed?",
        "chamomile tea",
        &["D2:7"],
    ),
    (
        "What does Dad eat every morning?",
        "oatmeal with blueberries",
        &["D1:5"],
    ),
    ("What is Grandpa Joe allergic to?", "peanuts", &["D1:7"]),
    (
        "What food does the cat Pixel eat?",
        "salmon flavored cat food",
        &["D2:1"],
    ),
    (
        "When does Mom water the orchids?",
        "Sunday mornings",
        &["D2:3"],
    ),
    (
        "Which car does Dad park in the garage?",
        "the blue hatchback",
        &["D2:5"],
    ),
    ("Which lessons did Leo start?", "piano lessons", &["D3:3"]),
    (
        "What books does Grandma Rosa love?",
        "mystery novels by Agatha Christie",
        &["D3:5"],
    ),
    ("Where does Dad go jogging?", "in the park", &["D3:7"]),
    (
        "What does Mom want opened every morning?",
        "the windows",
        &["D3:9"],
    ),
];

/// The demo conversation (user `household-robot`, speakers Maya and Robo).
pub fn conversation() -> Conversation {
    let sessions = SESSIONS
        .iter()
        .enumerate()
        .map(|(si, (date_time, turns))| Session {
            number: si + 1,
            date_time: (*date_time).to_owned(),
            timestamp: super::text::locomo_timestamp(date_time).unwrap_or_default(),
            turns: turns
                .iter()
                .enumerate()
                .map(|(ti, (speaker, text))| Turn {
                    speaker: (*speaker).to_owned(),
                    dia_id: format!("D{}:{}", si + 1, ti + 1),
                    text: (*text).to_owned(),
                })
                .collect(),
        })
        .collect();
    let questions = QUESTIONS
        .iter()
        .enumerate()
        .map(|(i, (text, answer, evidence))| Question {
            id: format!("household-qa-{}", i + 1),
            text: (*text).to_owned(),
            answer: (*answer).to_owned(),
            evidence: evidence.iter().map(|e| (*e).to_owned()).collect(),
            category: 4,
        })
        .collect();
    Conversation {
        index: 1,
        user: "household-robot".into(),
        dataset: "memtrace-demo".into(),
        speaker_a: "Maya".into(),
        speaker_b: "Robo".into(),
        sessions,
        questions,
    }
}

/// Runs the demo conversation and injects one verified failure of each error type, choosing
/// for each type the first question (in a seeded order) where the fault is decisive alone and
/// does not disturb the faults already chosen. Returns the MemTraceBench file.
///
/// # Errors
/// The provider's error; [`MemsysError::Input`] when some error type finds no question.
pub async fn generate<L: Llm>(llm: &L, seed: u64) -> Result<Vec<u8>, MemsysError> {
    let conv = conversation();
    let prompts = Prompts::default();
    let cfg = Config {
        seed,
        source: SOURCE.into(),
        start_time: "2026-03-01 09:00:00.000".into(),
        ..Config::default()
    };
    let all: Vec<usize> = (0..conv.questions.len()).collect();
    let clean = run(
        llm,
        &conv,
        &prompts,
        &cfg,
        &[],
        &all,
        &recorder_for(&conv, &cfg, false),
    )
    .await?;
    let right: Vec<usize> = clean
        .results
        .iter()
        .filter(|r| r.correct)
        .map(|r| r.index)
        .collect();
    let mut rng = SplitMix64::new(seed);
    let mut plan = Vec::new();
    let mut file = None;
    for kind in ErrorType::MEMORY {
        let mut placed = false;
        for &qi in &right {
            if plan.iter().any(|(_, q)| *q == qi) {
                continue;
            }
            let Some(fault) = plan_fault(kind, &conv, qi, &clean, &mut rng) else {
                continue;
            };
            let mut trial = plan.clone();
            trial.push((fault, qi));
            if let Some(f) = build_file(
                llm,
                &conv,
                &prompts,
                &cfg,
                trial.clone(),
                &right,
                "demo.json",
            )
            .await?
            {
                if f.cases.len() == trial.len() {
                    plan = trial;
                    file = Some(f);
                    placed = true;
                    break;
                }
            }
        }
        if !placed {
            return Err(MemsysError::Input(format!("the demo conversation gives no verified {kind} case; change a question or the seed")));
        }
    }
    file.map(|f| f.bytes)
        .ok_or_else(|| MemsysError::Input("the demo produced no file".into()))
}
