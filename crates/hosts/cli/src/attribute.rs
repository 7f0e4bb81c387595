//! `memtrace attribute FILE [--case QUERY_ID] --method M [--json] [--verify]`: the verdict per
//! failed case, with any method (`infoflow` needs no LLM; the others use the provider flags).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{bail, Context};
use memtrace::attribution::counterfactual::Check;
use memtrace::attribution::prompts::DEFAULT_PRIOR;
use memtrace::attribution::{
    attribute_case_with, Attribution, Method, MethodSettings, OpRole, Roles,
};
use memtrace::model::{question_ref, FailureCase};
use memtrace::provider::run_bounded;
use memtrace::session::with_retries_async;
use memtrace::Trace;
use memtrace_memsys::counterfactual::check_with;
use memtrace_memsys::simulated::SimulatedLlm;
use memtrace_native::llm::{CliLlm, ProviderArgs, ProviderChoice};

use crate::progress::Progress;

/// How to attribute: the method and its settings (shared by `attribute` and `eval`).
#[derive(clap::Args, Clone)]
pub struct MethodArgs {
    /// Attribution method: infoflow (no LLM), graphtrace, obstrace, all-at-once, step-by-step,
    /// binary-search. `eval` also takes a comma list (e.g. graphtrace,all-at-once) to compare
    /// tokens per case.
    #[arg(long, default_value = "infoflow")]
    pub method: String,
    /// graphtrace: offer the info-flow verdict and failure slice as a hint.
    #[arg(long)]
    pub hint_infoflow: bool,
    /// graphtrace / obstrace: a text file describing the pipeline and which stages to check
    /// first (default: a Mem0-style prior).
    #[arg(long, value_name = "FILE")]
    pub prior: Option<PathBuf>,
    /// Agents: at most this many LLM calls per case.
    #[arg(long, value_name = "N", default_value_t = 40)]
    pub max_iterations: usize,
    /// Agents: summarize older turns when the history passes this many (estimated) tokens.
    #[arg(long, value_name = "N", default_value_t = 60_000)]
    pub history_budget_tokens: usize,
    /// Set an op name's pipeline role, over what its reads and writes say (repeatable):
    /// extraction, update, deletion, retrieval, response, judge, other. `memtrace roles FILE`
    /// lists the inferred ones.
    #[arg(long = "role", value_name = "NAME=ROLE")]
    pub roles: Vec<String>,
    /// No progress line on stderr (it is shown only when stderr is a terminal).
    #[arg(long, short = 'q')]
    pub quiet: bool,
    #[command(flatten)]
    pub provider: ProviderArgs,
}

/// A method ready to run: parsed, configured, with its provider.
pub struct Runner {
    pub method: Method,
    pub settings: MethodSettings,
    pub llm: CliLlm,
    pub concurrency: usize,
    pub progress: Progress,
}

/// One case's outcome: the verdict or why not, and the counterfactual check when asked.
pub type CaseResult = (FailureCase, Result<Attribution, String>, Option<Check>);

impl MethodArgs {
    /// Parses the method and builds its provider and settings.
    ///
    /// # Errors
    /// An unknown method, an unreadable prior, or bad provider flags.
    pub fn runner(&self) -> anyhow::Result<Runner> {
        let method: Method = self
            .method
            .parse()
            .map_err(|e: String| anyhow::anyhow!(e))?;
        if method.uses_llm() && self.provider.provider == ProviderChoice::Simulated {
            bail!(
                "{} needs an LLM, and the simulated provider only answers the reference memory \
                 system's own requests. Pass --provider openai (or anthropic) with --model, and \
                 MEMTRACE_API_KEY; any OpenAI-compatible server works with --base-url URL (a local \
                 one: python3 tests/llm_server/server.py, --model auto). Or use --method infoflow \
                 (no LLM).",
                method.as_str()
            );
        }
        let prior = match &self.prior {
            Some(p) => std::fs::read_to_string(p)
                .with_context(|| format!("cannot read the prior {}", p.display()))?,
            None => DEFAULT_PRIOR.to_owned(),
        };
        let mut settings = MethodSettings::default();
        for spec in &self.roles {
            settings
                .roles
                .add_override(spec)
                .map_err(|e| anyhow::anyhow!(e))?;
        }
        for limits in [
            &mut settings.graphtrace.limits,
            &mut settings.obstrace.limits,
        ] {
            limits.max_iterations = self.max_iterations;
            limits.history_budget_tokens = self.history_budget_tokens;
        }
        settings.graphtrace.prior.clone_from(&prior);
        settings.obstrace.prior = prior;
        settings.graphtrace.hint_infoflow = self.hint_infoflow;
        Ok(Runner {
            method,
            settings,
            llm: self.provider.build()?,
            concurrency: self.provider.concurrency.max(1),
            progress: Progress::new(self.quiet),
        })
    }
}

