-- Judgments and overrides join the grading feed (V5's numbering in commit
-- order), so a grading app reads the grades changed since its cursor.
-- The feed serves only grades of runs the reader may pull; a run that
-- becomes pullable later brings its grades when it is pulled, so the
-- cursor never waits on a run that may never come.
SELECT join_change_feed('judgments', 'id');
SELECT join_change_feed('overrides', 'id');
