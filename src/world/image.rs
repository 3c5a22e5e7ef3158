//! Compiled world images: a world's seeded database, serialized once and
//! reused by every later load of the same world.
//!
//! Seeding is most of what loading a big world costs (τ-bench airline's
//! 5 MB of JSON documents is about four fifths of its load), yet its result
//! is a pure function of a few files: `world.toml` (the seed list, the
//! clock and id settings the schema's defaults may call), `schema.sql` and
//! the seed files. So the image is keyed by a SHA-256 over exactly those
//! bytes and is kept
//! - in memory, for the life of the process (the last [`MEMORY_IMAGES`]
//!   worlds loaded), and
//! - optionally on disk under a cache folder, for the next process. The
//!   disk key also covers the engine's build, so a rebuilt engine never
//!   reads an image an older seeder wrote.
//!
//! A disk image is never trusted: its header names the key it was built
//! for and a checksum of its bytes, and anything that does not check out
//! (truncated, flipped, written by someone else) is ignored, seeded afresh
//! and overwritten. Episodes read the image through the copy-on-write VFS
//! (`understudy-cowvfs`), exactly as they do a freshly seeded one: the
//! bytes are the same either way.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use sha2::{Digest, Sha256};

use super::hash::SeedDigest;
use super::manifest::WorldToml;

/// How many worlds' images one process keeps in memory.
const MEMORY_IMAGES: usize = 8;

/// The first bytes of an image file.
const MAGIC: &[u8; 24] = b"understudy world image\n\0";

/// The layout of an image file and of its key; a different layout is a
/// different key (2: the seed files are keyed by their digest, and the
/// payload is checked by CRC-32).
const FORMAT: u32 = 2;

/// Magic, format, key, payload length, payload checksum.
const HEADER_LEN: usize = MAGIC.len() + 4 + 32 + 8 + 4;

/// The payload's checksum. Why CRC-32 and not a cryptographic digest: it
/// is there to catch a damaged file (truncated, a flipped bit), which it
/// does at a tenth of SHA-256's cost on every load; it guards against
/// nobody, since whoever can write the cache folder can write a matching
/// digest of any kind beside their bytes.
fn checksum(image: &[u8]) -> [u8; 4] {
    crc32fast::hash(image).to_le_bytes()
}

/// The folder under a cache directory that holds world images.
const IMAGE_FOLDER: &str = "world-images";

/// What an image was built from: SHA-256 over the files seeding reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ImageKey([u8; 32]);

/// Where a loaded world's seeded database came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ImageSource {
    /// Seeded from the world's files in this load.
    Seeded,
    /// The image of an earlier load in this process.
    Memory,
    /// An image file in the cache folder, verified.
    Disk,
}

/// An image found for a key, and where.
pub(crate) struct Found {
    pub image: Arc<[u8]>,
    pub source: ImageSource,
}

static MEMORY: Mutex<Vec<(ImageKey, Arc<[u8]>)>> = Mutex::new(Vec::new());

/// The key of the seeded database `manifest_text` and `schema` describe
/// from the seed files `seeds` (their order and names are in the manifest).
pub(crate) fn key(manifest_text: &str, schema: &str, seeds: &SeedDigest) -> ImageKey {
    let mut hasher = Sha256::new();
    hasher.update(FORMAT.to_le_bytes());
    hasher.update(env!("CARGO_PKG_VERSION").as_bytes());
    hasher.update(rusqlite::version().as_bytes());
    for part in [manifest_text.as_bytes(), schema.as_bytes()] {
        hasher.update((part.len() as u64).to_le_bytes());
        hasher.update(part);
    }
    hasher.update(seeds.digest());
    ImageKey(hasher.finalize().into())
}

/// The seed files `manifest` lists, hashed once for both the image key and
/// the world's content hash; `None` when one cannot be read.
pub(crate) fn seed_digest(root: &Path, manifest: &WorldToml) -> Option<SeedDigest> {
    SeedDigest::of(
        root,
        manifest.seed.iter().map(|e| e.get_ref().file.as_str()),
    )
    .ok()
}

/// The image for `key`: from memory, else (with a cache folder) from a
/// verified image file, which is then kept in memory too.
pub(crate) fn find(key: ImageKey, cache_dir: Option<&Path>) -> Option<Found> {
    if let Some(image) = recall(key) {
        return Some(Found {
            image,
            source: ImageSource::Memory,
        });
    }
    let image = read_file(&file_path(cache_dir?, key)?, key)?;
    remember(key, Arc::clone(&image));
    Some(Found {
        image,
        source: ImageSource::Disk,
    })
}

