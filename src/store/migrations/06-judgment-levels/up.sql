-- A judged criterion may be graded on a scale (`scale` in the rubric: a
-- few levels, each with a label and the points it earns). A judgment on
-- such a criterion records the level's label; NULL is a plain met / not
-- met grade.
ALTER TABLE judgments ADD COLUMN level TEXT;