impl Runner {
    /// Attributes `cases` of `trace`, `concurrency` cases at a time, in order, with `saved`
    /// role overrides under the command line's; with `verify`, runs the counterfactual check
    /// of each verdict.
    pub fn attribute(
        &self,
        trace: &Trace,
        saved: &BTreeMap<String, OpRole>,
        cases: &[FailureCase],
        verify: bool,
    ) -> Vec<CaseResult> {
        let mut config = self.settings.roles.clone();
        for (name, role) in saved {
            config.overrides.entry(name.clone()).or_insert(*role);
        }
        let roles = &Roles::infer(trace, &config);
        self.progress.add(cases.len());
        let work = run_bounded(cases, self.concurrency, |case| async move {
            let started = Instant::now();
            // The session's one retry policy: a failed run is tried again unless that cannot help.
            let result = with_retries_async(|_| {
                attribute_case_with(self.method, &self.settings, roles, &self.llm, trace, case)
            })
            .await
            .map(|(a, _)| a);
            let result = result.map(|mut a| {
                a.cost.wall_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
                a
            });
            let checked = match (&result, verify) {
                (Ok(a), true) => Some(
                    match &self.llm {
                        // The echo stand-in cannot answer; the simulated memory-system model can.
                        CliLlm::Simulated(_) => {
                            check_with(&SimulatedLlm, trace, roles, case, &a.op_id).await
                        }
                        llm @ CliLlm::Http(..) => {
                            check_with(llm, trace, roles, case, &a.op_id).await
                        }
                    }
                    .unwrap_or_else(|e| Check {
                        outcome: memtrace::attribution::counterfactual::Outcome::NotReplayable,
                        detail: format!("the replay failed: {e}"),
                        replayed_answer: None,
                        usage: memtrace::provider::Usage::default(),
                    }),
                ),
                _ => None,
            };
            self.progress.tick();
            (case.clone(), result.map_err(|e| e.to_string()), checked)
        });
        futures_executor::block_on(work)
    }
}

/// The file and the cases a per-case command reads, and how it prints them (`attribute`,
/// `story`).
#[derive(clap::Args)]
pub struct Cases {
    /// A trace file (any readable format; `-`: standard input).
    pub file: PathBuf,
    /// Only this case (its query id, e.g. `query:locomo-qa-1-7@1`).
    #[arg(long)]
    pub case: Option<String>,
    /// One JSON object per case.
    #[arg(long)]
    pub json: bool,
}

#[derive(clap::Args)]
#[allow(clippy::struct_excessive_bools)] // independent command-line switches
pub struct Args {
    #[command(flatten)]
    cases: Cases,
    /// Check each verdict by counterfactual replay (verified / refuted / not replayable).
    #[arg(long)]
    verify: bool,
    /// Write the provider's call statistics (calls, retries, tokens, estimated replies) as JSON
    /// here; they are printed on stderr whenever an LLM was called.
    #[arg(long, value_name = "FILE")]
    stats_out: Option<PathBuf>,
    /// Also find each failure's decisive set: the minimal set of ops whose repair rescues the
    /// answer (ddmin over counterfactual replays, simulated provider; issue #17).
    #[arg(long, alias = "all-causes")]
    decisive_set: bool,
    /// --decisive-set: at most this many replays per case.
    #[arg(long, value_name = "N", default_value_t = 64)]
    budget: usize,
    /// Exit with status 1 when any failed case was found (0: none; 2: a usage or input error).
    #[arg(long)]
    fail_on_failures: bool,
    #[command(flatten)]
    method: MethodArgs,
    #[command(flatten)]
    rules: crate::rules::RuleArgs,
}