/// Keeps a freshly seeded image in memory and, with a cache folder, on
/// disk. Writing is best effort: a cache that cannot be written only
/// means the next process seeds again.
pub(crate) fn store(key: ImageKey, image: &Arc<[u8]>, cache_dir: Option<&Path>) {
    remember(key, Arc::clone(image));
    if let Some(path) = cache_dir.and_then(|dir| file_path(dir, key)) {
        if write_file(&path, key, image).is_ok() {
            prune(path.parent().unwrap_or(Path::new(".")));
        }
    }
}

/// Image files kept in a cache folder; each new build and each changed
/// world writes one, so older ones are removed past this many.
const DISK_IMAGES: usize = 16;

/// Removes all but the [`DISK_IMAGES`] most recently written image files.
fn prune(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut images: Vec<(std::time::SystemTime, PathBuf)> = entries
        .flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == "img"))
        .filter_map(|e| Some((e.metadata().ok()?.modified().ok()?, e.path())))
        .collect();
    if images.len() <= DISK_IMAGES {
        return;
    }
    images.sort();
    for (_, path) in &images[..images.len() - DISK_IMAGES] {
        let _ = std::fs::remove_file(path);
    }
}

/// The cache folder the command line uses unless told otherwise:
/// `UNDERSTUDY_CACHE_DIR` (empty turns the disk cache off), else
/// `$XDG_CACHE_HOME/understudy`, else `~/.cache/understudy`.
pub fn default_cache_dir() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("UNDERSTUDY_CACHE_DIR") {
        return (!dir.is_empty()).then(|| PathBuf::from(dir));
    }
    if let Some(dir) = std::env::var_os("XDG_CACHE_HOME").filter(|d| !d.is_empty()) {
        return Some(PathBuf::from(dir).join("understudy"));
    }
    std::env::var_os("HOME")
        .filter(|d| !d.is_empty())
        .map(|home| PathBuf::from(home).join(".cache").join("understudy"))
}

fn recall(key: ImageKey) -> Option<Arc<[u8]>> {
    let mut memory = MEMORY.lock().unwrap_or_else(|e| e.into_inner());
    let at = memory.iter().position(|(k, _)| *k == key)?;
    // Most recently used last, so the oldest is evicted first.
    let entry = memory.remove(at);
    let image = Arc::clone(&entry.1);
    memory.push(entry);
    Some(image)
}

fn remember(key: ImageKey, image: Arc<[u8]>) {
    let mut memory = MEMORY.lock().unwrap_or_else(|e| e.into_inner());
    memory.retain(|(k, _)| *k != key);
    if memory.len() >= MEMORY_IMAGES {
        memory.remove(0);
    }
    memory.push((key, image));
}

/// The image file of `key` under `dir`. Its name also covers the running
/// engine's build (the executable's size and modification time), which
/// the in-memory key need not: one process is one build. Without a way to
/// tell the build there is no disk cache.
pub(crate) fn file_path(dir: &Path, key: ImageKey) -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    let meta = std::fs::metadata(&exe).ok()?;
    let modified = meta
        .modified()
        .ok()?
        .duration_since(std::time::UNIX_EPOCH)
        .ok()?;
    let mut hasher = Sha256::new();
    hasher.update(key.0);
    hasher.update(meta.len().to_le_bytes());
    hasher.update(modified.as_nanos().to_le_bytes());
    let name = hex::encode(hasher.finalize());
    Some(dir.join(IMAGE_FOLDER).join(format!("{name}.img")))
}

/// Reads and verifies an image file; `None` for anything that does not
/// check out, which the caller treats as no image at all. The payload is
/// read straight into the shared image, so it is held once.
pub(crate) fn read_file(path: &Path, key: ImageKey) -> Option<Arc<[u8]>> {
    use std::io::Read;
    let mut file = std::fs::File::open(path).ok()?;
    let size = file.metadata().ok()?.len();
    let mut header = [0u8; HEADER_LEN];
    file.read_exact(&mut header).ok()?;
    let (magic, rest) = header.split_at(MAGIC.len());
    let (format, rest) = rest.split_at(4);
    let (file_key, rest) = rest.split_at(32);
    let (len, digest) = rest.split_at(8);
    let len = u64::from_le_bytes(len.try_into().ok()?);
    if magic != MAGIC
        || format != FORMAT.to_le_bytes()
        || file_key != key.0
        || Some(len) != size.checked_sub(HEADER_LEN as u64)
    {
        return None;
    }
    // Collected from a counted iterator, the Arc is allocated once, in
    // place, and has one owner, so it can be read into.
    let mut image: Arc<[u8]> = std::iter::repeat_n(0u8, usize::try_from(len).ok()?).collect();
    file.read_exact(Arc::get_mut(&mut image)?).ok()?;
    if checksum(&image) != digest || !image.starts_with(b"SQLite format 3\0") {
        return None;
    }
    Some(image)
}

