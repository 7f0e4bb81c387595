//! User failure rules: `span=NAME output~REGEX` (`--failed-if` on the command line, the same
//! text in the page's settings), and questions the user marks as failed.

use std::fmt;
use std::str::FromStr;

use regex::Regex;
use serde::{Deserialize, Serialize};

/// "A question failed when an op named `op` wrote an output matching `output`."
#[derive(Debug, Clone)]
pub struct FailRule {
    /// The op (span) name, matched exactly; `None` = any op.
    pub op: Option<String>,
    /// Matched against the text of each output the op wrote.
    pub output: Regex,
    /// The rule as the user wrote it.
    pub text: String,
}

impl PartialEq for FailRule {
    fn eq(&self, other: &Self) -> bool {
        self.text == other.text
    }
}

impl fmt::Display for FailRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl FailRule {
    /// Parses rules as a user lists them, one per entry: the rules that parse, and each other
    /// one's index in `texts` with why not. Blank entries are skipped.
    pub fn parse_all(texts: &[String]) -> (Vec<FailRule>, Vec<(usize, RuleError)>) {
        let (mut good, mut bad) = (Vec::new(), Vec::new());
        for (index, text) in texts.iter().enumerate() {
            if text.trim().is_empty() {
                continue;
            }
            match text.parse() {
                Ok(r) => good.push(r),
                Err(e) => bad.push((index, e)),
            }
        }
        (good, bad)
    }

    /// [`FailRule::parse_all`] for a caller that refuses a list holding a bad rule: the rules,
    /// or why the first bad one does not parse. Blank entries are skipped.
    ///
    /// # Errors
    /// The first rule that does not parse.
    pub fn parse_list(texts: &[String]) -> Result<Vec<FailRule>, RuleError> {
        let (good, bad) = FailRule::parse_all(texts);
        bad.into_iter().next().map_or(Ok(good), |(_, e)| Err(e))
    }
}

/// A rule that does not parse: what is wrong, where (a character offset into the rule), and
/// what to write instead.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RuleError {
    pub rule: String,
    /// 0-based character offset of the problem.
    pub at: usize,
    pub message: String,
}

impl fmt::Display for RuleError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "failure rule {:?}, at character {}: {}. A rule reads `span=NAME output~REGEX` \
             (or `op=NAME output~REGEX`, or only `output~REGEX`); quote a value with spaces: \
             span='my judge' output~'^WRONG$'",
            self.rule,
            self.at + 1,
            self.message
        )
    }
}

impl std::error::Error for RuleError {}

/// A question the user declares failed, with the gold answer if they know it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Mark {
    /// `full_node_id` of the question (query) variable.
    pub query_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gold: Option<String>,
}

impl FromStr for FailRule {
    type Err = RuleError;

    /// Parses `span=NAME output~REGEX`: clauses separated by spaces, in any order; a value may
    /// be quoted with `'` or `"`; an unquoted `output~` value runs to the end of the rule.
    fn from_str(text: &str) -> Result<FailRule, RuleError> {
        let err = |at: usize, message: String| RuleError {
            rule: text.to_owned(),
            at,
            message,
        };
        let chars: Vec<char> = text.chars().collect();
        let mut i = 0;
        let (mut op, mut output): (Option<String>, Option<(usize, String)>) = (None, None);
        loop {
            while chars.get(i).is_some_and(|c| c.is_whitespace()) {
                i += 1;
            }
            if i >= chars.len() {
                break;
            }
            let key_at = i;
            while chars
                .get(i)
                .is_some_and(|c| c.is_alphanumeric() || *c == '_')
            {
                i += 1;
            }
            let key: String = chars[key_at..i].iter().collect();
            let Some(&sep) = chars.get(i) else {
                return Err(err(
                    key_at,
                    format!("{key:?} has no value; write {key}=… or output~…"),
                ));
            };
            let expected = match key.as_str() {
                "span" | "op" => '=',
                "output" => '~',
                "" => return Err(err(key_at, format!("expected a key, found {sep:?}"))),
                other => {
                    return Err(err(
                        key_at,
                        format!("unknown key {other:?}; the keys are span, op and output"),
                    ))
                }
            };
            if sep != expected {
                return Err(err(
                    i,
                    format!("{key} takes {expected:?}, found {sep:?}; write {key}{expected}…"),
                ));
            }
            i += 1;
            let value_at = i;
            let value = match chars.get(i) {
                Some(&q @ ('\'' | '"')) => {
                    let close = chars[i + 1..]
                        .iter()
                        .position(|&c| c == q)
                        .ok_or_else(|| err(i, format!("the quote {q} is never closed")))?;
                    let v: String = chars[i + 1..i + 1 + close].iter().collect();
                    i += close + 2;
                    v
                }
                _ if key == "output" => {
                    let v: String = chars[i..].iter().collect();
                    i = chars.len();
                    v.trim_end().to_owned()
                }
                _ => {
                    while chars.get(i).is_some_and(|c| !c.is_whitespace()) {
                        i += 1;
                    }
                    chars[value_at..i].iter().collect()
                }
            };
            if value.is_empty() {
                return Err(err(value_at, format!("{key} has an empty value")));
            }
            if key == "output" {
                if output.is_some() {
                    return Err(err(key_at, "output is given twice".into()));
                }
                output = Some((value_at, value));
            } else {
                if op.is_some() {
                    return Err(err(key_at, "the op name is given twice".into()));
                }
                op = Some(value);
            }
        }
        let Some((at, pattern)) = output else {
            return Err(err(
                chars.len(),
                "a rule needs output~REGEX (what a failed question's output looks like)".into(),
            ));
        };
        let output = Regex::new(&pattern).map_err(|e| {
            let first = e.to_string();
            let last = first.lines().last().unwrap_or_default().to_owned();
            err(at, format!("output~{pattern:?} is not a regex: {last}"))
        })?;
        Ok(FailRule {
            op,
            output,
            text: text.trim().to_owned(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_clauses_and_quotes() {
        let r: FailRule = "span=llm_judge output~WRONG".parse().unwrap();
        assert_eq!(r.op.as_deref(), Some("llm_judge"));
        assert!(r.output.is_match("{\"label\": \"WRONG\"}"));
        let r: FailRule = "output~I do not know".parse().unwrap();
        assert_eq!((r.op, r.output.as_str()), (None, "I do not know"));
        let r: FailRule = "output~'^WRONG$' op=\"my judge\"".parse().unwrap();
        assert_eq!(r.op.as_deref(), Some("my judge"));
    }

    #[test]
    fn parse_all_skips_blanks_and_names_each_bad_rule_by_its_index() {
        let texts: Vec<String> = ["output~WRONG", "  ", "span=", "op=j output~x"]
            .map(String::from)
            .into();
        let (good, bad) = FailRule::parse_all(&texts);
        let good: Vec<&str> = good.iter().map(|r| r.text.as_str()).collect();
        assert_eq!(good, ["output~WRONG", "op=j output~x"]);
        assert_eq!(bad.len(), 1);
        assert_eq!((bad[0].0, bad[0].1.rule.as_str()), (2, "span="));
        assert_eq!(FailRule::parse_list(&texts).unwrap_err().rule, "span=");
        let blanks_only = ["", " \t"].map(String::from);
        assert_eq!(FailRule::parse_list(&blanks_only).unwrap(), []);
    }
}
