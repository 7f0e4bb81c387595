//! LoCoMo conversations (one file each: `speaker_a`, `speaker_b`, `session_N`,
//! `session_N_date_time`, `qa`) read into the reference memory system's input.

use serde_json::Value;

use super::text::{locomo_timestamp, Date};
use super::MemsysError;
use memtrace::util::json::str_list;

/// One message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Turn {
    pub speaker: String,
    pub dia_id: String,
    /// The text, plus `[shares a photo of …]` when the turn carries a described photo.
    pub text: String,
}

/// One conversation session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Session {
    /// `N` of `session_N`, from 1.
    pub number: usize,
    /// As written, e.g. `1:56 pm on 8 May, 2023`.
    pub date_time: String,
    /// ISO form, e.g. `2023-05-08T13:56:00`.
    pub timestamp: String,
    pub turns: Vec<Turn>,
}

impl Session {
    /// The session's day.
    pub fn date(&self) -> Option<Date> {
        Date::parse(&self.timestamp)
    }
}

/// One question with its gold answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Question {
    /// `locomo-qa-<n>-<i>` (MemBase's naming), `i` from 1 in file order.
    pub id: String,
    pub text: String,
    pub answer: String,
    /// `dia_id`s of the turns holding the answer.
    pub evidence: Vec<String>,
    /// 1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop, 5 adversarial.
    pub category: u8,
}

/// A whole conversation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Conversation {
    /// MemBase's sample index `n`: user `locomo-<n>`, messages `U<n>:<dia_id>`.
    pub index: usize,
    /// The user id of the trace (`locomo-<n>` for LoCoMo).
    pub user: String,
    /// Where the conversation comes from (`locomo`, or `memtrace-demo`).
    pub dataset: String,
    pub speaker_a: String,
    pub speaker_b: String,
    pub sessions: Vec<Session>,
    pub questions: Vec<Question>,
}

/// LoCoMo-10 conversation numbers in MemBase's order (`conv-26` is `locomo-1`).
pub const LOCOMO10: [u32; 10] = [26, 30, 41, 42, 43, 44, 47, 48, 49, 50];

/// Conversations from a file's bytes: one LoCoMo conversation object or a list of them,
/// numbered from 1 in file order (what the page and the CLI read).
///
/// # Errors
/// [`MemsysError::Input`]: not JSON (with its line and column), an empty list, or the
/// conversation and field that is malformed.
pub fn parse_conversations(bytes: &[u8]) -> Result<Vec<Conversation>, MemsysError> {
    let v: Value = serde_json::from_slice(bytes).map_err(|e| {
        MemsysError::Input(format!(
            "not JSON at line {} column {}: {e}; give LoCoMo conversations (one object or a list)",
            e.line(),
            e.column()
        ))
    })?;
    let list = match v {
        Value::Array(list) => list,
        v => vec![v],
    };
    if list.is_empty() {
        return Err(MemsysError::Input("the list holds no conversation".into()));
    }
    list.iter()
        .enumerate()
        .map(|(i, c)| Conversation::from_json(c, i + 1))
        .collect()
}

/// MemBase's sample index for a file named after its conversation number (`26.json` → 1),
/// else `fallback`.
pub fn sample_index(file_stem: &str, fallback: usize) -> usize {
    let n = file_stem.trim_start_matches("conv-").parse::<u32>().ok();
    n.and_then(|n| LOCOMO10.iter().position(|&c| c == n))
        .map_or(fallback, |i| i + 1)
}

impl Conversation {
    /// The user id of the trace (MemBase gives LoCoMo sample `n` the id `locomo-<n>`).
    pub fn user_id(&self) -> String {
        self.user.clone()
    }

    /// Message name of a turn, `U<n>:<dia_id>`.
    pub fn message_name(&self, dia_id: &str) -> String {
        format!("U{}:{dia_id}", self.index)
    }

