//! What makes a case, for every command that reads cases: `--failed-if RULE` (repeatable) user
//! failure rules, and `--annotations FILE` ground truth; and how a trace is read (`--format`,
//! `--lenient`, `--max-bytes`).

use std::path::PathBuf;

use memtrace::format::{limits, Format, LoadOptions};
use memtrace::model::{Detection, FailRule, Mark, Trace};

/// How every command reads a trace: the format (detected from content unless given), whether
/// to load what is valid and warn about the rest, and the largest file.
#[derive(clap::Args, Clone, Copy, Default)]
pub struct ReadArgs {
    /// Read as this format instead of detecting it (smartcomment, otlp, langfuse).
    #[arg(long, value_name = "FORMAT", value_parser = Format::parse)]
    pub format: Option<Format>,
    /// Load what is valid; each problem is printed on stderr instead of failing.
    #[arg(long)]
    pub lenient: bool,
    #[command(flatten)]
    pub size: SizeArgs,
}

impl ReadArgs {
    /// The core's load options for these flags.
    pub fn options(self) -> LoadOptions {
        LoadOptions {
            format: self.format,
            lenient: self.lenient,
            ..self.size.options()
        }
    }
}

/// The largest file a command reads (`--max-bytes`), for the commands that read traces without
/// the other reading flags too.
#[derive(clap::Args, Clone, Copy, Default)]
pub struct SizeArgs {
    /// The largest trace file to read, once decompressed: bytes or a size with K, M, G, T
    /// (powers of 1024: 700M, 2G). Default: a quarter of this machine's memory, at least 512M.
    #[arg(long, value_name = "SIZE", value_parser = limits::parse_size)]
    pub max_bytes: Option<u64>,
}

impl SizeArgs {
    /// The largest file: as given, else the machine's default.
    pub fn max_file_bytes(self) -> u64 {
        self.max_bytes
            .unwrap_or_else(memtrace_native::memory::default_max_bytes)
    }

    /// The core's default load options with this largest file.
    pub fn options(self) -> LoadOptions {
        LoadOptions::with_max_file_bytes(self.max_file_bytes())
    }
}

#[derive(clap::Args, Clone, Default)]
pub struct RuleArgs {
    /// A failure rule for judges memtrace does not recognize: `span=NAME output~REGEX`
    /// (or `op=NAME …`, or only `output~REGEX`); repeatable. See docs/failures.md.
    #[arg(long = "failed-if", value_name = "RULE", value_parser = parse_rule)]
    pub failed_if: Vec<FailRule>,
    /// An annotation file (exported by the page, or a `.annotations.json` sidecar): its
    /// ground truth is merged into the trace whose questions it names.
    #[arg(long, value_name = "FILE")]
    pub annotations: Option<PathBuf>,
    /// A graded judge score below this fails the question (default 0.5); labels are read as
    /// said. See docs/failures.md.
    #[arg(long, value_name = "SCORE")]
    pub judge_threshold: Option<f64>,
    /// OTLP log records exported beside an OTLP traces file (GenAI content and evaluation
    /// events as logs): joined to the spans they name, as the page does with the two files.
    #[arg(long, value_name = "FILE")]
    pub logs: Option<PathBuf>,
    #[command(flatten)]
    pub read: ReadArgs,
}

fn parse_rule(s: &str) -> Result<FailRule, String> {
    s.parse::<FailRule>().map_err(|e| e.to_string())
}

impl RuleArgs {
    /// Finds `trace.cases` again with `saved` rules (from a bundle), these rules and `marks`,
    /// with the judge threshold, and says what was looked for; `None` (nothing run) when there
    /// is no rule, no mark and no threshold: loading already found the cases without any.
    pub fn apply(
        &self,
        trace: &mut Trace,
        saved: &[FailRule],
        marks: &[Mark],
    ) -> anyhow::Result<Option<Detection>> {
        let rules: Vec<FailRule> = saved.iter().chain(&self.failed_if).cloned().collect();
        let found = memtrace::session::find_cases(trace, &rules, marks, self.judge_threshold)?;
        Ok(found)
    }
}
