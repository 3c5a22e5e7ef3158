-- The feed of runs an app pulls: every insert or update of an episode
-- (pushed, submitted, reviewed) gives it a new place in the change feed
-- (V5's numbering in commit order), so a sync reads the runs changed since
-- its cursor instead of the whole episode list. The episodes already here
-- take their places now.
SELECT join_change_feed('episodes', 'id');
