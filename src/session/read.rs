//! A file read for a host that works on one file at a time (the CLI, the Python package, the JS
//! module): a trace, or each trace of a project bundle the page saved (with the role overrides,
//! failure rules and marks saved there), the ground truth of an annotation file merged into the
//! trace whose questions it names, and the failure cases found with the caller's rules.

use super::cases::{annotation_target, find_cases};
use super::open::{open, parse_rules, Opened, Settings};
use super::roles::role_config;
use super::SessionError;
use crate::attribution::RoleConfig;
use crate::format::limits::MAX_FILE_BYTES;
use crate::format::{sidecar, Format, FormatError, LoadOptions};
use crate::model::{Detection, FailRule, Mark, Trace};

/// How a host reads a file, as its caller says it (the CLI's reading flags, Python's keywords
/// of `load`, the module's `Trace.load` options).
#[derive(Debug, Clone, Default)]
pub struct ReadOptions {
    /// `smartcomment`, `otlp` or `langfuse` instead of detecting it.
    pub format: Option<String>,
    /// Keep what is valid; the rest is listed in [`Input::problems`].
    pub lenient: bool,
    /// The largest file, in bytes once decompressed (`None`: the core's default, 512 MiB,
    /// what the page and the JavaScript module keep; the native hosts give their own).
    pub max_bytes: Option<u64>,
    /// A graded judge score below this fails the question (`None`: 0.5).
    pub judge_threshold: Option<f64>,
    /// Failure rules (`span=NAME output~REGEX`), after a bundle's saved ones.
    pub failed_if: Vec<String>,
    /// `NAME=ROLE` op-role overrides, over a bundle's saved ones.
    pub roles: Vec<String>,
    /// An annotation file (its name, its bytes): merged into the trace whose questions it names.
    pub annotations: Option<(String, Vec<u8>)>,
}

impl ReadOptions {
    /// The largest file, in bytes.
    pub fn max_file_bytes(&self) -> u64 {
        self.max_bytes.unwrap_or(MAX_FILE_BYTES)
    }

    /// The core's load options.
    ///
    /// # Errors
    /// [`SessionError::Argument`] for an unknown format.
    pub fn load_options(&self) -> Result<LoadOptions, SessionError> {
        let format = self
            .format
            .as_deref()
            .map(Format::parse)
            .transpose()
            .map_err(SessionError::Argument)?;
        Ok(LoadOptions {
            format,
            lenient: self.lenient,
            judge_threshold: self.judge_threshold,
            ..LoadOptions::with_max_file_bytes(self.max_file_bytes())
        })
    }

    /// The role overrides given.
    ///
    /// # Errors
    /// [`SessionError::Argument`] for one that does not read.
    pub fn role_config(&self) -> Result<RoleConfig, SessionError> {
        let mut config = RoleConfig::default();
        for spec in &self.roles {
            config.add_override(spec).map_err(SessionError::Argument)?;
        }
        Ok(config)
    }

    /// The failure rules given.
    ///
    /// # Errors
    /// [`SessionError::Rule`] for the first that does not parse.
    pub fn rules(&self) -> Result<Vec<FailRule>, SessionError> {
        parse_rules(&self.failed_if, "")
    }
}

/// One trace read.
#[derive(Debug, Clone)]
pub struct Input {
    /// The file, or `FILE:NAME` for a trace of a bundle.
    pub name: String,
    pub trace: Trace,
    pub format: Format,
    /// In lenient mode, what was dropped while loading.
    pub problems: Vec<FormatError>,
    /// The failure rules in force (saved, then given) and the trace's marks.
    pub rules: Vec<FailRule>,
    pub marks: Vec<Mark>,
    /// How rules, marks or a judge threshold found the cases (`None` when none was given:
    /// loading found them).
    pub detection: Option<Detection>,
    /// The role overrides in force: the given ones over those saved with the trace.
    pub roles: RoleConfig,
    /// The trace the page had on screen when it saved the bundle (true for a plain file).
    pub current: bool,
}

