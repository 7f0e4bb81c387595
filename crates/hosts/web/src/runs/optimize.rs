//! The Optimize view's pure parts: the built-in conversations, reading a LoCoMo conversations
//! file, the loop's settings from the form, and what is kept in IndexedDB to resume (the loop's
//! progress, rounds compared, versions and exports are `LoopState`'s). Tested natively.

use std::collections::BTreeMap;

use memtrace::provider::PriceTable;
use memtrace::session;
use memtrace_memsys::closed_loop::{LoopConfig, LoopState};
use memtrace_memsys::{demo, Conversation};
use serde::{Deserialize, Serialize};

use crate::runs::llm_run::ProviderSettings;

/// Two short conversations written by us for the closed loop (train, held-out).
const DEMO_JSON: &str = include_str!("../../../../../tests/optimize_data/conversations.json");

/// Two more whose evidence the similarity ranking puts third: they need `top_k` ≥ 3.
const SETTINGS_JSON: &str = include_str!("../../../../../tests/optimize_data/settings.json");

/// The name the built-in conversations show under.
pub const DEMO_SOURCE: &str = "built-in demo conversations";

/// Reads LoCoMo conversations: one object or a list of them
/// ([`memtrace_memsys::locomo::parse_conversations`]).
///
/// # Errors
/// What is wrong (not JSON, empty, or the conversation and field that is malformed).
pub fn parse_conversations(bytes: &[u8]) -> Result<Vec<Conversation>, String> {
    memtrace_memsys::locomo::parse_conversations(bytes).map_err(|e| e.to_string())
}

/// The built-in conversations: the two written for the loop, the household-robot demo, then
/// the two retrieval-starved ones (train 3, held-out 4 with `top_k` 2 show the setting tuned).
pub fn demo_conversations() -> Vec<Conversation> {
    let mut out = parse_conversations(DEMO_JSON.as_bytes()).unwrap_or_default();
    let mut robot = demo::conversation();
    robot.index = out.len() + 1;
    out.push(robot);
    // Parsed with their place in the list, which names their users and questions.
    let settings: Vec<serde_json::Value> = serde_json::from_str(SETTINGS_JSON).unwrap_or_default();
    for v in settings {
        if let Ok(c) = Conversation::from_json(&v, out.len() + 1) {
            out.push(c);
        }
    }
    out
}

/// The conversations a saved loop was started on.
///
/// # Errors
/// As [`parse_conversations`].
pub fn conversations_of(source: &Source) -> Result<Vec<Conversation>, String> {
    match &source.json {
        None => Ok(demo_conversations()),
        Some(text) => parse_conversations(text.as_bytes()),
    }
}

/// Where the conversations came from: the built-in ones (`json` none) or a file's text.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Source {
    pub name: String,
    pub json: Option<String>,
}

impl Source {
    pub fn demo() -> Self {
        Self {
            name: DEMO_SOURCE.into(),
            json: None,
        }
    }
}

/// What the form chose.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Setup {
    pub rounds: usize,
    pub train: Vec<usize>,
    pub heldout: Vec<usize>,
    /// Run the memory system with the configured provider (else the simulated one).
    pub system_provider: bool,
    /// Units retrieved per question at the start.
    #[serde(default = "default_top_k")]
    pub top_k: usize,
    /// Tune `top_k` along with the prompts.
    #[serde(default = "default_true")]
    pub tune_top_k: bool,
}

fn default_top_k() -> usize {
    10
}

fn default_true() -> bool {
    true
}

impl Default for Setup {
    fn default() -> Self {
        Self {
            rounds: 2,
            train: vec![0],
            heldout: vec![1],
            system_provider: false,
            top_k: default_top_k(),
            tune_top_k: true,
        }
    }
}

/// Positions typed as `0, 2` (1-based numbers are not accepted: the list shows 0-based ones).
///
/// # Errors
/// The part that is not a number.
pub fn parse_positions(text: &str) -> Result<Vec<usize>, String> {
    let mut out = Vec::new();
    for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let n = part
            .parse::<usize>()
            .map_err(|_| format!("`{part}` is not a conversation number"))?;
        if !out.contains(&n) {
            out.push(n);
        }
    }
    Ok(out)
}