    /// Reads a LoCoMo conversation (a `conversation` wrapper object is accepted too).
    ///
    /// # Errors
    /// [`MemsysError::Input`] naming the missing or malformed field.
    pub fn from_json(v: &Value, index: usize) -> Result<Conversation, MemsysError> {
        let c = v.get("conversation").filter(|c| c.is_object()).unwrap_or(v);
        let bad = |what: &str| MemsysError::Input(format!("LoCoMo conversation {index}: {what}"));
        let name = |k: &str| {
            c.get(k)
                .and_then(Value::as_str)
                .map(str::to_owned)
                .ok_or_else(|| bad(&format!("`{k}` (a string) is missing")))
        };
        let (speaker_a, speaker_b) = (name("speaker_a")?, name("speaker_b")?);
        let mut sessions = Vec::new();
        for number in 1.. {
            let Some(turns) = c.get(format!("session_{number}")).and_then(Value::as_array) else {
                if c.get(format!("session_{number}_date_time")).is_some() {
                    continue;
                }
                break;
            };
            let date_time = c
                .get(format!("session_{number}_date_time"))
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_owned();
            let timestamp = locomo_timestamp(&date_time).ok_or_else(|| {
                bad(&format!(
                    "session_{number}_date_time {date_time:?} is not like `1:56 pm on 8 May, 2023`"
                ))
            })?;
            let mut list = Vec::new();
            for (i, t) in turns.iter().enumerate() {
                let field = |k: &str| t.get(k).and_then(Value::as_str);
                let (Some(speaker), Some(dia_id)) = (field("speaker"), field("dia_id")) else {
                    return Err(bad(&format!(
                        "session_{number}[{i}] needs `speaker` and `dia_id`"
                    )));
                };
                let mut text = field("text").unwrap_or("").to_owned();
                if let Some(caption) = field("blip_caption") {
                    let joined = format!("{text} [shares {caption}]");
                    joined.trim().clone_into(&mut text);
                }
                list.push(Turn {
                    speaker: speaker.to_owned(),
                    dia_id: dia_id.to_owned(),
                    text,
                });
            }
            sessions.push(Session {
                number,
                date_time,
                timestamp,
                turns: list,
            });
            if number > 1000 {
                break;
            }
        }
        if sessions.is_empty() {
            return Err(bad("no `session_1` list of turns"));
        }
        let mut questions = Vec::new();
        for (i, q) in v
            .get("qa")
            .or_else(|| c.get("qa"))
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .enumerate()
        {
            let answer = match q.get("answer") {
                Some(Value::String(s)) => s.clone(),
                Some(Value::Number(n)) => n.to_string(),
                _ => continue,
            };
            let evidence = str_list(q.get("evidence").unwrap_or(&Value::Null));
            questions.push(Question {
                id: format!("locomo-qa-{index}-{}", i + 1),
                text: q
                    .get("question")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_owned(),
                answer,
                evidence,
                category: q.get("category").and_then(Value::as_u64).unwrap_or(0) as u8,
            });
        }
        Ok(Conversation {
            user: format!("locomo-{index}"),
            dataset: "locomo".into(),
            index,
            speaker_a,
            speaker_b,
            sessions,
            questions,
        })
    }

    /// The sessions `from..to` (numbers from 1, `to` exclusive) as a conversation of their
    /// own, with the questions whose evidence lies entirely inside them.
    #[must_use]
    pub fn window(&self, from: usize, to: usize) -> Conversation {
        let sessions: Vec<Session> = self
            .sessions
            .iter()
            .filter(|s| s.number >= from && s.number < to)
            .cloned()
            .collect();
        let ids: std::collections::BTreeSet<&str> = sessions
            .iter()
            .flat_map(|s| s.turns.iter().map(|t| t.dia_id.as_str()))
            .collect();
        let questions = self
            .questions
            .iter()
            .filter(|q| {
                !q.evidence.is_empty() && q.evidence.iter().all(|e| ids.contains(e.as_str()))
            })
            .cloned()
            .collect();
        Conversation {
            sessions,
            questions,
            ..self.clone()
        }
    }

    /// Number of messages.
    pub fn message_count(&self) -> usize {
        self.sessions.iter().map(|s| s.turns.len()).sum()
    }
}
