//! Variables and data-flow edges of the span-based formats, inferred in time order.
//!
//! A span sees what ended before it started. An input equal to an earlier value *is* that
//! variable; an input containing an earlier value (or one of its JSON string leaves, or a
//! memory / document id), at least [`MIN_LINK_CHARS`] long, reads it too (the latest such
//! value); a retrieved document reads the memory unit with its id; a memory write reads the
//! unit's previous version. Every output is a new variable version, so each variable has one
//! producer, and every edge runs from a variable that existed before its span started to one
//! the span made: the graph is acyclic by construction.

use std::borrow::Cow;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, HashSet};

use aho_corasick::{AhoCorasick, AhoCorasickKind};
use serde_json::{Map, Value};

use super::buffered::Buffer;
use super::spans::{json_in, Kind, Port, Span};
use crate::model::{pyrepr, GraphMeta, OpRecord};
use crate::util::hash::fnv1a;

mod records;

/// Shortest value (in bytes) that links two spans by content; shorter ones match by chance.
pub const MIN_LINK_CHARS: usize = 8;

/// How many of a pattern's latest owners are searched for the one it is the whole value of.
const OWNER_SCAN: usize = 64;

struct Var {
    ident: usize,
    text: String,
    category: String,
    created_ns: u64,
    session: String,
    filename: String,
    metadata: Map<String, Value>,
    patterns: Vec<u32>,
    /// Made by a span (an output, a document, a memory write), not taken in by one.
    produced: bool,
}

struct Ident {
    name: String,
    class: Option<String>,
    strong: bool,
    versions: Vec<usize>,
    /// The version made visible last (the one a reader sees).
    visible: Option<usize>,
}

struct Edge {
    from: usize,
    to: usize,
    op: usize,
    link: &'static str,
}

pub(super) struct Builder<'a> {
    meta: &'a GraphMeta,
    vars: Vec<Var>,
    idents: Vec<Ident>,
    by_key: HashMap<String, usize>,
    names: HashSet<String>,
    pending: BinaryHeap<Reverse<(u64, usize)>>,
    patterns: HashMap<String, u32>,
    /// Pattern ids of each value's atoms.
    text_patterns: HashMap<String, Vec<u32>>,
    matcher: Option<AhoCorasick>,
    owners: Vec<Vec<usize>>,
    ops: Vec<OpRecord>,
    op_ends: Vec<u64>,
    edges: Vec<Edge>,
    sentinel: Option<usize>,
    /// Values scopes took in that no op has read yet (messages an untraced buffer holds).
    buffer: Buffer,
}

/// Strings worth matching inside a value: the whole text and its JSON string leaves.
fn atoms_of(text: &str) -> Vec<String> {
    fn leaves(v: &Value, out: &mut Vec<String>, depth: usize) {
        match v {
            // A single word without digits ("assistant", "completed") is vocabulary, not data.
            Value::String(s)
                if s.len() >= MIN_LINK_CHARS
                    && s.bytes()
                        .any(|b| b.is_ascii_whitespace() || b.is_ascii_digit()) =>
            {
                out.push(s.clone());
            }
            Value::Array(a) if depth < 16 => a.iter().for_each(|x| leaves(x, out, depth + 1)),
            Value::Object(o) if depth < 16 => o.values().for_each(|x| leaves(x, out, depth + 1)),
            _ => {}
        }
    }
    let mut out = Vec::new();
    if text.len() >= MIN_LINK_CHARS {
        out.push(text.to_owned());
    }
    if let Some(v) = json_in(text) {
        leaves(&v, &mut out, 0);
    }
    out.into_iter().map(|a| squash(&a).into_owned()).collect()
}

/// How many distinct values may hold a one-word leaf before it counts as vocabulary.
const VOCABULARY_VALUES: usize = 3;

