//! Where rewards come from. The server asks a [`RewardSource`] for every
//! step's reward and for the final reward when an episode ends, so rubric
//! scoring plugs in without the transports knowing about rubrics.
//!
//! Rewards are sparse by default: 0 on every step that does not end the
//! episode, and the rubric's score on the step that does.

use serde_json::{json, Map, Value};

use crate::recorder::Recorder;

/// The final reward and what to add to the last step's `info`.
#[derive(Debug, Clone, PartialEq)]
pub struct FinalReward {
    pub reward: f64,
    pub info: Map<String, Value>,
}

pub trait RewardSource: Send + Sync {
    /// Shown in `health`.
    fn name(&self) -> &str;

    /// The reward of a step that did not end the episode.
    fn step_reward(&self, _recorder: &Recorder) -> f64 {
        0.0
    }

    /// The reward of an episode that just ended (already submitted). An
    /// `Err` is reported in `info.reward_error` with a reward of 0; the
    /// step itself stands.
    fn final_reward(&self, recorder: &Recorder) -> Result<FinalReward, String>;
}

/// No rubric scoring: every reward is 0, and `info` says so, so a reward of
/// 0 is never mistaken for a failed episode.
#[derive(Debug, Default, Clone, Copy)]
pub struct NoRubric;

impl RewardSource for NoRubric {
    fn name(&self) -> &str {
        "none"
    }

    fn final_reward(&self, _recorder: &Recorder) -> Result<FinalReward, String> {
        let mut info = Map::new();
        info.insert("reward_source".into(), json!("none"));
        info.insert(
            "reward_note".into(),
            json!("no rubric scoring is available to this server; the reward is 0"),
        );
        Ok(FinalReward { reward: 0.0, info })
    }
}

/// The reward source this build offers: rubric scoring when the rubric
/// module provides it, otherwise [`NoRubric`].
pub fn default_source() -> Box<dyn RewardSource> {
    Box::new(NoRubric)
}
