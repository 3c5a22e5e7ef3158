-- A decision made in the app offline is sent when the hub is back, and a
-- send whose answer was lost is sent again. The app names each decision
-- with a request id of its own; the same id again answers the stored
-- review instead of storing a second one (or refusing the retry as "already
-- decided"), so a decision reaches the hub exactly once.
ALTER TABLE reviews ADD COLUMN request_id TEXT;
CREATE UNIQUE INDEX reviews_request_once ON reviews (request_id) WHERE request_id IS NOT NULL;
