//! Distinct strings stored end to end, each named by a number.
//!
//! Why: the scope index holds every record key and every sensitive value
//! of a world, hundreds of thousands in a large one. As `String`s in hash
//! maps each cost an allocation, a 24-byte header and a map slot, several
//! times its bytes (tau-retail ×100's index took 83 MB); here a string
//! costs its bytes, its end offset and a 4-byte slot in the look-up table.

use std::hash::{BuildHasher, RandomState};

use hashbrown::HashTable;

use crate::error::{Error, Result};

/// The number of an interned string, in the order strings were first added.
pub type Id = u32;

#[derive(Default)]
pub struct Interned {
    text: String,
    /// Where each string ends in `text`; string `i` starts where `i - 1` ends.
    ends: Vec<usize>,
    /// Every id, found by its string's hash.
    table: HashTable<Id>,
    hasher: RandomState,
}

impl Interned {
    /// The id of `s`, adding it if it is new.
    pub fn intern(&mut self, s: &str) -> Result<Id> {
        let hash = self.hasher.hash_one(s);
        if let Some(id) = self.find_hashed(hash, s) {
            return Ok(id);
        }
        let id = Id::try_from(self.ends.len()).map_err(|_| {
            Error::Other("more than 4 billion distinct keys and values in a world's scope".into())
        })?;
        self.text.push_str(s);
        self.ends.push(self.text.len());
        let (table, rehash) = self.table_and_rehash();
        table.insert_unique(hash, id, rehash);
        Ok(id)
    }

    /// The id of `s`, if it was added.
    pub fn find(&self, s: &str) -> Option<Id> {
        self.find_hashed(self.hasher.hash_one(s), s)
    }

    fn find_hashed(&self, hash: u64, s: &str) -> Option<Id> {
        self.table.find(hash, |&id| self.get(id) == s).copied()
    }

    /// The look-up table, and how to hash an id already in it (for moving
    /// ids as the table grows or shrinks).
    fn table_and_rehash(&mut self) -> (&mut HashTable<Id>, impl Fn(&Id) -> u64 + '_) {
        let Self {
            text,
            ends,
            table,
            hasher,
        } = self;
        (table, move |&id: &Id| {
            hasher.hash_one(slice(text, ends, id))
        })
    }

    /// The string numbered `id` (empty for a number never given out).
    pub fn get(&self, id: Id) -> &str {
        slice(&self.text, &self.ends, id)
    }

    /// The byte length of every string, in no particular order.
    pub fn lengths(&self) -> impl Iterator<Item = usize> + '_ {
        let starts = std::iter::once(0).chain(self.ends.iter().copied());
        self.ends.iter().zip(starts).map(|(end, start)| end - start)
    }

    /// Frees what growing left unused: the index is built once, then read.
    pub fn shrink_to_fit(&mut self) {
        self.text.shrink_to_fit();
        self.ends.shrink_to_fit();
        let (table, rehash) = self.table_and_rehash();
        table.shrink_to_fit(rehash);
    }
}

fn slice<'a>(text: &'a str, ends: &[usize], id: Id) -> &'a str {
    let i = id as usize;
    let Some(&end) = ends.get(i) else {
        return "";
    };
    let start = if i == 0 { 0 } else { ends[i - 1] };
    &text[start..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_distinct_string_gets_one_id_in_the_order_first_added() {
        let mut s = Interned::default();
        let a = s.intern("ada@example.com").expect("a");
        let b = s.intern("").expect("empty");
        let c = s.intern("straße 12").expect("c");
        assert_eq!((a, b, c), (0, 1, 2));
        assert_eq!(s.intern("ada@example.com").expect("again"), a);
        assert_eq!(s.get(a), "ada@example.com");
        assert_eq!(s.get(b), "");
        assert_eq!(s.get(c), "straße 12");
        assert_eq!(s.find("straße 12"), Some(c));
        assert_eq!(s.find("straße"), None);
        assert_eq!(s.get(99), "");
        let mut lengths: Vec<usize> = s.lengths().collect();
        lengths.sort_unstable();
        assert_eq!(lengths, vec![0, 10, 15]);
    }

    #[test]
    fn many_strings_survive_the_table_growing_and_shrinking() {
        let mut s = Interned::default();
        let ids: Vec<Id> = (0..10_000)
            .map(|i| s.intern(&format!("key-{i}")).expect("intern"))
            .collect();
        s.shrink_to_fit();
        for (i, id) in ids.iter().enumerate() {
            assert_eq!(s.find(&format!("key-{i}")), Some(*id));
            assert_eq!(s.get(*id), format!("key-{i}"));
        }
        assert_eq!(s.find("key-10000"), None);
    }
}
