//! Multi-fault cases for the benchmark generator (`bench gen --faults 2|3`): one question
//! broken by a chain of 2–3 faults on the one memory unit that holds its answer, each at a
//! later message pair (update decisions overwriting the unit, the last one possibly a deletion
//! removing it). A chain is kept only when, in the run with every kept fault,
//! (a) its question is answered wrong, (b) it is answered right with the chain's faults left
//! out, and (c) it is still answered wrong with any one of the chain's faults alone
//! ([`super::EACH_BREAKS_ALONE`]): so repairing any proper subset of the chain leaves
//! the answer wrong, and the chain is the minimal set of ops whose repair rescues it.
//!
//! Extraction, retrieval and response faults are not chained: a unit-anchored update or
//! deletion after a dropped or garbled extraction has no unit to touch, and a retrieval or
//! response fault after an upstream fault finds nothing left to hide or spoil.

use std::collections::BTreeSet;

use super::{clean_window, right_in, write_file, wrong_in, BenchFormat, BenchOptions, BenchReport};
use crate::fault::{holds, Fault};
use crate::locomo::Conversation;
use crate::record::pair_of;
use crate::{recorder_for, run, Config, MemsysError, Prompts, Run, System};
use memtrace::provider::Llm;
use memtrace::util::rng::SplitMix64;

/// A chain of `k` faults for the question at `qi`: anchored on the one live unit of the clean
/// run holding its answer, at `k` distinct message pairs after its evidence (with facts, so
/// that an update decision runs). `None` when there is no such unit or not enough pairs.
pub fn plan_chain(
    conv: &Conversation,
    qi: usize,
    clean: &Run,
    k: usize,
    rng: &mut SplitMix64,
) -> Option<Vec<Fault>> {
    let q = conv.questions.get(qi)?;
    let holders: Vec<&str> = clean
        .store
        .units()
        .iter()
        .filter(|u| !u.deleted && holds(&u.text, &q.answer))
        .map(|u| u.id.as_str())
        .collect();
    let [unit] = holders.as_slice() else {
        return None;
    };
    let evidence_pair = q.evidence.iter().filter_map(|e| pair_of(conv, e)).max()?;
    let mut later: Vec<usize> = clean
        .pairs_with_facts
        .range(evidence_pair + 1..)
        .copied()
        .collect();
    if later.len() < k {
        return None;
    }
    rng.shuffle(&mut later);
    let mut pairs: Vec<usize> = later.into_iter().take(k).collect();
    pairs.sort_unstable();
    let last_deletes = rng.below(2) == 1;
    Some(
        pairs
            .iter()
            .enumerate()
            .map(|(i, &pair)| {
                let (answer, unit) = (q.answer.clone(), Some((*unit).to_owned()));
                if i + 1 == k && last_deletes {
                    Fault::Deletion { pair, answer, unit }
                } else {
                    Fault::Update { pair, answer, unit }
                }
            })
            .collect(),
    )
}

/// The faults of every chain but the one at `skip`, then `extra`.
fn others_and(chains: &[(Vec<Fault>, usize)], skip: usize, extra: &[Fault]) -> Vec<Fault> {
    chains
        .iter()
        .enumerate()
        .filter(|(j, _)| *j != skip)
        .flat_map(|(_, (g, _))| g.iter().cloned())
        .chain(extra.iter().cloned())
        .collect()
}