/// Writes an image file beside its final name and renames it into place,
/// so a reader sees a whole file or none. The header and the image are
/// written one after the other, not joined into a second copy first.
fn write_file(path: &Path, key: ImageKey, image: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    static WRITES: AtomicU64 = AtomicU64::new(0);
    let n = WRITES.fetch_add(1, Ordering::Relaxed);
    let tmp = path.with_extension(format!("tmp-{}-{n}", std::process::id()));
    let written = (|| {
        let mut file = std::fs::File::create(&tmp)?;
        file.write_all(MAGIC)?;
        file.write_all(&FORMAT.to_le_bytes())?;
        file.write_all(&key.0)?;
        file.write_all(&(image.len() as u64).to_le_bytes())?;
        file.write_all(&checksum(image))?;
        file.write_all(image)?;
        file.flush()?;
        std::fs::rename(&tmp, path)
    })();
    written.inspect_err(|_| {
        let _ = std::fs::remove_file(&tmp);
    })
}

#[cfg(test)]
fn forget(key: ImageKey) {
    MEMORY
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .retain(|(k, _)| *k != key);
}

#[cfg(test)]
mod tests {
    use std::path::Path;
    use std::sync::Arc;

    use super::{file_path, forget, key, read_file, seed_digest, ImageKey, ImageSource};
    use crate::world::World;

    /// A copy of the mini world whose schema carries `tag`, so its key is
    /// its own and no other test's load shares (or evicts) its image.
    fn mini_copy(tag: &str) -> tempfile::TempDir {
        let dir = understudy_testkit::copy_world(&understudy_testkit::mini_dir());
        let schema = dir.path().join("schema.sql");
        let text = std::fs::read_to_string(&schema).expect("schema");
        std::fs::write(
            &schema,
            format!("-- {tag} {:?}\n{text}", std::time::SystemTime::now()),
        )
        .expect("write schema");
        dir
    }

    fn key_of(root: &Path) -> ImageKey {
        let manifest_text = std::fs::read_to_string(root.join("world.toml")).expect("manifest");
        let schema = std::fs::read_to_string(root.join("schema.sql")).expect("schema");
        let manifest = toml::from_str(&manifest_text).expect("manifest parses");
        let seeds = seed_digest(root, &manifest).expect("the seed files read");
        key(&manifest_text, &schema, &seeds)
    }

    #[test]
    fn a_second_load_in_the_process_reuses_the_image_and_behaves_the_same() {
        let dir = mini_copy("memory");
        let first = World::load(dir.path()).expect("loads");
        let second = World::load(dir.path()).expect("loads again");
        assert_eq!(first.image_source, ImageSource::Seeded);
        assert_eq!(second.image_source, ImageSource::Memory);
        assert!(Arc::ptr_eq(&first.snapshot, &second.snapshot));
        assert_eq!(first.content_hash, second.content_hash);
        forget(key_of(dir.path()));
    }

    #[test]
    fn an_image_file_serves_the_next_process_byte_for_byte() {
        let dir = mini_copy("disk");
        let cache = tempfile::tempdir().expect("cache");
        let seeded = World::load_cached(dir.path(), Some(cache.path())).expect("loads");
        assert_eq!(seeded.image_source, ImageSource::Seeded);
        let key = key_of(dir.path());
        let file = file_path(cache.path(), key).expect("an image path");
        assert_eq!(
            read_file(&file, key).as_deref(),
            Some(&seeded.snapshot[..]),
            "the file holds the seeded database"
        );
        // A new process has nothing in memory.
        forget(key);
        let from_disk = World::load_cached(dir.path(), Some(cache.path())).expect("loads");
        assert_eq!(from_disk.image_source, ImageSource::Disk);
        assert_eq!(from_disk.snapshot[..], seeded.snapshot[..]);
        forget(key);
    }

