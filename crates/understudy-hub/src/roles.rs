//! Who a person is on the hub, and what each role may see and do.

use serde::{Deserialize, Serialize};

/// A person's one role.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// Records episodes; sees only their assignments and their own episodes.
    Expert,
    /// Reads every episode to annotate it.
    Annotator,
    /// Reads every episode and approves or rejects submitted ones.
    Reviewer,
    /// Reads and exports every episode.
    Engineer,
    /// Everything: people, tokens, worlds, assignments, reviews, export.
    Admin,
}

/// Every role, in the order they are listed to people.
pub const ROLES: [Role; 5] = [
    Role::Expert,
    Role::Annotator,
    Role::Reviewer,
    Role::Engineer,
    Role::Admin,
];

impl Role {
    /// The role as stored and typed (`expert`, `reviewer`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Expert => "expert",
            Role::Annotator => "annotator",
            Role::Reviewer => "reviewer",
            Role::Engineer => "engineer",
            Role::Admin => "admin",
        }
    }

    /// The inverse of [`Role::as_str`].
    pub fn parse(s: &str) -> Option<Role> {
        ROLES.into_iter().find(|r| r.as_str() == s)
    }

    /// Sees every episode (an expert sees only their own).
    pub fn reads_all(self) -> bool {
        self != Role::Expert
    }

    /// May push recorded episodes.
    pub fn pushes(self) -> bool {
        matches!(self, Role::Expert | Role::Admin)
    }

    /// May approve or reject.
    pub fn reviews(self) -> bool {
        matches!(self, Role::Reviewer | Role::Admin)
    }

    /// May push scores and judgments (grade episodes). Not experts: an
    /// expert does not grade their own work.
    pub fn grades(self) -> bool {
        !matches!(self, Role::Expert)
    }

    /// May save rubric versions on the hub.
    pub fn writes_rubrics(self) -> bool {
        matches!(self, Role::Annotator | Role::Engineer | Role::Admin)
    }

    /// Works on other people's episodes from the app (reviewing, grading,
    /// rubrics) without recording: the app pulls the hub's finished
    /// episodes into its store for its screens. Not admins: an admin's app
    /// pushes its store, and pulled episodes are others'.
    pub fn pulls_episodes(self) -> bool {
        self.reads_all() && !self.pushes()
    }

    /// May upload worlds (what experts record against).
    pub fn uploads_worlds(self) -> bool {
        matches!(self, Role::Engineer | Role::Admin)
    }
}

/// The accepted role names, for error messages.
pub fn names() -> String {
    ROLES.map(Role::as_str).join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roles_round_trip_and_limit_what_each_does() {
        for r in ROLES {
            assert_eq!(Role::parse(r.as_str()), Some(r));
        }
        assert_eq!(Role::parse("Admin"), None);
        assert!(!Role::Expert.reads_all());
        assert!(Role::Expert.pushes() && !Role::Expert.reviews() && !Role::Expert.uploads_worlds());
        assert!(Role::Reviewer.reviews() && !Role::Reviewer.pushes());
        assert!(Role::Engineer.uploads_worlds() && !Role::Engineer.reviews());
        assert!(!Role::Annotator.pushes() && !Role::Annotator.reviews());
        assert!(!Role::Expert.grades() && Role::Annotator.grades() && Role::Engineer.grades());
        assert!(!Role::Expert.writes_rubrics() && !Role::Reviewer.writes_rubrics());
        assert!(Role::Annotator.writes_rubrics() && Role::Admin.writes_rubrics());
        assert!(Role::Reviewer.pulls_episodes() && Role::Annotator.pulls_episodes());
        assert!(!Role::Expert.pulls_episodes() && !Role::Admin.pulls_episodes());
        assert_eq!(names(), "expert, annotator, reviewer, engineer, admin");
    }
}