/// Keeps the chains that pass (a)–(c) of the module doc together (a few rounds, as dropping a
/// chain can change another's outcome).
async fn verify<L: Llm>(
    llm: &L,
    conv: &Conversation,
    prompts: &Prompts,
    cfg: &Config,
    mut kept: Vec<(Vec<Fault>, usize)>,
    questions: &[usize],
) -> Result<Vec<(Vec<Fault>, usize)>, MemsysError> {
    let off = recorder_for(conv, cfg, false);
    for _round in 0..4 {
        if kept.is_empty() {
            break;
        }
        let all_faults: Vec<Fault> = kept.iter().flat_map(|(g, _)| g.iter().cloned()).collect();
        let all = run(llm, conv, prompts, cfg, &all_faults, questions, &off).await?;
        let mut survivors = Vec::new();
        let mut k0 = 0;
        for (c, (g, qi)) in kept.iter().enumerate() {
            let applied =
                (k0..k0 + g.len()).all(|k| all.applied.get(k).is_some_and(Option::is_some));
            k0 += g.len();
            let Some(q) = conv.questions.get(*qi) else {
                continue;
            };
            if !applied || !wrong_in(&all, &q.id) {
                continue;
            }
            let without = run(
                llm,
                conv,
                prompts,
                cfg,
                &others_and(&kept, c, &[]),
                &[*qi],
                &off,
            )
            .await?;
            if !right_in(&without, &q.id) {
                continue;
            }
            let mut each_breaks = true;
            for f in g {
                let alone = others_and(&kept, c, std::slice::from_ref(f));
                let r = run(llm, conv, prompts, cfg, &alone, &[*qi], &off).await?;
                if !wrong_in(&r, &q.id) {
                    each_breaks = false;
                    break;
                }
            }
            if each_breaks {
                survivors.push((g.clone(), *qi));
            }
        }
        if survivors.len() == kept.len() {
            return Ok(survivors);
        }
        kept = survivors;
    }
    Ok(kept)
}

/// Generates files of `opts.faults`-fault cases until `opts.per_type` cases in all (or the
/// windows run out); at most `opts.per_type_per_file` cases per file.
///
/// # Errors
/// [`MemsysError::Input`] for another memory system than the reference one or OTLP output;
/// the provider's error; a generated file that does not load.
pub async fn generate<L: Llm>(
    llm: &L,
    conversations: &[Conversation],
    opts: &BenchOptions,
) -> Result<BenchReport, MemsysError> {
    if opts.system != System::Mem0 {
        return Err(MemsysError::Input(format!(
            "multi-fault cases need the reference memory system (mem0), not {}",
            opts.system.name()
        )));
    }
    if opts.format != BenchFormat::Smartcomment {
        return Err(MemsysError::Input(
            "multi-fault cases are written as smartcomment files; drop --format otlp".to_owned(),
        ));
    }
    let prompts = Prompts::default();
    let mut rng = SplitMix64::new(opts.seed);
    let mut report = BenchReport::default();
    for (ci, from, to) in super::windows(conversations, opts.sessions_per_file) {
        if report.kept >= opts.per_type {
            return Ok(report);
        }
        let Some(w) =
            clean_window(llm, &prompts, conversations, (ci, from, to), opts, &mut rng).await?
        else {
            continue;
        };
        // No quota per type here: a file takes twice the per-type share.
        let need = (opts.per_type - report.kept).min(2 * opts.per_type_per_file);
        let mut plan = Vec::new();
        let mut units = BTreeSet::new();
        for &qi in &w.right {
            if plan.len() == need {
                break;
            }
            let Some(chain) = plan_chain(&w.conv, qi, &w.clean, opts.faults, &mut rng) else {
                continue;
            };
            // One chain per unit: two chains on one unit would mask each other.
            if units.insert(chain.first().and_then(Fault::unit).map(str::to_owned)) {
                plan.push((chain, qi));
            }
        }
        report.planned += plan.iter().map(|(g, _)| g.len()).sum::<usize>();
        let kept = verify(llm, &w.conv, &prompts, &w.cfg, plan, &w.right).await?;
        let name = format!("locomo_{}-s{from}-{}.json", w.conv.user_id(), to - 1);
        if let Some(file) =
            write_file(llm, &w.conv, &prompts, &w.cfg, &kept, &w.right, &name).await?
        {
            report.add(file);
        }
    }
    Ok(report)
}