    #[test]
    fn a_corrupt_image_file_is_never_trusted_and_is_rebuilt() {
        let dir = mini_copy("corrupt");
        let cache = tempfile::tempdir().expect("cache");
        let seeded = World::load_cached(dir.path(), Some(cache.path())).expect("loads");
        let key = key_of(dir.path());
        let file = file_path(cache.path(), key).expect("an image path");
        let good = std::fs::read(&file).expect("the image file");
        let last = good.len() - 1;
        let mut flipped = good.clone();
        flipped[last] ^= 0x40;
        let breakages: [(&str, Vec<u8>); 4] = [
            ("a flipped byte", flipped),
            ("a truncated file", good[..good.len() / 2].to_vec()),
            ("an empty file", Vec::new()),
            ("another world's key", {
                let mut other = good.clone();
                other[30] ^= 1;
                other
            }),
        ];
        for (what, bytes) in breakages {
            std::fs::write(&file, &bytes).expect("break the file");
            assert_eq!(read_file(&file, key), None, "{what} is rejected");
            forget(key);
            let reloaded = World::load_cached(dir.path(), Some(cache.path())).expect("loads");
            assert_eq!(
                reloaded.image_source,
                ImageSource::Seeded,
                "{what}: seeded afresh"
            );
            assert_eq!(reloaded.snapshot[..], seeded.snapshot[..], "{what}");
            assert_eq!(
                std::fs::read(&file).expect("rewritten"),
                good,
                "{what}: the file is rebuilt"
            );
        }
        forget(key);
    }

    #[test]
    fn changing_a_seed_file_changes_the_key_and_the_world() {
        let dir = mini_copy("invalidate");
        let cache = tempfile::tempdir().expect("cache");
        let before = World::load_cached(dir.path(), Some(cache.path())).expect("loads");
        let old_key = key_of(dir.path());
        let csv = dir.path().join("data/accounts.csv");
        let text = std::fs::read_to_string(&csv).expect("csv");
        std::fs::write(&csv, text.replacen("100.0", "101.0", 1)).expect("edit the seed");
        let new_key = key_of(dir.path());
        assert_ne!(old_key, new_key);
        let after = World::load_cached(dir.path(), Some(cache.path())).expect("loads");
        assert_eq!(after.image_source, ImageSource::Seeded);
        assert_ne!(after.snapshot[..], before.snapshot[..]);
        assert_ne!(after.content_hash, before.content_hash);
        // And back: the old image is still the right one for the old files.
        std::fs::write(&csv, text).expect("restore the seed");
        forget(old_key);
        let again = World::load_cached(dir.path(), Some(cache.path())).expect("loads");
        assert_eq!(again.image_source, ImageSource::Disk);
        assert_eq!(again.snapshot[..], before.snapshot[..]);
        forget(old_key);
        forget(new_key);
    }

    #[test]
    fn the_cache_folder_keeps_only_the_newest_images() {
        let cache = tempfile::tempdir().expect("cache");
        let dir = cache.path().join(super::IMAGE_FOLDER);
        std::fs::create_dir_all(&dir).expect("mkdir");
        let old = std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_000);
        for i in 0..super::DISK_IMAGES + 3 {
            let path = dir.join(format!("{i:02}.img"));
            std::fs::write(&path, b"x").expect("write");
            let file = std::fs::File::options()
                .write(true)
                .open(&path)
                .expect("open");
            file.set_modified(old + std::time::Duration::from_secs(i as u64))
                .expect("set mtime");
        }
        std::fs::write(dir.join("notes.txt"), b"kept").expect("write");
        super::prune(&dir);
        let mut left: Vec<String> = std::fs::read_dir(&dir)
            .expect("read_dir")
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        assert_eq!(left.len(), super::DISK_IMAGES + 1);
        assert_eq!(left.first().map(String::as_str), Some("03.img"), "{left:?}");
        assert!(left.contains(&"notes.txt".to_string()));
    }

    #[test]
    fn a_world_with_problems_leaves_no_image() {
        let dir = mini_copy("broken");
        let cache = tempfile::tempdir().expect("cache");
        let csv = dir.path().join("data/accounts.csv");
        let text = std::fs::read_to_string(&csv).expect("csv");
        std::fs::write(&csv, format!("{text}A-77,Nobody,not a number,false\n")).expect("break");
        let key = key_of(dir.path());
        let err = World::load_cached(dir.path(), Some(cache.path())).expect_err("rejected");
        assert!(err.to_string().contains("accounts.csv"), "{err}");
        assert!(super::recall(key).is_none());
        assert!(!file_path(cache.path(), key).expect("path").exists());
        // Still rejected the second time: nothing was kept to skip the seed.
        assert!(World::load_cached(dir.path(), Some(cache.path())).is_err());
    }
}
