//! The store's schema, as numbered migrations: one folder per migration
//! under `src/store/migrations/` (`NN-name/up.sql`), embedded in the build.
//! Never edit a released migration: add the next number. `user_version`
//! records how far a file is.

use include_dir::{include_dir, Dir};
use rusqlite_migration::Migrations;

/// `PRAGMA application_id` of an Understudy store ("USTY"), so a foreign
/// SQLite file is recognised and refused instead of being migrated.
pub const APPLICATION_ID: i32 = 0x5553_5459;

static MIGRATIONS: Dir<'static> = include_dir!("$CARGO_MANIFEST_DIR/src/store/migrations");

/// The embedded migrations, in order.
///
/// # Panics
/// Never at run time for a released build: the folder is checked by this
/// module's tests, so a misnamed migration fails the build's tests.
pub fn migrations() -> Migrations<'static> {
    Migrations::from_directory(&MIGRATIONS)
        .expect("src/store/migrations holds NN-name/up.sql folders (checked by tests)")
}

/// How many migrations this build knows: the number of migration folders.
pub fn latest_version() -> usize {
    MIGRATIONS.dirs().count()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn migrations_are_numbered_from_one_without_gaps_and_valid() {
        let mut numbers: Vec<usize> = MIGRATIONS
            .dirs()
            .map(|d| {
                let name = d.path().to_string_lossy().to_string();
                let (n, _) = name.split_once('-').expect("NN-name");
                assert!(
                    d.get_file(d.path().join("up.sql")).is_some(),
                    "{name}/up.sql"
                );
                n.parse().expect("a number before the dash")
            })
            .collect();
        numbers.sort();
        assert_eq!(numbers, (1..=latest_version()).collect::<Vec<_>>());
        migrations()
            .validate()
            .expect("migrations apply to an empty database");
    }
}
