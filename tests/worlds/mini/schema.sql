CREATE TABLE accounts (
  id TEXT PRIMARY KEY,
  owner TEXT NOT NULL,
  balance REAL NOT NULL CHECK (balance >= 0),
  frozen BOOLEAN NOT NULL DEFAULT 0
);
CREATE TABLE transfers (
  id TEXT PRIMARY KEY,
  from_id TEXT NOT NULL REFERENCES accounts(id),
  to_id TEXT NOT NULL REFERENCES accounts(id),
  amount REAL NOT NULL,
  at TEXT NOT NULL
);
CREATE TABLE docs (id TEXT PRIMARY KEY, doc TEXT NOT NULL);
