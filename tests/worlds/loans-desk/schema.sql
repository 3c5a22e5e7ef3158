-- Riverside Library loans desk. Money is INTEGER cents; dates are YYYY-MM-DD.
CREATE TABLE members (
  id          TEXT PRIMARY KEY,
  name        TEXT NOT NULL,
  email       TEXT NOT NULL,
  phone       TEXT NOT NULL,
  fines_cents INTEGER NOT NULL CHECK (fines_cents >= 0)
);

CREATE TABLE books (
  id     TEXT PRIMARY KEY,
  title  TEXT NOT NULL,
  author TEXT NOT NULL
);

CREATE TABLE loans (
  id        TEXT PRIMARY KEY,
  member_id TEXT NOT NULL REFERENCES members(id),
  book_id   TEXT NOT NULL REFERENCES books(id),
  due_on    TEXT NOT NULL,
  renewals  INTEGER NOT NULL CHECK (renewals BETWEEN 0 AND 2),
  status    TEXT NOT NULL CHECK (status IN ('out', 'returned'))
);
