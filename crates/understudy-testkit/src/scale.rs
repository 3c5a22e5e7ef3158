//! Scaled τ-retail worlds for benchmarks: the bundled world with its users
//! and orders repeated `factor` times, written to a folder the caller owns
//! (a temp dir), never committed as data.
//!
//! Copy 0 is the bundled data unchanged and first in file order, so every
//! task, gold run and "first match" look-up sees exactly what it sees in
//! the bundled world. Copy `k` (1..factor) renames everything a record is
//! found by, so the world grows the way a real shop does (more customers,
//! not the same customer many times) and the relations stay consistent:
//!
//! | field | copy `k` |
//! |---|---|
//! | user id | `<id>_<k>` |
//! | order id | `<id>-<k>` (the order's `order_id` too) |
//! | e-mail | `<local>+<k>@<domain>` |
//! | zip (user and order addresses) | `(zip + 1009·k) mod 100000`, five digits |
//! | payment method id | `<id>_<k>` (the map key, its `id`, and every order's payment rows) |
//!
//! Products (the catalogue) are not repeated.

use std::path::Path;

use serde_json::{Map, Value};

/// Writes tau-retail scaled by `factor` (≥ 1) into `dest`, which must not
/// hold a world already, and returns the number of users written.
pub fn write_scaled_tau_retail(factor: usize, dest: &Path) -> Result<usize, String> {
    if factor == 0 {
        return Err("the scale factor must be at least 1".into());
    }
    let src = crate::world_dir("tau-retail");
    crate::copy_dir(&src, dest);
    let users = read_object(&src.join("data/users.json"))?;
    let orders = read_object(&src.join("data/orders.json"))?;
    let mut scaled_users = Map::with_capacity(users.len() * factor);
    let mut scaled_orders = Map::with_capacity(orders.len() * factor);
    for k in 0..factor {
        for (id, user) in &users {
            scaled_users.insert(user_id(id, k), scale_user(user, k)?);
        }
        for (id, order) in &orders {
            scaled_orders.insert(order_id(id, k), scale_order(order, k)?);
        }
    }
    let count = scaled_users.len();
    write_object(&dest.join("data/users.json"), scaled_users)?;
    write_object(&dest.join("data/orders.json"), scaled_orders)?;
    Ok(count)
}

fn read_object(path: &Path) -> Result<Map<String, Value>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    match serde_json::from_str(&text) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(_) => Err(format!(
            "{}: expected an object keyed by id",
            path.display()
        )),
        Err(e) => Err(format!("{}: {e}", path.display())),
    }
}

fn write_object(path: &Path, map: Map<String, Value>) -> Result<(), String> {
    let text = serde_json::to_string(&Value::Object(map)).map_err(|e| e.to_string())?;
    std::fs::write(path, text).map_err(|e| format!("{}: {e}", path.display()))
}

fn user_id(id: &str, k: usize) -> String {
    if k == 0 {
        id.to_string()
    } else {
        format!("{id}_{k}")
    }
}

fn order_id(id: &str, k: usize) -> String {
    if k == 0 {
        id.to_string()
    } else {
        format!("{id}-{k}")
    }
}

fn payment_id(id: &str, k: usize) -> String {
    user_id(id, k)
}

fn email(email: &str, k: usize) -> String {
    match email.split_once('@') {
        Some((local, domain)) if k > 0 => format!("{local}+{k}@{domain}"),
        _ => email.to_string(),
    }
}

fn zip(zip: &str, k: usize) -> String {
    match zip.parse::<usize>() {
        Ok(z) if k > 0 => format!("{:05}", (z + 1009 * k) % 100_000),
        _ => zip.to_string(),
    }
}

fn field<'v>(record: &'v mut Value, name: &str) -> Result<&'v mut Value, String> {
    record
        .get_mut(name)
        .ok_or_else(|| format!("a record has no `{name}`"))
}