/// One-word JSON leaves (no whitespace) that recur in several distinct values, none of them the
/// whole value, and that no document or memory write uses as its id: a model name, an enum
/// value, a version. They say which API was called, not where data came from, so they link
/// nothing (a request naming `text-embedding-3-small` does not read the last reply naming it).
fn vocabulary<'t>(by_text: &'t [(&str, Vec<String>)], ids: &HashSet<&str>) -> HashSet<&'t str> {
    let mut seen: HashMap<&str, usize> = HashMap::new();
    let mut whole: HashSet<&str> = HashSet::new();
    for (_, atoms) in by_text {
        let mut atoms = atoms.iter();
        // The first atom is the whole text (texts too short to be one have no atoms at all).
        whole.extend(atoms.next().map(String::as_str));
        let distinct: HashSet<&str> = atoms
            .map(String::as_str)
            .filter(|a| !a.contains(char::is_whitespace))
            .collect();
        for a in distinct {
            *seen.entry(a).or_default() += 1;
        }
    }
    seen.into_iter()
        .filter(|&(a, n)| n >= VOCABULARY_VALUES && !whole.contains(a) && !ids.contains(a))
        .map(|(a, _)| a)
        .collect()
}

/// `text` with every run of whitespace made one space: a prompt that lays a value out on one
/// line still holds it.
fn squash(text: &str) -> Cow<'_, str> {
    let mut prev_space = false;
    let plain = text.chars().all(|c| {
        let bad = c.is_whitespace() && (c != ' ' || prev_space);
        prev_space = c.is_whitespace();
        !bad
    });
    if plain {
        return Cow::Borrowed(text);
    }
    Cow::Owned(text.split_whitespace().collect::<Vec<_>>().join(" "))
}