/// Checks the split against `count` conversations: the session's [`session::Setup::check`].
///
/// # Errors
/// A sentence saying what to change.
pub fn check_setup(setup: &Setup, count: usize) -> Result<(), String> {
    session::Setup {
        rounds: setup.rounds,
        train: setup.train.clone(),
        heldout: setup.heldout.clone(),
        top_k: setup.top_k,
    }
    .check(count)
    .map_err(|e| e.to_string())
}

/// The loop's settings: the split, and the optimizer's model priced at the page's prices.
pub fn loop_config(setup: &Setup, provider: &ProviderSettings) -> LoopConfig {
    let model = provider.model.trim().to_owned();
    let price = provider.price();
    let mut cfg = LoopConfig {
        rounds: setup.rounds,
        train: setup.train.clone(),
        heldout: setup.heldout.clone(),
        prices: PriceTable(BTreeMap::from([(model.clone(), price)])),
        model,
        ..LoopConfig::default()
    };
    cfg.memsys.top_k = setup.top_k;
    if !setup.tune_top_k {
        cfg.settings.clear();
    }
    cfg
}

/// What IndexedDB keeps of a loop, saved after every step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SavedLoop {
    pub source: Source,
    pub setup: Setup,
    pub state: LoopState,
}

#[cfg(test)]
mod tests {
    use super::*;
    use memtrace_memsys::closed_loop::advance;
    use memtrace_memsys::closed_loop::{ExportKind, Phase};
    use memtrace_memsys::simulated::SimulatedLlm;
    use memtrace_memsys::Prompts;

    #[test]
    fn demo_conversations_parse_and_have_questions() {
        let convs = demo_conversations();
        assert!(convs.len() >= 3);
        assert!(convs.iter().all(|c| !c.questions.is_empty()));
        let users: Vec<String> = convs.iter().map(Conversation::user_id).collect();
        let unique: std::collections::BTreeSet<&String> = users.iter().collect();
        assert_eq!(unique.len(), users.len());
    }

    /// The optimizer of the scripted loop (`tests/llm_server/scripts/optimize_loop.json`).
    fn scripted_optimizer() -> memtrace::provider::ScriptedLlm {
        let script = memtrace::provider::Script::from_json(include_str!(
            "../../../../../tests/llm_server/scripts/optimize_loop.json"
        ))
        .unwrap();
        memtrace::provider::ScriptedLlm::new(script)
    }

    /// One step of the loop, the memory system simulated.
    fn step(
        state: &mut LoopState,
        convs: &[Conversation],
        optimizer: &memtrace::provider::ScriptedLlm,
    ) {
        futures_executor::block_on(advance(state, convs, &SimulatedLlm, optimizer, &mut |_| {}))
            .unwrap();
    }