fn rename_string(value: &mut Value, f: impl Fn(&str) -> String) -> Result<(), String> {
    match value {
        Value::String(s) => {
            *s = f(s);
            Ok(())
        }
        other => Err(format!("expected text, found {other}")),
    }
}

fn scale_user(user: &Value, k: usize) -> Result<Value, String> {
    let mut user = user.clone();
    if k == 0 {
        return Ok(user);
    }
    rename_string(field(&mut user, "email")?, |e| email(e, k))?;
    rename_string(field(field(&mut user, "address")?, "zip")?, |z| zip(z, k))?;
    if let Some(Value::Object(methods)) = user.get_mut("payment_methods") {
        let renamed: Map<String, Value> = std::mem::take(methods)
            .into_iter()
            .map(|(id, mut method)| {
                if let Some(Value::String(inner)) = method.get_mut("id") {
                    *inner = payment_id(inner, k);
                }
                (payment_id(&id, k), method)
            })
            .collect();
        *methods = renamed;
    }
    if let Some(Value::Array(orders)) = user.get_mut("orders") {
        for o in orders {
            rename_string(o, |id| order_id(id, k))?;
        }
    }
    Ok(user)
}

fn scale_order(order: &Value, k: usize) -> Result<Value, String> {
    let mut order = order.clone();
    if k == 0 {
        return Ok(order);
    }
    rename_string(field(&mut order, "order_id")?, |id| order_id(id, k))?;
    rename_string(field(&mut order, "user_id")?, |id| user_id(id, k))?;
    rename_string(field(field(&mut order, "address")?, "zip")?, |z| zip(z, k))?;
    if let Some(Value::Array(rows)) = order.get_mut("payment_history") {
        for row in rows {
            rename_string(field(row, "payment_method_id")?, |id| payment_id(id, k))?;
        }
    }
    Ok(order)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copies_rename_what_records_are_found_by_and_keep_relations() {
        let dir = tempfile::tempdir().expect("tempdir");
        let n = write_scaled_tau_retail(3, dir.path()).expect("written");
        assert_eq!(n, 1500);
        let users = read_object(&dir.path().join("data/users.json")).expect("users");
        let orders = read_object(&dir.path().join("data/orders.json")).expect("orders");
        assert_eq!(orders.len(), 3000);
        // Copy 0 comes first and is the bundled data itself.
        let bundled = read_object(&crate::world_dir("tau-retail").join("data/users.json"))
            .expect("bundled users");
        let (first_id, first) = bundled.iter().next().expect("a user");
        assert_eq!(users.keys().next(), Some(first_id));
        assert_eq!(&users[first_id], first);
        // Copy 2 of the first user: renamed, and its orders point back.
        let copy = &users[&format!("{first_id}_2")];
        assert_ne!(copy["email"], first["email"]);
        assert!(copy["email"].as_str().expect("email").contains("+2@"));
        assert_ne!(copy["address"]["zip"], first["address"]["zip"]);
        for o in copy["orders"].as_array().expect("orders") {
            let order = &orders[o.as_str().expect("id")];
            assert_eq!(order["user_id"], format!("{first_id}_2"));
            assert_eq!(order["order_id"], *o);
            for row in order["payment_history"].as_array().expect("payments") {
                let pm = row["payment_method_id"].as_str().expect("pm");
                assert!(copy["payment_methods"].get(pm).is_some(), "{pm}");
            }
        }
        // Every e-mail is unique, so look-ups by e-mail have one answer.
        let mut emails: Vec<&str> = users.values().filter_map(|u| u["email"].as_str()).collect();
        emails.sort_unstable();
        emails.dedup();
        assert_eq!(emails.len(), users.len());
    }

    #[test]
    fn a_zero_factor_is_refused() {
        let dir = tempfile::tempdir().expect("tempdir");
        assert!(write_scaled_tau_retail(0, dir.path())
            .expect_err("refused")
            .contains("at least 1"));
    }
}
