//! A file opened in short steps, for a host that must stay responsive (the page runs steps for
//! a few milliseconds, lets the browser paint, and runs more): decompressed and named, sorted,
//! a trace parsed ([`StepLoad`]) and its roles inferred ([`RolesInference`]); then given to
//! [`Project::take`]. Pure: the host owns the clock and decides when to stop.

use std::sync::Arc;

use super::open::{kind_of, readable, FileKind};
use super::project::{Added, Project};
use super::SessionError;
use crate::attribution::{RoleConfig, Roles, RolesInference};
use crate::format::stepwise::StepLoad;
use crate::format::{Format, FormatError, LoadOptions};
use crate::model::Trace;

/// Bytes of the file parsed per step (a millisecond or two).
const STEP_BYTES: usize = 256 * 1024;
/// Ops per step of the roles inference.
const STEP_OPS: usize = 200;

/// A file being opened.
pub struct Opening {
    name: String,
    bytes: Arc<[u8]>,
    stage: Stage,
}

enum Stage {
    Parse(Box<StepLoad<Arc<[u8]>>>),
    Roles(Box<(ReadTrace, RolesInference<Arc<Trace>>)>),
    /// Done: what [`Opening::step`] gives back next.
    Ready(Box<Ready>),
    Taken,
}

/// A trace read: the trace, its format, and what the reader noticed on the way.
#[derive(Debug, Clone)]
pub struct ReadTrace {
    pub trace: Arc<Trace>,
    pub format: Format,
    pub problems: Vec<FormatError>,
}

/// A file read to its end, for [`Project::take`].
#[derive(Debug, Clone)]
pub enum Ready {
    /// A trace (or why it did not load), with the roles inferred with no overrides.
    Trace {
        name: String,
        bytes: Arc<[u8]>,
        read: Result<ReadTrace, FormatError>,
        roles: Option<Arc<Roles>>,
    },
    /// A bundle or annotation file (or a trace the host wants read in one go): opened whole.
    Whole { name: String, bytes: Arc<[u8]> },
    /// A file that does not decompress.
    Failed(SessionError),
}

impl Ready {
    /// The file's name as shown.
    pub fn name(&self) -> &str {
        match self {
            Ready::Trace { name, .. } | Ready::Whole { name, .. } => name,
            Ready::Failed(e) => e.file(),
        }
    }
}

impl Opening {
    /// Starts opening file `name`: decompressed (gzip, zstd) and named without the ending, then
    /// sorted ([`kind_of`]); only a trace goes on in steps.
    pub fn new(name: &str, bytes: Arc<[u8]>, options: LoadOptions) -> Self {
        let (name, bytes) = match readable(name, &bytes, &options) {
            Ok((plain, std::borrow::Cow::Owned(b))) => (plain, Arc::from(b)),
            Ok((plain, std::borrow::Cow::Borrowed(_))) => (plain, bytes),
            Err(e) => return Self::ready(name, bytes, Ready::Failed(e)),
        };
        if kind_of(&bytes) == FileKind::Trace {
            let load = Box::new(StepLoad::new(bytes.clone(), options));
            Opening {
                name,
                bytes,
                stage: Stage::Parse(load),
            }
        } else {
            Self::whole(&name, bytes)
        }
    }

    /// A file to open in one go ([`Project::open`]), whatever it holds.
    pub fn whole(name: &str, bytes: Arc<[u8]>) -> Self {
        let whole = Ready::Whole {
            name: name.to_owned(),
            bytes: bytes.clone(),
        };
        Self::ready(name, bytes, whole)
    }

    fn ready(name: &str, bytes: Arc<[u8]>, ready: Ready) -> Self {
        Opening {
            name: name.to_owned(),
            bytes,
            stage: Stage::Ready(Box::new(ready)),
        }
    }

    /// The file's name as shown (without `.gz` / `.zst`).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Takes one short step; the file once it is read to its end (then `None` again).
    pub fn step(&mut self) -> Option<Ready> {
        match &mut self.stage {
            Stage::Parse(load) => {
                match load.step(STEP_BYTES)? {
                    Ok(loaded) => {
                        let read = ReadTrace {
                            trace: Arc::new(loaded.trace),
                            format: loaded.format,
                            problems: loaded.problems,
                        };
                        let inference = RolesInference::new(read.trace.clone());
                        self.stage = Stage::Roles(Box::new((read, inference)));
                    }
                    Err(e) => self.stage = Stage::Ready(Box::new(self.trace(Err(e), None))),
                }
                None
            }
            Stage::Roles(r) => {
                if !r.1.step(STEP_OPS) {
                    return None;
                }
                let Stage::Roles(r) = std::mem::replace(&mut self.stage, Stage::Taken) else {
                    return None;
                };
                let (read, inference) = *r;
                let roles = Arc::new(inference.finish(&RoleConfig::default()));
                Some(self.trace(Ok(read), Some(roles)))
            }
            Stage::Ready(_) => match std::mem::replace(&mut self.stage, Stage::Taken) {
                Stage::Ready(ready) => Some(*ready),
                _ => None,
            },
            Stage::Taken => None,
        }
    }

    fn trace(&self, read: Result<ReadTrace, FormatError>, roles: Option<Arc<Roles>>) -> Ready {
        Ready::Trace {
            name: self.name.clone(),
            bytes: self.bytes.clone(),
            read,
            roles,
        }
    }

    /// How far it is, from 0 to 1 (the parse is 0.9 of it, the roles the rest).
    #[allow(clippy::cast_precision_loss)] // a fraction for a progress bar
    pub fn progress(&self) -> f64 {
        match &self.stage {
            Stage::Parse(load) => 0.9 * load.progress(),
            Stage::Roles(r) => {
                let (done, all) = r.1.done();
                0.9 + 0.1 * done as f64 / all.max(1) as f64
            }
            Stage::Ready(_) | Stage::Taken => 1.0,
        }
    }

    /// What the next step works on: the parse's stages (`limits`, `parse`, `validate`,
    /// `index`, `failures`), `roles`, or `done`: for a host's timeline.
    pub fn stage(&self) -> &'static str {
        match &self.stage {
            Stage::Parse(load) => load.stage(),
            Stage::Roles(_) => "roles",
            Stage::Ready(_) | Stage::Taken => "done",
        }
    }
}

impl Project {
    /// Adds a file an [`Opening`] read: a trace with its inferred roles ([`Project::add`]), a
    /// bundle or annotation file opened whole ([`Project::open`]).
    ///
    /// # Errors
    /// [`SessionError::Format`] for a trace that did not load, or as [`Project::open`].
    pub fn take(&mut self, ready: Ready) -> Result<Added, SessionError> {
        match ready {
            Ready::Trace {
                name,
                bytes,
                read,
                roles,
            } => {
                let read = read.map_err(|error| SessionError::Format {
                    file: name.clone(),
                    error,
                })?;
                let i = self.add(&name, read.trace, read.format, bytes, roles)?;
                Ok(Added::Traces {
                    added: vec![i],
                    errors: Vec::new(),
                    settings: serde_json::Value::Null,
                })
            }
            Ready::Whole { name, bytes } => self.open(&name, &bytes),
            Ready::Failed(e) => Err(e),
        }
    }
}