/// Reads `bytes` (a trace in any readable format, gzip or zstd too, or a bundle; `name` names
/// it in errors and results) into the traces it holds. A bundle's saved rules that do not
/// parse are skipped, each with its error in the second list.
///
/// # Errors
/// A file that does not read, an annotation file given as the trace, a rule or role override
/// given that does not parse, annotations that fit none of the traces.
pub fn read(
    name: &str,
    bytes: &[u8],
    options: &ReadOptions,
) -> Result<(Vec<Input>, Vec<SessionError>), SessionError> {
    let given_rules = options.rules()?;
    let overrides = options.role_config()?;
    let (files, settings) = match open(name, bytes, options.load_options()?)? {
        Opened::Trace(loaded) => (vec![(String::new(), Ok(*loaded))], Settings::default()),
        Opened::Bundle {
            traces, settings, ..
        } => (
            traces.into_iter().map(|t| (t.name, t.loaded)).collect(),
            *settings,
        ),
        Opened::Annotations(_) => {
            return Err(SessionError::Argument(format!(
                "{name} is an annotation file, not a trace: read the trace, with this file as \
                 its annotations"
            )))
        }
    };
    let (saved_rules, skipped) = settings.usable_rules(name);
    let in_force: Vec<FailRule> = saved_rules.into_iter().chain(given_rules).collect();
    let mut out = Vec::with_capacity(files.len());
    for (file, loaded) in files {
        let shown = if file.is_empty() {
            name.to_owned()
        } else {
            format!("{name}:{file}")
        };
        let loaded = loaded.map_err(|error| SessionError::Format {
            file: shown.clone(),
            error,
        })?;
        let mut role_cfg = role_config(&settings.roles.get(&file).cloned().unwrap_or_default());
        role_cfg.overrides.extend(overrides.overrides.clone());
        out.push(Input {
            current: file.is_empty() || settings.current.as_deref() == Some(&file),
            marks: settings.marks.get(&file).cloned().unwrap_or_default(),
            name: shown,
            trace: loaded.trace,
            format: loaded.format,
            problems: loaded.problems,
            rules: in_force.clone(),
            detection: None,
            roles: role_cfg,
        });
    }
    if let Some((file, bytes)) = &options.annotations {
        merge_annotations(&mut out, file, bytes)?;
    }
    for input in &mut out {
        input.detection = find_cases(
            &mut input.trace,
            &input.rules,
            &input.marks,
            options.judge_threshold,
        )
        .map_err(|error| SessionError::Detect {
            trace: input.name.clone(),
            error,
        })?;
    }
    Ok((out, skipped))
}

/// The ground truth of annotation file `file` merged into the input whose questions it names,
/// the current one first.
fn merge_annotations(inputs: &mut [Input], file: &str, bytes: &[u8]) -> Result<(), SessionError> {
    let located = |error| SessionError::Format {
        file: file.to_owned(),
        error,
    };
    let records = sidecar::parse(bytes).map_err(located)?;
    let current = inputs.iter().position(|i| i.current);
    let at = annotation_target(inputs.iter().map(|i| &i.trace), current, file, &records)?;
    sidecar::merge(&mut inputs[at].trace, records).map_err(located)
}

/// The one trace of `bytes` a single-trace host works on: the only one, or the one the page had
/// on screen when it saved the bundle; with how many the file held, and the saved rules
/// skipped.
///
/// # Errors
/// As [`read`]; [`SessionError::Argument`] for a bundle without a trace.
pub fn read_one(
    name: &str,
    bytes: &[u8],
    options: &ReadOptions,
) -> Result<(Input, usize, Vec<SessionError>), SessionError> {
    let (inputs, skipped) = read(name, bytes, options)?;
    let n = inputs.len();
    let input = inputs
        .into_iter()
        .max_by_key(|i| i.current)
        .ok_or_else(|| SessionError::Argument(format!("{name} holds no trace")))?;
    Ok((input, n, skipped))
}

#[cfg(test)]
mod tests {
    use super::*;

    const FIXTURE: &[u8] = include_bytes!("../../tests/fixtures/smartcomment/mem0_commented.json");

    #[test]
    fn a_trace_reads_with_its_rules_and_roles() {
        let options = ReadOptions {
            max_bytes: Some(1 << 30),
            roles: vec!["memory_system.add=extraction".into()],
            judge_threshold: Some(0.5),
            ..ReadOptions::default()
        };
        let (inputs, skipped) = read("t.json", FIXTURE, &options).unwrap();
        assert!(skipped.is_empty());
        let [input] = &inputs[..] else {
            panic!("one trace")
        };
        assert!(input.current && input.detection.is_some());
        assert_eq!(input.roles.overrides.len(), 1);
        assert!(!input.trace.cases.is_empty());
    }

    #[test]
    fn bad_options_and_annotation_files_say_what_to_do() {
        let bad_rule = ReadOptions {
            max_bytes: Some(1 << 30),
            failed_if: vec!["span=".into()],
            ..ReadOptions::default()
        };
        assert!(matches!(
            read("t.json", FIXTURE, &bad_rule),
            Err(SessionError::Rule { .. })
        ));
        let bad_format = ReadOptions {
            max_bytes: Some(1 << 30),
            format: Some("xml".into()),
            ..ReadOptions::default()
        };
        assert!(matches!(
            read("t.json", FIXTURE, &bad_format),
            Err(SessionError::Argument(_))
        ));
        let records = br#"[{"query_id": "nope", "final_error_type": "UpdateError"}]"#;
        let annotations = ReadOptions {
            max_bytes: Some(1 << 30),
            ..ReadOptions::default()
        };
        let e = read("a.json", records, &annotations).unwrap_err();
        assert!(e.to_string().contains("annotation file"), "{e}");
    }
}
