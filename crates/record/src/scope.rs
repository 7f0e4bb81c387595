//! Sessions and operations as scopes: explicit parents (`session.op(…)`) or the current scope
//! of this thread (entered with [`Scope::enter`], [`Scope::in_scope`] or [`Instrument`]).

use std::cell::RefCell;
use std::future::Future;
use std::marker::PhantomData;
use std::pin::Pin;
use std::task::{Context, Poll};

use serde_json::Value;

use crate::state::Site;
use crate::{OpSpec, Recorder, Var, VarSpec};

#[derive(Clone, Debug, PartialEq, Eq)]
enum Kind {
    None,
    Session,
    Op { category: String },
}

/// A session or an operation. Cheap to clone; all clones name the same scope.
#[must_use = "a scope records nothing by itself: record variables and edges through it, or enter it"]
#[derive(Clone, Debug)]
pub struct Scope {
    rec: Recorder,
    kind: Kind,
    id: String,
    session_id: String,
}

thread_local! {
    static CURRENT: RefCell<Vec<(u64, Scope)>> = const { RefCell::new(Vec::new()) };
}

pub(crate) fn current(key: u64) -> Option<Scope> {
    if key == 0 {
        return None;
    }
    CURRENT.with(|c| {
        c.borrow()
            .iter()
            .rev()
            .find(|(k, _)| *k == key)
            .map(|(_, s)| s.clone())
    })
}

impl Scope {
    pub(crate) fn none() -> Self {
        Self {
            rec: Recorder::disabled(),
            kind: Kind::None,
            id: String::new(),
            session_id: String::new(),
        }
    }

    pub(crate) fn new_session(rec: Recorder, id: String) -> Self {
        Self {
            rec,
            kind: Kind::Session,
            session_id: id.clone(),
            id,
        }
    }

    pub(crate) fn new_op(rec: Recorder, id: String, session_id: String, category: String) -> Self {
        Self {
            rec,
            kind: Kind::Op { category },
            id,
            session_id,
        }
    }

    /// The session id or op id (empty when the recorder is disabled).
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The session this scope belongs to.
    pub fn session_id(&self) -> &str {
        &self.session_id
    }

    /// True for an operation.
    pub fn is_op(&self) -> bool {
        matches!(self.kind, Kind::Op { .. })
    }

    /// The recorder this scope writes to.
    pub fn recorder(&self) -> &Recorder {
        &self.rec
    }

    /// Makes this scope current on this thread until the guard drops.
    pub fn enter(&self) -> Entered {
        let key = self.rec.key();
        let depth = CURRENT.with(|c| {
            let mut c = c.borrow_mut();
            c.push((key, self.clone()));
            c.len()
        });
        Entered {
            scope: self.clone(),
            depth,
            _not_send: PhantomData,
        }
    }

    /// Enters this scope and keeps it in the guard (`tracing`'s `Span::entered`):
    /// `let op = session.op(spec).entered();` records through `op` and leaves on drop.
    pub fn entered(self) -> Entered {
        self.enter()
    }

    /// Runs `f` with this scope current.
    pub fn in_scope<T>(&self, f: impl FnOnce() -> T) -> T {
        let _g = self.enter();
        f()
    }

    // Kept alike: op, var and io each take the caller's site and skip a no-op scope in the
    // same two lines, so each stays `#[track_caller]` and reads alone.
    /// Starts an operation in this scope's session.
    #[track_caller]
    pub fn op(&self, spec: OpSpec) -> Scope {
        let site = Site::here();
        if matches!(self.kind, Kind::None) {
            return Scope::none();
        }
        self.rec.op_in(Some(self.session_id.clone()), spec, site)
    }

    /// Records a variable in this scope's session.
    #[track_caller]
    pub fn var(&self, spec: VarSpec) -> Var {
        let site = Site::here();
        if matches!(self.kind, Kind::None) {
            return Var::default();
        }
        self.rec.var_in(Some(self.session_id.clone()), spec, site)
    }

    /// Records that this operation turned every input into every output (edges carry
    /// `comment`). An empty side is the sentinel variable `COMMENT:NONE@1`.
    #[track_caller]
    pub fn io(&self, inputs: &[&Var], outputs: &[&Var], comment: &str) {
        let site = Site::here();
        let Kind::Op { category } = &self.kind else {
            return;
        };
        let Some((mut s, now)) = self.rec_lock() else {
            return;
        };
        let none = Var {
            full_name: crate::state::NONE_VAR.to_owned(),
            version: 1,
        };
        if inputs.is_empty() || outputs.is_empty() {
            s.ensure_sentinels(&now, true, false);
        }
        let ins: Vec<&Var> = if inputs.is_empty() {
            vec![&none]
        } else {
            inputs.to_vec()
        };
        let outs: Vec<&Var> = if outputs.is_empty() {
            vec![&none]
        } else {
            outputs.to_vec()
        };
        for o in &outs {
            for i in &ins {
                self.edge(&mut s, (&now, site), category, (i, o), comment);
            }
        }
    }