impl<'a> Builder<'a> {
    pub(super) fn new(spans: &[Span], meta: &'a GraphMeta) -> Builder<'a> {
        // Atoms of every value, computed once per distinct text, in file order (pattern ids
        // order the matches, so they must not depend on hashing).
        let mut seen: HashSet<&str> = HashSet::new();
        let mut by_text: Vec<(&str, Vec<String>)> = Vec::new();
        let mut ids: Vec<&str> = Vec::new();
        for s in spans {
            let texts = s
                .inputs
                .iter()
                .chain(&s.outputs)
                .chain(&s.documents)
                .map(|p| p.text.as_str());
            let writes = s
                .memory_writes
                .iter()
                .map(|w| w.text.as_deref().unwrap_or_default());
            for text in texts.chain(writes) {
                if seen.insert(text) {
                    by_text.push((text, atoms_of(text)));
                }
            }
            ids.extend(s.documents.iter().filter_map(|p| p.doc_id.as_deref()));
            ids.extend(s.memory_writes.iter().map(|w| w.id.as_str()));
        }
        let mut patterns: HashMap<String, u32> = HashMap::new();
        let mut list: Vec<String> = Vec::new();
        let mut intern = |a: &str| -> u32 {
            if let Some(&p) = patterns.get(a) {
                return p;
            }
            patterns.insert(a.to_owned(), list.len() as u32);
            list.push(a.to_owned());
            list.len() as u32 - 1
        };
        let id_set: HashSet<&str> = ids.iter().copied().collect();
        let vocabulary = vocabulary(&by_text, &id_set);
        let mut text_patterns = HashMap::new();
        for (text, found) in &by_text {
            let ps: Vec<u32> = found
                .iter()
                .enumerate()
                .filter(|(i, a)| *i == 0 || !vocabulary.contains(a.as_str()))
                .map(|(_, a)| intern(a))
                .collect();
            text_patterns.insert((*text).to_owned(), ps);
        }
        for id in ids.into_iter().filter(|id| id.len() >= MIN_LINK_CHARS) {
            intern(id);
        }
        // A non-contiguous NFA builds fastest; values are scanned once each, so a faster
        // automaton would not pay for its build.
        let matcher = AhoCorasick::builder()
            .kind(Some(AhoCorasickKind::NoncontiguousNFA))
            .build(&list)
            .ok();
        Builder {
            meta,
            vars: Vec::new(),
            idents: Vec::new(),
            by_key: HashMap::new(),
            names: HashSet::new(),
            pending: BinaryHeap::new(),
            owners: vec![Vec::new(); list.len()],
            patterns,
            text_patterns,
            matcher,
            ops: Vec::new(),
            op_ends: Vec::new(),
            edges: Vec::new(),
            sentinel: None,
            buffer: Buffer::default(),
        }
    }

    /// Makes visible every output of a span that ended at or before `ns`.
    pub(super) fn commit_until(&mut self, ns: u64) {
        while let Some(&Reverse((end, v))) = self.pending.peek() {
            if end > ns {
                break;
            }
            self.pending.pop();
            self.commit(v);
        }
    }

    fn commit(&mut self, v: usize) {
        self.idents[self.vars[v].ident].visible = Some(v);
        for &p in &self.vars[v].patterns {
            self.owners[p as usize].push(v);
        }
    }

    fn ident(&mut self, key: String, mut name: String, class: Option<&str>, strong: bool) -> usize {
        if let Some(&i) = self.by_key.get(&key) {
            let id = &mut self.idents[i];
            if strong && !id.strong {
                id.class = class.map(str::to_owned);
                id.strong = true;
            }
            return i;
        }
        if self.names.contains(&name) {
            let mut k = 2;
            while self.names.contains(&format!("{name}-{k}")) {
                k += 1;
            }
            name = format!("{name}-{k}");
        }
        self.names.insert(name.clone());
        self.idents.push(Ident {
            name,
            class: class.map(str::to_owned),
            strong,
            versions: Vec::new(),
            visible: None,
        });
        self.by_key.insert(key, self.idents.len() - 1);
        self.idents.len() - 1
    }

    fn new_var(
        &mut self,
        ident: usize,
        port: Option<&Port>,
        text: String,
        span: &Span,
        session: &str,
        (created_ns, made): (u64, bool),
    ) -> usize {
        let mut patterns = self.text_patterns.get(&text).cloned().unwrap_or_default();
        let id = port.and_then(|p| p.doc_id.as_ref());
        patterns.extend(id.and_then(|id| self.patterns.get(id)).copied());
        let v = self.vars.len();
        self.vars.push(Var {
            ident,
            text,
            category: port.map_or_else(|| "memory_entry".to_owned(), |p| p.category.clone()),
            created_ns,
            session: session.to_owned(),
            filename: span.filename.clone(),
            metadata: port.map(|p| p.metadata.clone()).unwrap_or_default(),
            patterns,
            produced: made,
        });
        self.idents[ident].versions.push(v);
        v
    }

    fn content_ident(&mut self, p: &Port) -> usize {
        let name = format!("str:{:016x}", fnv1a(p.text.as_bytes()));
        self.ident(format!("c\u{0}{}", p.text), name, Some(&p.class), p.strong)
    }

    fn latest_visible(&self, ident: usize) -> Option<usize> {
        self.idents[ident].visible
    }

    /// The variable an input port reads: the document with its id and value (a reranker's
    /// input), an equal visible value, or a new root variable.
    pub(super) fn input_var(&mut self, port: &Port, span: &Span, session: &str) -> usize {
        let doc = port.doc_id.as_ref().and_then(|id| {
            let ident = *self.by_key.get(&format!("d\u{0}{id}"))?;
            self.latest_visible(ident)
                .filter(|&v| self.vars[v].text == port.text)
        });
        if let Some(v) = doc {
            return v;
        }
        let ident = self.content_ident(port);
        if let Some(v) = self.latest_visible(ident) {
            return v;
        }
        let v = self.new_var(
            ident,
            Some(port),
            port.text.clone(),
            span,
            session,
            (span.start_ns, false),
        );
        self.commit(v);
        v
    }

    /// The latest visible variables whose values occur in `text`, or in it with JSON's escapes
    /// undone: `{"data": "a piece called \"Finding Freedom\""}` (or a prompt quoting a JSON
    /// list of facts) holds the fact it stores, quotes and all.
    fn contained(&self, text: &str) -> Vec<usize> {
        let Some(m) = &self.matcher else {
            return Vec::new();
        };
        let mut seen = HashSet::new();
        let mut out = Vec::new();
        let mut scan = |text: &str| {
            // (start, end, owner) of each match of a visible value.
            let hits: Vec<(usize, usize, usize)> = m
                .find_overlapping_iter(text)
                .filter_map(|h| Some((h.start(), h.end(), self.owner(h.pattern().as_usize())?)))
                .collect();
            // A value found only inside a longer value found at the same place is read through
            // it (a message inside the stored chunk a prompt quotes).
            let inside = |&(s, e, _): &(usize, usize, usize)| {
                hits.iter()
                    .any(|&(s2, e2, _)| s2 <= s && e <= e2 && e2 - s2 > e - s)
            };
            for hit in &hits {
                if !inside(hit) && seen.insert(hit.2) {
                    out.push(hit.2);
                }
            }
        };
        scan(squash(text).as_ref());
        if text.contains('\\') {
            scan(squash(&pyrepr::unescape(text)).as_ref());
        }
        out
    }

    /// The variable a matched pattern stands for: the latest visible one whose whole value it
    /// is (where the value came from), else the latest output holding it as a JSON leaf (a
    /// reply listing facts; a request that repeats them, such as an embedding call's input,
    /// took them from that reply), else the latest value holding it.
    fn owner(&self, p: usize) -> Option<usize> {
        let owners = self.owners.get(p)?;
        let recent = || owners.iter().rev().take(OWNER_SCAN);
        let whole = recent().find(|&&v| self.vars[v].patterns.first() == Some(&(p as u32)));
        whole
            .or_else(|| recent().find(|&&v| self.vars[v].produced))
            .or_else(|| owners.last())
            .copied()
    }

    /// The model reply a memory write carries out: the latest LLM output made after the unit's
    /// current version `prev` that names that version's whole value (Mem0's update prompt
    /// lists the unit under a short id of its own, so the write's id alone does not link them).
    fn decision_naming(
        &self,
        prev: usize,
        s: &Span,
        inputs: &[(usize, &'static str)],
    ) -> Option<(usize, &'static str)> {
        if s.kind == Kind::Llm {
            return None;
        }
        let p = *self.vars[prev].patterns.first()?;
        let d = self
            .owners
            .get(p as usize)?
            .iter()
            .rev()
            .take(OWNER_SCAN)
            .copied()
            .find(|&v| {
                v != prev
                    && self.vars[v].category == "llm_output"
                    && self.vars[v].created_ns >= self.vars[prev].created_ns
            })?;
        (!inputs.iter().any(|&(x, _)| x == d))
            .then_some((d, "inferred: the model reply naming the unit it writes"))
    }

    /// A value a scope (a span that is no op) took in. When no op reads it, the memory write
    /// that flushed the buffer it waited in reads it too ([`Buffer::flushed`]).
    pub(super) fn take_in(&mut self, port: &Port, span: &Span, session: &str) {
        let v = self.input_var(port, span, session);
        self.buffer.take_in(v, span.end_ns);
    }

    /// Adds the operation of span `s`: its inputs (read and inferred), its outputs, and edges.
    pub(super) fn op(&mut self, s: &Span, session: &str) {
        self.op_with(s, session, false);
    }

    /// An op made of a scope at its end (a tool call whose children did the work): it also
    /// reads the earlier values its outputs contain, what its children found.
    pub(super) fn scope_op(&mut self, s: &Span, session: &str) {
        self.op_with(s, session, true);
    }

    fn op_with(&mut self, s: &Span, session: &str, reads_outputs: bool) {
        let op = self.ops.len();
        let mut inputs = self.op_inputs(s, session);
        if reads_outputs {
            for port in &s.outputs {
                for c in self.contained(&port.text) {
                    if !inputs.iter().any(|&(x, _)| x == c) {
                        inputs.push((c, "inferred: its result holds this value"));
                    }
                }
            }
        }
        self.buffer.read(&inputs);
        if !s.memory_writes.is_empty() {
            let stored: Vec<&str> = s
                .memory_writes
                .iter()
                .filter_map(|w| w.text.as_deref())
                .collect();
            let vars = &self.vars;
            let flushed = self
                .buffer
                .flushed(&inputs, s.start_ns, &stored, |v| vars[v].text.as_str());
            inputs.extend(flushed);
        }
        let mut made = Vec::new();
        for port in &s.outputs {
            let ident = self.content_ident(port);
            made.push(self.new_var(
                ident,
                Some(port),
                port.text.clone(),
                s,
                session,
                (s.end_ns, true),
            ));
        }
        for port in &s.documents {
            let v = self.document(port, s, session, &inputs, op);
            made.push(v);
        }
        for w in &s.memory_writes {
            let ident = self.ident(
                format!("m\u{0}{}", w.id),
                format!("memory-unit-{}", w.id),
                None,
                false,
            );
            let prev = self.latest_visible(ident);
            let text = match &w.text {
                Some(t) => t.clone(),
                None => {
                    serde_json::json!({"id": w.id, "memory": null, "deleted": true}).to_string()
                }
            };
            let mut port = Port::new("memory_unit", "memory_entry", text.clone());
            port.doc_id = Some(w.id.clone());
            port.metadata
                .insert("event".into(), Value::String(w.event.clone()));
            let v = self.new_var(ident, Some(&port), text, s, session, (s.end_ns, true));
            if let Some((d, link)) = prev.and_then(|p| self.decision_naming(p, s, &inputs)) {
                self.edges.push(Edge {
                    from: d,
                    to: v,
                    op,
                    link,
                });
            }
            if let Some(p) = prev.filter(|p| !inputs.iter().any(|(x, _)| x == p)) {
                self.edges.push(Edge {
                    from: p,
                    to: v,
                    op,
                    link: "previous version of the memory unit",
                });
            }
            made.push(v);
        }
        if made.is_empty() {
            let port = Port::new("status", "status", s.status.clone());
            let ident = self.ident(
                format!("s\u{0}{}", s.id),
                format!("status-{}", s.id),
                Some("status"),
                false,
            );
            made.push(self.new_var(
                ident,
                Some(&port),
                s.status.clone(),
                s,
                session,
                (s.end_ns, true),
            ));
        }
        for &v in &made {
            for &(from, link) in &inputs {
                self.edges.push(Edge {
                    from,
                    to: v,
                    op,
                    link,
                });
            }
            self.pending.push(Reverse((s.end_ns, v)));
        }
        self.ops.push(self.op_record(s, session));
        self.op_ends.push(s.end_ns);
    }

    /// The variables span `s` reads: its inputs, and earlier values they contain.
    fn op_inputs(&mut self, s: &Span, session: &str) -> Vec<(usize, &'static str)> {
        let mut inputs: Vec<(usize, &'static str)> = Vec::new();
        let mut push = |v: usize, link| {
            if !inputs.iter().any(|&(x, _)| x == v) {
                inputs.push((v, link));
            }
        };
        // What the inputs contain is looked up before they become variables themselves: an
        // input is not where its own parts came from.
        let found: Vec<Vec<usize>> = s.inputs.iter().map(|p| self.contained(&p.text)).collect();
        for (port, found) in s.inputs.iter().zip(found) {
            let port = self.judged_turn(port, &found);
            push(self.input_var(&port, s, session), "");
            for c in found {
                push(c, "inferred: its value occurs in this input");
            }
        }
        if inputs.is_empty() {
            inputs.push((self.sentinel_var(s), ""));
        }
        inputs
    }

    /// The judged user turn (`Port::judged_turn`) is the question, unless it quotes a shorter
    /// value no span made and no prompt, memory or document is (the question as a scope took
    /// it in): then that value is the question and the turn the prompt wrapped around it.
    fn judged_turn<'p>(&mut self, port: &'p Port, found: &[usize]) -> Cow<'p, Port> {
        if !port.judged_turn {
            return Cow::Borrowed(port);
        }
        let quoted = found.iter().copied().find(|&v| {
            let var = &self.vars[v];
            !var.produced
                && var.text.trim().len() < port.text.trim().len()
                && !["prompt", "memory_entry", "retrieved_document"]
                    .contains(&var.category.as_str())
        });
        let mut port = port.clone();
        if let Some(v) = quoted {
            let id = &mut self.idents[self.vars[v].ident];
            id.class = Some("query".to_owned());
            id.strong = true;
        } else {
            "query".clone_into(&mut port.class);
            port.strong = true;
        }
        Cow::Owned(port)
    }
}
