//! One entry point for every attribution method, so the CLI, the page and the benchmarks run
//! them the same way.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use super::agent::AgentRun;
use super::baselines::attribute_baseline_with;
use super::roles::{RoleConfig, Roles};
use super::{Attribution, AttributionError, Baseline, GraphTrace, InfoFlow, ObsTrace};
use crate::model::{FailureCase, Trace};
use crate::provider::Llm;

/// An attribution method.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Method {
    InfoFlow,
    GraphTrace,
    ObsTrace,
    Baseline(Baseline),
}

impl Method {
    /// Every method name, as accepted by [`FromStr`].
    pub const NAMES: [&'static str; 6] = [
        "infoflow",
        "graphtrace",
        "obstrace",
        "all-at-once",
        "step-by-step",
        "binary-search",
    ];

    /// The name used in results and on the command line.
    pub fn as_str(self) -> &'static str {
        match self {
            Method::InfoFlow => "infoflow",
            Method::GraphTrace => "graphtrace",
            Method::ObsTrace => "obstrace",
            Method::Baseline(b) => b.as_str(),
        }
    }

    /// True when the method calls an LLM.
    pub fn uses_llm(self) -> bool {
        self != Method::InfoFlow
    }
}

impl fmt::Display for Method {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Method {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "infoflow" => Ok(Method::InfoFlow),
            "graphtrace" => Ok(Method::GraphTrace),
            "obstrace" => Ok(Method::ObsTrace),
            other => Baseline::parse(other).map(Method::Baseline).ok_or_else(|| {
                format!(
                    "unknown method {other:?}; available: {}",
                    Method::NAMES.join(", ")
                )
            }),
        }
    }
}

/// Settings of every method.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct MethodSettings {
    /// How op roles are inferred, with the user's overrides: used by every method.
    #[serde(default)]
    pub roles: RoleConfig,
    pub infoflow: InfoFlow,
    pub graphtrace: GraphTrace,
    pub obstrace: ObsTrace,
}

/// Attributes one failed case with `method` (the LLM is unused by `infoflow`).
///
/// # Errors
/// The method's [`AttributionError`].
pub async fn attribute_case<L: Llm>(
    method: Method,
    settings: &MethodSettings,
    llm: &L,
    trace: &Trace,
    case: &FailureCase,
) -> Result<Attribution, AttributionError> {
    attribute_case_run(method, settings, llm, trace, case)
        .await
        .map(|(a, _)| a)
}

/// As [`attribute_case`], with the record of the LLM run (calls, usage, transcript); `infoflow`
/// has none and returns an empty one.
///
/// # Errors
/// The method's [`AttributionError`].
pub async fn attribute_case_run<L: Llm>(
    method: Method,
    settings: &MethodSettings,
    llm: &L,
    trace: &Trace,
    case: &FailureCase,
) -> Result<(Attribution, AgentRun), AttributionError> {
    let roles = Roles::infer(trace, &settings.roles);
    attribute_case_with(method, settings, &roles, llm, trace, case).await
}

/// As [`attribute_case_run`], with the trace's roles computed once by the caller
/// (`Roles::infer(trace, &settings.roles)`) for many cases.
///
/// # Errors
/// The method's [`AttributionError`].
pub async fn attribute_case_with<L: Llm>(
    method: Method,
    settings: &MethodSettings,
    roles: &Roles,
    llm: &L,
    trace: &Trace,
    case: &FailureCase,
) -> Result<(Attribution, AgentRun), AttributionError> {
    match method {
        Method::InfoFlow => settings
            .infoflow
            .attribute_with(trace, roles, case)
            .map(|a| (a, AgentRun::default())),
        Method::GraphTrace => {
            settings
                .graphtrace
                .attribute_with(llm, trace, roles, case)
                .await
        }
        Method::ObsTrace => {
            settings
                .obstrace
                .attribute_with(llm, trace, roles, case)
                .await
        }
        Method::Baseline(b) => attribute_baseline_with(b, llm, trace, roles, case).await,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for name in Method::NAMES {
            assert_eq!(name.parse::<Method>().unwrap().as_str(), name);
        }
        let err = "magic".parse::<Method>().unwrap_err();
        assert!(
            err.contains("graphtrace") && err.contains("binary-search"),
            "{err}"
        );
    }
}