pub fn run(args: &Args) -> anyhow::Result<ExitCode> {
    let runner = args.method.runner()?;
    let inputs = crate::input::read(&args.cases.file, &args.rules)?;
    let (mut matched, mut found) = (false, false);
    for input in &inputs {
        let cases: Vec<FailureCase> = input
            .trace
            .cases
            .iter()
            .filter(|c| args.cases.case.as_deref().is_none_or(|q| c.query_id == q))
            .cloned()
            .collect();
        matched |= !cases.is_empty();
        found |= !input.trace.cases.is_empty();
        if cases.is_empty() && args.cases.case.is_none() {
            // On stderr with --json: stdout stays one JSON object per case.
            if args.cases.json {
                eprintln!("{}: no failed cases", input.name);
            } else {
                println!("{}: no failed cases", input.name);
            }
        }
        let results = runner.attribute(&input.trace, &input.roles, &cases, args.verify);
        runner.progress.clear();
        if args.decisive_set {
            let roles = Roles::infer(&input.trace, &runner.settings.roles);
            for r in &results {
                print_results(args, &input.trace, std::slice::from_ref(r))?;
                let set = crate::decisive::find(&input.trace, &roles, &r.0, args.budget)?;
                if args.cases.json {
                    println!("{}", serde_json::to_string(&set)?);
                } else {
                    crate::decisive::print(&set);
                }
            }
            continue;
        }
        print_results(args, &input.trace, &results)?;
    }
    if runner.llm.stats().calls > 0 || args.stats_out.is_some() {
        let prices = args.method.provider.price_table()?;
        memtrace_native::llm::report_stats(&runner.llm, &prices, args.stats_out.as_deref())?;
    }
    if let (Some(q), false) = (&args.cases.case, matched) {
        bail!(
            "no failed case with query id {q:?} in {}",
            args.cases.file.display()
        );
    }
    Ok(crate::failures_code(args.fail_on_failures && found))
}

fn print_results(args: &Args, trace: &Trace, results: &[CaseResult]) -> anyhow::Result<()> {
    for (case, result, checked) in results {
        if args.cases.json {
            let mut v = match &result {
                Ok(a) => serde_json::to_value(a)?,
                Err(e) => serde_json::json!({"case_id": case.query_id, "error": e}),
            };
            v["question"] = serde_json::to_value(question_ref(trace, case))?;
            if let Some(c) = checked {
                v["counterfactual"] = serde_json::to_value(c)?;
            }
            println!("{}", serde_json::to_string(&v)?);
            continue;
        }
        println!("{}  {}", case.query_id, case.query);
        match &result {
            Ok(a) => {
                println!(
                    "  verdict   {} at {} ({})",
                    a.error_type, a.op_name, a.op_id
                );
                if let Some(c) = &checked {
                    println!("  check     {} — {}", c.outcome.as_str(), c.detail);
                }
                println!("  reason    {}", a.reason);
                if a.is_confident() || a.method != "infoflow" {
                    println!("  confidence {:.2}", a.confidence);
                } else {
                    println!(
                        "  confidence {:.2} — low: the data flow leaves it open; try an LLM method (--method graphtrace)",
                        a.confidence
                    );
                }
                println!(
                    "  cost      {} LLM calls, {} input / {} output tokens{}, {} ms",
                    a.cost.llm_calls,
                    a.cost.input_tokens,
                    a.cost.output_tokens,
                    if a.cost.tokens_estimated {
                        " (estimated: the server sent no usage)"
                    } else {
                        ""
                    },
                    a.cost.wall_ms
                );
                if let Some(ann) = &case.annotation {
                    let agree = if ann.op_id == a.op_id && ann.error_type == a.error_type {
                        "agrees"
                    } else {
                        "DIFFERS"
                    };
                    println!("  annotation {} at {} — {agree}", ann.error_type, ann.op_id);
                }
            }
            Err(e) => println!("  no verdict: {e}"),
        }
    }
    Ok(())
}
