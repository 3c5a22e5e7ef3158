//! Where rewards come from. The server asks a [`RewardSource`] for every
//! step's reward and for the final reward when an episode ends, so rubric
//! scoring plugs in without the transports knowing about rubrics.
//!
//! Rewards are sparse by default: 0 on every step that does not end the
//! episode, and the rubric's score on the step that does.

use std::sync::Arc;

use serde_json::{json, Map, Value};

use understudy::action::Action;
use understudy::observation::Observation;
use understudy::recorder::Recorder;
use understudy::rubric::{self, Rubric};
use understudy::store::{ScoreRecord, Store};

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

/// Scores an ended episode with its task's rubric (`rubrics/<task>.toml`
/// in the world folder) and stores the score with the trajectory, as
/// `understudy score` would. A task without a rubric gets 0, said so in
/// `info`.
///
/// Judged criteria nobody has graded yet cannot count: the reward is then
/// the lowest value the score can still take (`score.range[0]`), and
/// `info.score.pending` lists them; grading them later moves the stored
/// score, not the reward already returned.
pub struct RubricReward {
    store: Arc<Store>,
}

impl RubricReward {
    pub fn new(store: Arc<Store>) -> RubricReward {
        RubricReward { store }
    }
}

impl RewardSource for RubricReward {
    fn name(&self) -> &str {
        "rubric"
    }

    fn final_reward(&self, recorder: &Recorder) -> Result<FinalReward, String> {
        let episode = recorder.episode();
        let task = episode.task_id();
        let rubric = Rubric::load(episode.world(), task)
            .map_err(|e| format!("the rubric of task `{task}` does not load: {e}"))?;
        let Some(rubric) = rubric else {
            let mut info = Map::new();
            info.insert("reward_source".into(), json!("none"));
            info.insert(
                "reward_note".into(),
                json!(format!(
                    "task `{task}` has no rubric ({}/{task}.toml); the reward is 0",
                    rubric::RUBRICS_DIR
                )),
            );
            return Ok(FinalReward { reward: 0.0, info });
        };
        let kept: Vec<_> = recorder.trajectory().kept_steps().collect();
        let actions: Vec<Action> = kept.iter().map(|s| s.action.clone()).collect();
        let observations: Vec<Observation> = kept.iter().map(|s| s.observation.clone()).collect();
        let mut score = rubric::score_episode(&rubric, episode, &actions, &observations);
        score.episode_id = Some(recorder.record().id.clone());
        let reward = score.value.unwrap_or(score.range[0]);
        let saved = match ScoreRecord::try_from(&score).and_then(|r| self.store.save_scores(&[r])) {
            Ok(_) => true,
            Err(e) => {
                tracing::warn!(episode = %recorder.record().id, "cannot store the score: {e}");
                false
            }
        };
        // The episode id is in the response already; keeping it out of
        // `info` keeps seeded runs' infos equal.
        score.episode_id = None;
        let mut info = Map::new();
        info.insert("reward_source".into(), json!("rubric"));
        info.insert(
            "score".into(),
            serde_json::to_value(&score).map_err(|e| e.to_string())?,
        );
        info.insert("score_saved".into(), json!(saved));
        Ok(FinalReward { reward, info })
    }
}

/// The reward source this build offers: the task's rubric, scored at the
/// end of the episode.
pub fn default_source(store: Arc<Store>) -> Box<dyn RewardSource> {
    Box::new(RubricReward::new(store))
}
