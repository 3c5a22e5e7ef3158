//! Where the app keeps its store and finds its worlds.
//!
//! - Data folder: `--data-dir DIR`, else `UNDERSTUDY_DATA_DIR`, else the
//!   platform's user data folder (e.g. `~/.local/share/dev.understudy.app`).
//!   The store is `understudy.sqlite` inside it.
//! - Worlds: `--worlds-dir DIR`, else `UNDERSTUDY_WORLDS_DIR`, else the
//!   repository's `fixtures/worlds` found above the executable (a build in
//!   `target/`), else the bundled `worlds/` resources, else
//!   `fixtures/worlds` under the current folder.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// The file name of the store inside the data folder.
pub const STORE_FILE: &str = "understudy.sqlite";

/// Options from the command line and the environment.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Options {
    pub data_dir: Option<PathBuf>,
    pub worlds_dir: Option<PathBuf>,
    /// Open an empty page instead of the app: a baseline for start-up and
    /// memory measurements.
    pub blank: bool,
}

impl Options {
    /// Reads `--data-dir`, `--worlds-dir` (as `--x DIR` or `--x=DIR`) and
    /// `--blank`, then fills the gaps from the environment. Unknown
    /// arguments are ignored: WebDriver and desktop launchers add their own.
    pub fn from_args_and_env(
        args: impl IntoIterator<Item = OsString>,
        env: impl Fn(&str) -> Option<OsString>,
    ) -> Options {
        let mut o = Options::default();
        let mut args = args.into_iter().skip(1);
        while let Some(arg) = args.next() {
            let text = arg.to_string_lossy().into_owned();
            let (name, inline) = match text.split_once('=') {
                Some((n, v)) => (n.to_string(), Some(PathBuf::from(v))),
                None => (text.clone(), None),
            };
            let slot = match name.as_str() {
                "--data-dir" => &mut o.data_dir,
                "--worlds-dir" => &mut o.worlds_dir,
                "--blank" => {
                    o.blank = true;
                    continue;
                }
                _ => continue,
            };
            *slot = inline.or_else(|| args.next().map(PathBuf::from));
        }
        let non_empty = |name: &str| env(name).filter(|v| !v.is_empty()).map(PathBuf::from);
        o.data_dir = o.data_dir.or_else(|| non_empty("UNDERSTUDY_DATA_DIR"));
        o.worlds_dir = o.worlds_dir.or_else(|| non_empty("UNDERSTUDY_WORLDS_DIR"));
        o
    }
}

/// Finds the worlds folder when none was given (see the module docs).
pub fn find_worlds_dir(
    exe: Option<&Path>,
    resources: Option<&Path>,
    cwd: Option<&Path>,
) -> Option<PathBuf> {
    let in_repo = exe
        .into_iter()
        .flat_map(Path::ancestors)
        .map(|dir| dir.join("fixtures").join("worlds"))
        .find(|p| p.is_dir());
    in_repo
        .or_else(|| resources.map(|r| r.join("worlds")).filter(|p| p.is_dir()))
        .or_else(|| {
            cwd.map(|c| c.join("fixtures").join("worlds"))
                .filter(|p| p.is_dir())
        })
}

/// The world folders inside `dir`: subfolders with a `world.toml`, by name.
pub fn world_dirs(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.join("world.toml").is_file())
        .collect();
    out.sort();
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Vec<OsString> {
        std::iter::once("app")
            .chain(list.iter().copied())
            .map(OsString::from)
            .collect()
    }

    #[test]
    fn flags_win_over_environment() {
        let env = |k: &str| match k {
            "UNDERSTUDY_DATA_DIR" => Some(OsString::from("/env/data")),
            "UNDERSTUDY_WORLDS_DIR" => Some(OsString::from("/env/worlds")),
            _ => None,
        };
        let o = Options::from_args_and_env(args(&["--data-dir", "/flag/data"]), env);
        assert_eq!(o.data_dir, Some(PathBuf::from("/flag/data")));
        assert_eq!(o.worlds_dir, Some(PathBuf::from("/env/worlds")));
        let o =
            Options::from_args_and_env(args(&["--worlds-dir=/w", "--blank", "--unknown"]), |_| {
                None
            });
        assert_eq!(o.worlds_dir, Some(PathBuf::from("/w")));
        assert_eq!(o.data_dir, None);
        assert!(o.blank);
    }

    #[test]
    fn empty_environment_values_are_ignored() {
        let o = Options::from_args_and_env(args(&[]), |_| Some(OsString::new()));
        assert_eq!(o, Options::default());
    }

    #[test]
    fn finds_the_repository_worlds_above_the_executable() {
        let exe = Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/debug/understudy-app");
        let found = find_worlds_dir(Some(&exe), None, None).expect("fixtures/worlds above target/");
        assert!(found.join("support-desk").join("world.toml").is_file());
        assert!(world_dirs(&found)
            .unwrap()
            .iter()
            .any(|p| p.ends_with("support-desk")));
    }
}
