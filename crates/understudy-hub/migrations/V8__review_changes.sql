-- The feed of decisions an app pulls: a review gets its place in the
-- change feed (V5's numbering in commit order) as its transaction
-- commits, so a sync reads the decisions made since its cursor, and one
-- whose transaction commits after a later one was read is not passed
-- over, as it could be when decisions were read after the highest row id
-- seen. The reviews already here take their places now.
SELECT join_change_feed('reviews', 'id');
