-- Judgments and overrides join the grading feed (V5's numbering in commit
-- order), so a grading app reads the grades changed since its cursor.
-- The feed serves only grades of runs the reader may pull; a run that
-- becomes pullable later brings its grades when it is pulled, so the
-- cursor never waits on a run that may never come.
ALTER TABLE judgments ADD COLUMN change_seq BIGINT;
UPDATE judgments SET change_seq = nextval('change_seq');
CREATE INDEX judgments_changes ON judgments (change_seq);
CREATE TRIGGER judgments_mark BEFORE INSERT OR UPDATE ON judgments
  FOR EACH ROW EXECUTE FUNCTION mark_change();
CREATE CONSTRAINT TRIGGER judgments_number AFTER INSERT OR UPDATE ON judgments
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW WHEN (NEW.change_seq IS NULL)
  EXECUTE FUNCTION number_change('id');

ALTER TABLE overrides ADD COLUMN change_seq BIGINT;
UPDATE overrides SET change_seq = nextval('change_seq');
CREATE INDEX overrides_changes ON overrides (change_seq);
CREATE TRIGGER overrides_mark BEFORE INSERT OR UPDATE ON overrides
  FOR EACH ROW EXECUTE FUNCTION mark_change();
CREATE CONSTRAINT TRIGGER overrides_number AFTER INSERT OR UPDATE ON overrides
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW WHEN (NEW.change_seq IS NULL)
  EXECUTE FUNCTION number_change('id');
