//! The optimize loop's setup, checked once for every host: the train / held-out split over the
//! loaded conversations, the rounds and the retrieval depth.

use serde::{Deserialize, Serialize};

/// What the optimize setup chose.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Setup {
    pub rounds: usize,
    /// Conversation positions (0-based) the prompts are tuned on.
    pub train: Vec<usize>,
    /// Conversation positions (0-based) only measured, never tuned on.
    pub heldout: Vec<usize>,
    /// Units retrieved per question at the start.
    pub top_k: usize,
}

/// What is wrong with a [`Setup`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SetupError {
    #[error("choose at least one training conversation")]
    NoTrain,
    #[error("conversation {n} does not exist: {count} are loaded (0 to {})", count.saturating_sub(1))]
    Missing { n: usize, count: usize },
    #[error("conversation {n} is both train and held-out: pick one")]
    Overlap { n: usize },
    #[error("rounds: 1 to 10")]
    Rounds,
    #[error("top_k: 1 to 50")]
    TopK,
}

impl Setup {
    /// Checks a train / held-out split against `count` loaded conversations: some training
    /// conversation, every position loaded, none in both (the one check a host with its own
    /// bounds on rounds and `top_k`, as the CLI, needs).
    ///
    /// # Errors
    /// [`SetupError::NoTrain`], [`SetupError::Missing`], [`SetupError::Overlap`].
    pub fn check_split(train: &[usize], heldout: &[usize], count: usize) -> Result<(), SetupError> {
        if train.is_empty() {
            return Err(SetupError::NoTrain);
        }
        if let Some(&n) = train.iter().chain(heldout).find(|&&n| n >= count) {
            return Err(SetupError::Missing { n, count });
        }
        if let Some(&n) = train.iter().find(|n| heldout.contains(n)) {
            return Err(SetupError::Overlap { n });
        }
        Ok(())
    }

    /// Checks the split against `count` loaded conversations.
    ///
    /// # Errors
    /// The first problem, as a sentence saying what to change.
    pub fn check(&self, count: usize) -> Result<(), SetupError> {
        Setup::check_split(&self.train, &self.heldout, count)?;
        if !(1..=10).contains(&self.rounds) {
            return Err(SetupError::Rounds);
        }
        if !(1..=50).contains(&self.top_k) {
            return Err(SetupError::TopK);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn setup(train: &[usize], heldout: &[usize]) -> Setup {
        Setup {
            rounds: 2,
            train: train.to_vec(),
            heldout: heldout.to_vec(),
            top_k: 10,
        }
    }

    #[test]
    fn a_conversation_both_train_and_held_out_is_refused() {
        let e = setup(&[0, 2], &[2]).check(3).unwrap_err();
        assert_eq!(e, SetupError::Overlap { n: 2 });
        assert!(e.to_string().contains("both train and held-out"), "{e}");
        assert_eq!(setup(&[0], &[1]).check(2), Ok(()));
    }

    #[test]
    fn missing_conversations_rounds_and_depth_are_each_said() {
        assert_eq!(
            setup(&[0], &[4]).check(2).unwrap_err().to_string(),
            "conversation 4 does not exist: 2 are loaded (0 to 1)"
        );
        assert_eq!(setup(&[], &[1]).check(2), Err(SetupError::NoTrain));
        let mut s = setup(&[0], &[]);
        s.rounds = 0;
        assert_eq!(s.check(1), Err(SetupError::Rounds));
        s.rounds = 1;
        s.top_k = 99;
        assert_eq!(s.check(1), Err(SetupError::TopK));
    }
}
