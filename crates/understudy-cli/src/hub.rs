//! `understudy hub ...`: run a team hub (on PostgreSQL), bootstrap its
//! admin, and sync a local store with it. The work is in `understudy_hub`;
//! this file turns flags into calls and prints what happened.

use std::io::Read;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Subcommand};
use understudy::store::Store;
use understudy_hub::client::{Hub, PushOptions};
use understudy_hub::people::{self, NewPerson};
use understudy_hub::wire::NewAssignment;

#[derive(Subcommand)]
pub enum HubCommand {
    /// Run the hub server on a PostgreSQL database (migrated on start).
    Serve {
        #[command(flatten)]
        db: Database,
        /// Address to listen on, e.g. 127.0.0.1:8600 or 0.0.0.0:8600.
        #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:8600")]
        listen: SocketAddr,
        /// Largest request body accepted, in bytes.
        #[arg(long, value_name = "N", default_value_t = understudy_hub::DEFAULT_MAX_BODY_BYTES)]
        max_body_bytes: usize,
        /// Connections served at once; more are answered 503 (clients retry).
        #[arg(long, value_name = "N", default_value_t = understudy_hub::DEFAULT_MAX_CONNECTIONS)]
        max_connections: usize,
        /// Seconds a connection may take to send a request's head.
        #[arg(long, value_name = "SECS", default_value_t = understudy_hub::DEFAULT_HEADER_READ_TIMEOUT.as_secs())]
        header_timeout: u64,
    },
    /// People on the hub (straight on the database: the admin's bootstrap).
    #[command(subcommand)]
    User(UserCommand),
    /// Issue a bearer token for a person (straight on the database); printed once.
    Token {
        #[command(flatten)]
        db: Database,
        /// The person's login.
        #[arg(long)]
        login: String,
        /// What the token is for (shown to admins).
        #[arg(long, default_value = "cli")]
        label: String,
    },
    /// Push a local store's episodes and steps to the hub (safe to repeat).
    Push {
        /// The local trajectory store.
        #[arg(long)]
        store: PathBuf,
        #[command(flatten)]
        hub: HubArgs,
    },
    /// Push a local store's scores and judgments of episodes already on
    /// the hub (graders: annotators, reviewers, engineers, admins; safe to
    /// repeat).
    PushGrades {
        /// The local trajectory store the grades were saved in.
        #[arg(long)]
        store: PathBuf,
        #[command(flatten)]
        hub: HubArgs,
    },
    /// Print the assignments and reviews the hub has for you, as JSON.
    Pull {
        #[command(flatten)]
        hub: HubArgs,
        /// Only reviews with an id above this (the last one seen).
        #[arg(long, default_value_t = 0)]
        after: i64,
    },
    /// Worlds on the hub.
    #[command(subcommand)]
    World(WorldCommand),
    /// Give a task to one or more experts (admins).
    Assign {
        #[command(flatten)]
        hub: HubArgs,
        /// The world's content hash (from `hub world add`).
        #[arg(long, value_name = "HASH")]
        world_hash: String,
        /// The task's id in that world.
        #[arg(long, value_name = "ID")]
        task: String,
        /// An expert's login; repeat for overlap.
        #[arg(long = "expert", value_name = "LOGIN", required = true)]
        experts: Vec<String>,
        /// Due date, RFC 3339 (e.g. 2026-03-04T17:00:00Z).
        #[arg(long, value_name = "TIME")]
        due: Option<String>,
    },
}

#[derive(Subcommand)]
pub enum UserCommand {
    /// Add a person. The password, if any, is read from standard input.
    Add {
        #[command(flatten)]
        db: Database,
        #[arg(long)]
        login: String,
        #[arg(long)]
        name: String,
        /// expert, annotator, reviewer, engineer or admin.
        #[arg(long)]
        role: String,
        /// Read a password from standard input (else tokens only).
        #[arg(long)]
        password_stdin: bool,
    },
}

#[derive(Subcommand)]
pub enum WorldCommand {
    /// Upload a world folder (checked here and on the hub; stored by content hash).
    Add {
        /// The world folder.
        dir: PathBuf,
        #[command(flatten)]
        hub: HubArgs,
    },
    /// List the worlds the hub stores.
    List {
        #[command(flatten)]
        hub: HubArgs,
    },
}

#[derive(Args)]
pub struct Database {
    /// The hub's PostgreSQL database, e.g. postgres://hub@localhost/hub.
    #[arg(long, value_name = "URL", env = "UNDERSTUDY_HUB_DATABASE")]
    database: String,
}

/// Which hub, as whom.
#[derive(Args, Clone)]
pub struct HubArgs {
    /// The hub's address, e.g. http://hub.example:8600.
    #[arg(long = "hub", value_name = "URL", env = "UNDERSTUDY_HUB")]
    pub url: String,
    /// Your bearer token (from `hub token`, or sign-in).
    #[arg(
        long,
        value_name = "TOKEN",
        env = "UNDERSTUDY_HUB_TOKEN",
        hide_env_values = true
    )]
    pub token: String,
}

impl HubArgs {
    pub fn connect(&self) -> anyhow::Result<Hub> {
        Ok(Hub::new(&self.url, &self.token)?)
    }
}

