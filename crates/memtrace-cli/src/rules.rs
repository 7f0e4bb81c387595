//! `--failed-if RULE` (repeatable): user failure rules for every command that reads cases.

use memtrace::model::{FailRule, Trace};

#[derive(clap::Args, Clone, Default)]
pub struct RuleArgs {
    /// A failure rule for judges memtrace does not recognize: `span=NAME output~REGEX`
    /// (or `op=NAME …`, or only `output~REGEX`); repeatable. See docs/failures.md.
    #[arg(long = "failed-if", value_name = "RULE", value_parser = parse_rule)]
    pub failed_if: Vec<FailRule>,
}

fn parse_rule(s: &str) -> Result<FailRule, String> {
    s.parse::<FailRule>().map_err(|e| e.to_string())
}

impl RuleArgs {
    /// Recomputes `trace.cases` with the rules (no-op without rules).
    pub fn apply(&self, trace: &mut Trace) -> anyhow::Result<()> {
        if !self.failed_if.is_empty() {
            trace.apply_rules(&self.failed_if, &[])?;
        }
        Ok(())
    }
}