    #[test]
    fn a_starved_top_k_is_tuned_and_rounds_compare() {
        let convs = demo_conversations();
        let setup = Setup {
            rounds: 1,
            train: vec![3],
            heldout: vec![4],
            top_k: 2,
            ..Setup::default()
        };
        check_setup(&setup, convs.len()).unwrap();
        let cfg = loop_config(&setup, &ProviderSettings::default());
        let mut state = LoopState::new(cfg, Prompts::default()).unwrap();
        let optimizer = scripted_optimizer();
        while state.phase != Phase::Done {
            step(&mut state, &convs, &optimizer);
        }
        assert_eq!(state.rounds[1].settings.get("top_k"), Some(&3));
        let c = state.compare_rounds(0, 1).unwrap();
        let wrong0 = state.rounds[0]
            .verdicts
            .iter()
            .filter(|v| !v.correct)
            .count();
        assert_eq!(
            c.count(memtrace::optimize::compare::Change::Fixed),
            wrong0,
            "{}",
            c.summary()
        );
        assert!(state.compare_rounds(0, 7).is_none());
        let (_, _, text) = state.export(ExportKind::UpdateResults);
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v["settings"]["top_k@2"]["value"], 3);
        assert!(check_setup(&Setup { top_k: 0, ..setup }, convs.len()).is_err());
    }

    #[test]
    fn bad_files_say_what_is_wrong() {
        let e = parse_conversations(b"{nope").unwrap_err();
        assert!(e.contains("line 1"), "{e}");
        assert!(parse_conversations(b"[]")
            .unwrap_err()
            .contains("no conversation"));
        let e = parse_conversations(br#"[{"speaker_a": "A"}]"#).unwrap_err();
        assert!(e.contains("speaker_b"), "{e}");
    }

    #[test]
    fn positions_and_split_are_checked() {
        assert_eq!(parse_positions("0, 2,2,").unwrap(), vec![0, 2]);
        assert!(parse_positions("x").is_err());
        let ok = Setup::default();
        assert!(check_setup(&ok, 3).is_ok());
        assert!(check_setup(&ok, 1).unwrap_err().contains("does not exist"));
        let both = Setup {
            heldout: vec![0],
            ..Setup::default()
        };
        assert!(check_setup(&both, 3).unwrap_err().contains("both"));
        let none = Setup {
            train: vec![],
            ..Setup::default()
        };
        assert!(check_setup(&none, 3).is_err());
    }

    #[test]
    fn config_prices_the_model_at_the_page_prices() {
        let p = ProviderSettings {
            model: " m1 ".into(),
            input_usd_per_mtok: 2.0,
            output_usd_per_mtok: 8.0,
            ..ProviderSettings::default()
        };
        let cfg = loop_config(&Setup::default(), &p);
        assert_eq!(cfg.model, "m1");
        let price = cfg.prices.price("m1").unwrap();
        assert!((price.output_usd_per_mtok - 8.0).abs() < 1e-12);
        assert_eq!((cfg.train.clone(), cfg.heldout.clone()), (vec![0], vec![1]));
        // 3 evaluations of 2 conversations, 2 optimizations.
        assert_eq!(cfg.steps_total(), 8);
    }

    #[test]
    fn steps_done_counts_every_advance_and_exports_name_each_version() {
        let convs = demo_conversations();
        let cfg = loop_config(&Setup::default(), &ProviderSettings::default());
        let total = cfg.steps_total();
        let mut state = LoopState::new(cfg, Prompts::default()).unwrap();
        let optimizer = scripted_optimizer();
        let mut n = 0;
        while state.phase != Phase::Done {
            assert_eq!(state.steps_done(), n);
            step(&mut state, &convs, &optimizer);
            n += 1;
            assert!(n <= total);
        }
        assert_eq!((n, state.steps_done()), (total, total));
        let s = state.series();
        assert_eq!(s.len(), 3);
        assert!(s[1].1 > s[0].1, "train accuracy rises: {s:?}");
        assert!(state.versions.iter().any(|v| v.parent.is_some()));
        let (name, _, text) = state.export(ExportKind::UpdateResults);
        assert_eq!(name, "update_results.json");
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        for p in &state.versions {
            assert!(v.get(format!("{}@{}", p.name, p.version)).is_some());
        }
        let (_, _, html) = state.export(ExportKind::Html);
        assert!(html.contains("accuracy-chart"));
        let (_, _, plain) = state.export(ExportKind::Text);
        assert!(plain.contains("versions.json"));
        let by = state.versions_by_prompt();
        assert_eq!(
            by.values().map(Vec::len).sum::<usize>(),
            state.versions.len()
        );
        let saved = SavedLoop {
            source: Source::demo(),
            setup: Setup::default(),
            state: state.clone(),
        };
        let back: SavedLoop =
            serde_json::from_str(&serde_json::to_string(&saved).unwrap()).unwrap();
        assert_eq!(back, saved);
        assert_eq!(conversations_of(&back.source).unwrap().len(), convs.len());
    }
}