/// `--hub URL --token T` on commands that also work on a local store
/// (`export`, `review`); the field's id is `hub`, for `conflicts_with`.
#[derive(Args)]
pub struct OptionalHub {
    /// Work on a team hub (http://host:port) instead of a local store.
    #[arg(id = "hub", long = "hub", value_name = "URL")]
    pub url: Option<String>,
    /// Your hub token, with --hub.
    #[arg(
        long,
        value_name = "TOKEN",
        env = "UNDERSTUDY_HUB_TOKEN",
        hide_env_values = true
    )]
    pub token: Option<String>,
}

impl OptionalHub {
    /// The hub, when `--hub` was given.
    pub fn connect(&self) -> anyhow::Result<Option<Hub>> {
        let Some(url) = &self.url else {
            return Ok(None);
        };
        let Some(token) = &self.token else {
            anyhow::bail!("--hub needs --token (or $UNDERSTUDY_HUB_TOKEN)");
        };
        Ok(Some(Hub::new(url, token)?))
    }
}

fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    Ok(tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?)
}

pub fn run(cmd: HubCommand) -> anyhow::Result<ExitCode> {
    match cmd {
        HubCommand::Serve {
            db,
            listen,
            max_body_bytes,
            max_connections,
            header_timeout,
        } => {
            if max_connections == 0 || header_timeout == 0 {
                anyhow::bail!("--max-connections and --header-timeout must be at least 1");
            }
            let config = understudy_hub::HubConfig {
                database_url: db.database,
                listen,
                limits: understudy_hub::Limits {
                    max_body_bytes,
                    max_connections,
                    header_read_timeout: std::time::Duration::from_secs(header_timeout),
                },
            };
            runtime()?.block_on(understudy_hub::serve(&config, shutdown_signal()))?;
            Ok(ExitCode::SUCCESS)
        }
        HubCommand::User(UserCommand::Add {
            db,
            login,
            name,
            role,
            password_stdin,
        }) => {
            let role = people::parse_role("--role", &role)?;
            let password = if password_stdin {
                let mut text = String::new();
                std::io::stdin().read_to_string(&mut text)?;
                Some(text.trim_end_matches(['\n', '\r']).to_string())
            } else {
                None
            };
            let new = NewPerson {
                login,
                name,
                role,
                password,
            };
            let person = runtime()?.block_on(people::bootstrap_add(&db.database, &new))?;
            println!("{}", serde_json::to_string(&person)?);
            Ok(ExitCode::SUCCESS)
        }
        HubCommand::Token { db, login, label } => {
            let token =
                runtime()?.block_on(people::bootstrap_token(&db.database, &login, &label))?;
            println!("{token}");
            Ok(ExitCode::SUCCESS)
        }
        HubCommand::Push { store, hub } => {
            if !store.is_file() {
                anyhow::bail!("there is no store at {}", store.display());
            }
            let store = Store::open_for_reading(&store)?;
            let report = hub.connect()?.push(&store, PushOptions::default())?;
            eprintln!(
                "pushed {} of {} episode(s) in {} batch(es): {} new episode(s), {} new step(s), {} step(s) updated",
                report.sent_episodes,
                report.local_episodes,
                report.batches,
                report.stored.episodes_added,
                report.stored.steps_added,
                report.stored.steps_updated
            );
            Ok(ExitCode::SUCCESS)
        }
        HubCommand::PushGrades { store, hub } => {
            if !store.is_file() {
                anyhow::bail!("there is no store at {}", store.display());
            }
            let store = Store::open_for_reading(&store)?;
            let s = hub.connect()?.push_grades(&store, PushOptions::default())?;
            eprintln!(
                "pushed {} score(s) ({} new) and {} judgment(s) ({} new)",
                s.scores, s.scores_added, s.judgments, s.judgments_added
            );
            Ok(ExitCode::SUCCESS)
        }
        HubCommand::Pull { hub, after } => {
            let hub = hub.connect()?;
            let out = serde_json::json!({
                "assignments": hub.assignments()?,
                "reviews": hub.reviews(after)?,
            });
            println!("{}", serde_json::to_string_pretty(&out)?);
            Ok(ExitCode::SUCCESS)
        }
        HubCommand::World(WorldCommand::Add { dir, hub }) => {
            let info = hub.connect()?.add_world(&dir)?;
            println!("{}", serde_json::to_string(&info)?);
            Ok(ExitCode::SUCCESS)
        }
        HubCommand::World(WorldCommand::List { hub }) => {
            println!(
                "{}",
                serde_json::to_string_pretty(&hub.connect()?.worlds()?)?
            );
            Ok(ExitCode::SUCCESS)
        }
        HubCommand::Assign {
            hub,
            world_hash,
            task,
            experts,
            due,
        } => {
            let made = hub.connect()?.assign(&NewAssignment {
                world_hash,
                task_id: task,
                experts,
                due_at: due,
            })?;
            println!("{}", serde_json::to_string_pretty(&made)?);
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// Ctrl-C or SIGTERM.
async fn shutdown_signal() {
    #[cfg(unix)]
    {
        let mut term =
            match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
                Ok(s) => s,
                Err(_) => {
                    let _ = tokio::signal::ctrl_c().await;
                    return;
                }
            };
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            _ = term.recv() => {}
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}
