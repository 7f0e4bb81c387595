//! `memtrace attribute FILE [--case QUERY_ID] --method M [--json] [--verify]`: the verdict per
//! failed case, with any method (`infoflow` needs no LLM; the others use the provider flags).

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{bail, Context};
use memtrace::attribution::{RoleConfig, Roles};
use memtrace::model::FailureCase;
use memtrace::session::{attribute_cases, Job, MethodOptions, SessionError, VerdictRow};
use memtrace::Trace;
use memtrace_native::llm::{CliLlm, ProviderArgs};

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

/// A method ready to run: its options (planned per trace, over the trace's saved roles), its
/// provider.
pub struct Runner {
    pub options: MethodOptions,
    /// The method's name.
    pub method: &'static str,
    pub llm: CliLlm,
    pub concurrency: usize,
    pub progress: Progress,
}

impl MethodArgs {
    /// Parses the method and builds its provider; the session plans it.
    ///
    /// # Errors
    /// An unknown method or role, an unreadable prior, bad provider flags, an LLM method with
    /// the simulated provider.
    pub fn runner(&self) -> anyhow::Result<Runner> {
        let prior = match &self.prior {
            Some(p) => Some(
                std::fs::read_to_string(p)
                    .with_context(|| format!("cannot read the prior {}", p.display()))?,
            ),
            None => None,
        };
        let options = MethodOptions {
            method: self.method.clone(),
            hint_infoflow: self.hint_infoflow,
            prior,
            max_iterations: self.max_iterations,
            history_budget_tokens: self.history_budget_tokens,
            roles: self.roles.clone(),
        };
        let plan = options.plan(&RoleConfig::default())?;
        let llm = self.provider.build()?;
        if let Err(SessionError::NeedsLlm(method)) =
            plan.clone().needing(matches!(llm, CliLlm::Http(..)))
        {
            bail!(
                "{method} needs an LLM, and the simulated provider only answers the reference \
                 memory system's own requests. Pass --provider openai (or anthropic) with \
                 --model, and MEMTRACE_API_KEY; any OpenAI-compatible server works with \
                 --base-url URL (a local one: python3 tests/llm_server/server.py, --model auto). \
                 Or use --method infoflow (no LLM)."
            );
        }
        Ok(Runner {
            method: plan.name(),
            options,
            llm,
            concurrency: self.provider.concurrency.max(1),
            progress: Progress::new(self.quiet),
        })
    }
}

impl Runner {
    /// The op roles of `trace` under `saved` role overrides and the command line's.
    ///
    /// # Errors
    /// As [`MethodOptions::plan`].
    pub fn roles(&self, trace: &Trace, saved: &RoleConfig) -> anyhow::Result<Roles> {
        Ok(self.options.plan(saved)?.roles(trace))
    }

    /// Attributes `cases` of `trace` through the session (`concurrency` cases at a time, in
    /// order, the one retry policy), with `saved` role overrides under the command line's; with
    /// `verify`, runs the counterfactual check of each verdict. One row per case.
    ///
    /// # Errors
    /// As [`MethodOptions::plan`].
    pub fn attribute(
        &self,
        trace: &Trace,
        saved: &RoleConfig,
        cases: &[FailureCase],
        verify: bool,
    ) -> anyhow::Result<Vec<VerdictRow>> {
        let plan = self.options.plan(saved)?;
        let roles = plan.roles(trace);
        let started = Instant::now();
        let clock = || u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
        let job = Job {
            plan: &plan,
            llm: &self.llm,
            trace,
            roles: &roles,
            concurrency: self.concurrency,
            clock_ms: Some(&clock),
        };
        self.progress.add(cases.len());
        let roles = &roles;
        let work = attribute_cases(&job, cases, |case, result| async move {
            let checked = match (&result, verify) {
                (Ok(a), true) => Some(self.llm.verify(trace, roles, case, &a.op_id).await),
                _ => None,
            };
            self.progress.tick();
            VerdictRow::new(trace, case, result, checked)
        });
        Ok(futures_executor::block_on(work))
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
        let rows = runner.attribute(&input.trace, &input.roles, &cases, args.verify)?;
        runner.progress.clear();
        if args.decisive_set {
            let roles = runner.roles(&input.trace, &input.roles)?;
            for (case, row) in cases.iter().zip(&rows) {
                print_rows(args, std::slice::from_ref(case), std::slice::from_ref(row));
                let set = crate::decisive::find(&input.trace, &roles, case, args.budget)?;
                if args.cases.json {
                    println!("{}", serde_json::to_string(&set)?);
                } else {
                    crate::decisive::print(&set);
                }
            }
            continue;
        }
        print_rows(args, &cases, &rows);
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

fn print_rows(args: &Args, cases: &[FailureCase], rows: &[VerdictRow]) {
    for (case, row) in cases.iter().zip(rows) {
        if args.cases.json {
            println!("{}", row.to_json());
            continue;
        }
        println!("{}  {}", case.query_id, case.query);
        let a = match row.result() {
            Ok(a) => a,
            Err(e) => {
                println!("  no verdict: {e}");
                continue;
            }
        };
        println!(
            "  verdict   {} at {} ({})",
            a.error_type, a.op_name, a.op_id
        );
        if let Some(c) = &row.counterfactual {
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
}
