CREATE TABLE employees (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL,
  email TEXT NOT NULL UNIQUE,
  department TEXT NOT NULL,
  job_title TEXT NOT NULL,
  manager_id TEXT REFERENCES employees(id),
  hire_date TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('active', 'on_leave', 'left')),
  personal_phone TEXT,
  home_postcode TEXT
);

CREATE TABLE leave_balances (
  id TEXT PRIMARY KEY,
  employee_id TEXT NOT NULL REFERENCES employees(id),
  year INTEGER NOT NULL,
  entitled_days INTEGER NOT NULL,
  carried_over_days INTEGER NOT NULL DEFAULT 0,
  carryover_used_by_deadline INTEGER NOT NULL DEFAULT 0,
  used_days INTEGER NOT NULL DEFAULT 0,
  UNIQUE (employee_id, year)
);

CREATE TABLE blackouts (
  id TEXT PRIMARY KEY,
  department TEXT NOT NULL,
  start_date TEXT NOT NULL,
  end_date TEXT NOT NULL,
  reason TEXT NOT NULL
);

CREATE TABLE leave_requests (
  id TEXT PRIMARY KEY,
  employee_id TEXT NOT NULL REFERENCES employees(id),
  leave_type TEXT NOT NULL CHECK (leave_type IN ('annual', 'sick', 'unpaid')),
  start_date TEXT NOT NULL,
  end_date TEXT NOT NULL,
  working_days INTEGER NOT NULL CHECK (working_days > 0),
  status TEXT NOT NULL CHECK (status IN ('pending', 'info_requested', 'approved', 'denied', 'escalated')),
  manager_approved INTEGER NOT NULL DEFAULT 0,
  employee_note TEXT,
  info_question TEXT,
  decision_reason TEXT,
  decided_at TEXT,
  created_at TEXT NOT NULL
);

CREATE TABLE escalations (
  id TEXT PRIMARY KEY,
  request_id TEXT NOT NULL REFERENCES leave_requests(id),
  employee_id TEXT NOT NULL REFERENCES employees(id),
  reason TEXT NOT NULL,
  created_at TEXT NOT NULL
);
