-- The feed of runs an app pulls: every insert or update of an episode
-- (pushed, submitted, reviewed) gives it a new place in the change feed
-- (V5's numbering in commit order), so a sync reads the runs changed since
-- its cursor instead of the whole episode list.
ALTER TABLE episodes ADD COLUMN change_seq BIGINT;
-- The episodes already here take their places now.
UPDATE episodes SET change_seq = nextval('change_seq');
CREATE INDEX episodes_changes ON episodes (change_seq);
CREATE TRIGGER episodes_mark BEFORE INSERT OR UPDATE ON episodes
  FOR EACH ROW EXECUTE FUNCTION mark_change();
CREATE CONSTRAINT TRIGGER episodes_number AFTER INSERT OR UPDATE ON episodes
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW WHEN (NEW.change_seq IS NULL)
  EXECUTE FUNCTION number_change('id');