    /// One edge made by this operation; `category` defaults to the operation's.
    #[track_caller]
    pub fn link(&self, source: &Var, target: &Var, comment: &str) {
        self.link_at(source, target, None, comment, Site::here());
    }

    /// One edge with its own category (MemBase marks some edges `llm_response` or `operation`).
    #[track_caller]
    pub fn link_as(&self, source: &Var, target: &Var, category: &str, comment: &str) {
        self.link_at(source, target, Some(category), comment, Site::here());
    }

    pub(crate) fn link_at(
        &self,
        source: &Var,
        target: &Var,
        category: Option<&str>,
        comment: &str,
        site: Site,
    ) {
        let Kind::Op { category: own } = &self.kind else {
            return;
        };
        let Some((mut s, now)) = self.rec_lock() else {
            return;
        };
        let category = category.unwrap_or(own);
        self.edge(&mut s, (&now, site), category, (source, target), comment);
    }

    /// Writes the edge `source → target` made by this operation at `now` from `site`.
    fn edge(
        &self,
        s: &mut crate::state::State,
        (now, site): (&str, Site),
        category: &str,
        (source, target): (&Var, &Var),
        comment: &str,
    ) {
        s.push_edge(
            now,
            site,
            &self.id,
            &self.session_id,
            category,
            &source.full_node_id(),
            &target.full_node_id(),
            comment,
        );
    }

    /// A mutation: a new version of `prev` holding `value` (same labels, same rendering as
    /// given), with edges `prev → new` and `input → new` for every input.
    #[track_caller]
    pub fn mutate(
        &self,
        prev: &Var,
        value: &Value,
        render: crate::Render,
        inputs: &[&Var],
        comment: &str,
    ) -> Var {
        let site = Site::here();
        let Kind::Op { category } = &self.kind else {
            return Var::default();
        };
        let Some((mut s, now)) = self.rec_lock() else {
            return Var::default();
        };
        let Some(latest) = s.latest.get(prev.full_name()).cloned() else {
            return Var::default();
        };
        let name = match &latest.class_name {
            Some(c) => prev
                .full_name()
                .strip_prefix(c.as_str())
                .and_then(|n| n.strip_prefix(':'))
                .unwrap_or(prev.full_name())
                .to_owned(),
            None => prev.full_name().to_owned(),
        };
        let text = crate::render(value, render);
        let version = latest.version + 1;
        let node = crate::state::NodeSpec {
            name: &name,
            class_name: latest.class_name.as_deref(),
            value: &text,
            comment: &latest.comment,
            category: &latest.category,
            metadata: serde_json::json!({}),
        };
        s.push_node(&now, site, &node, version, &self.session_id);
        let new = Var {
            full_name: prev.full_name().to_owned(),
            version,
        };
        for source in std::iter::once(prev).chain(inputs.iter().copied()) {
            self.edge(&mut s, (&now, site), category, (source, &new), comment);
        }
        new
    }

    fn rec_lock(&self) -> Option<(std::sync::MutexGuard<'_, crate::state::State>, String)> {
        let inner = self.rec.inner.as_ref()?;
        let guard = inner
            .state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        Some((guard, crate::format_timestamp(inner.clock.now_ms())))
    }
}

/// While alive, its scope is current on this thread. Dropping it leaves the scope (and any
/// scope entered after it and not yet left).
#[must_use = "the scope is left as soon as this guard drops"]
#[derive(Debug)]
pub struct Entered {
    scope: Scope,
    depth: usize,
    _not_send: PhantomData<*const ()>,
}

impl std::ops::Deref for Entered {
    type Target = Scope;
    fn deref(&self) -> &Scope {
        &self.scope
    }
}

impl Drop for Entered {
    fn drop(&mut self) {
        CURRENT.with(|c| c.borrow_mut().truncate(self.depth.saturating_sub(1)));
    }
}

/// Runs a future with a scope current around every poll (like `tracing::Instrument`).
pub trait Instrument: Future + Sized {
    /// Wraps the future so `scope` is current whenever it runs.
    fn instrument(self, scope: Scope) -> Instrumented<Self> {
        Instrumented {
            inner: Box::pin(self),
            scope,
        }
    }
}

impl<F: Future> Instrument for F {}

/// A future wrapped by [`Instrument::instrument`].
#[must_use = "futures do nothing unless polled"]
pub struct Instrumented<F> {
    inner: Pin<Box<F>>,
    scope: Scope,
}

impl<F: Future> Future for Instrumented<F> {
    type Output = F::Output;
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let this = &mut *self;
        let _g = this.scope.enter();
        this.inner.as_mut().poll(cx)
    }
}
