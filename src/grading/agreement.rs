//! How much graders agree beyond chance, on categorical grades.
//!
//! Grades here are categories (met / not met, or any small set of labels
//! as numbers). Raw percent agreement flatters a rubric whose criteria are
//! nearly always met: two graders who both say "met" 95% of the time agree
//! 90% by chance alone. So the statistics below correct for chance:
//!
//! - [`cohen_kappa`] for exactly two graders (Cohen 1960), over the items
//!   both graded;
//! - [`krippendorff_alpha`] (nominal) for any number of graders, with
//!   items some graders skipped (Krippendorff 2011, "Computing
//!   Krippendorff's Alpha-Reliability");
//! - [`fleiss_kappa`] for a fixed number of grades per item (Fleiss 1971).
//!
//! Each returns `None` when the statistic is undefined: no item to compare,
//! or every grade in one category (then chance agreement is total and
//! "beyond chance" means nothing). The values are checked against the
//! `krippendorff` and `statsmodels` Python packages on fixed data
//! (`tests/python/check_agreement.py`, run by `scripts/python.sh`).

use std::collections::BTreeMap;

/// A category a grader chose (met = 1, not met = 0 for rubric criteria).
pub type Category = u32;

/// Cohen's κ between two graders. `a[i]` and `b[i]` are their grades of
/// item `i` (`None`: not graded); items only one of them graded are left
/// out. κ = (p_o − p_e) / (1 − p_e), with p_o the share of items they agree
/// on and p_e the agreement expected from each grader's own category rates.
pub fn cohen_kappa(a: &[Option<Category>], b: &[Option<Category>]) -> Option<f64> {
    let pairs: Vec<(Category, Category)> = a
        .iter()
        .zip(b)
        .filter_map(|(x, y)| Some(((*x)?, (*y)?)))
        .collect();
    let n = pairs.len() as f64;
    if pairs.is_empty() {
        return None;
    }
    let observed = pairs.iter().filter(|(x, y)| x == y).count() as f64 / n;
    let mut rates: BTreeMap<Category, (f64, f64)> = BTreeMap::new();
    for (x, y) in &pairs {
        rates.entry(*x).or_default().0 += 1.0;
        rates.entry(*y).or_default().1 += 1.0;
    }
    let expected: f64 = rates.values().map(|(p, q)| (p / n) * (q / n)).sum();
    ratio(observed - expected, 1.0 - expected)
}

/// Krippendorff's α for nominal categories. `units[u][g]` is grader `g`'s
/// grade of item `u` (`None`: not graded); rows may differ in length.
/// Items with fewer than two grades cannot be compared and are left out.
///
/// From the coincidence matrix o (each item's ordered pairs of grades by
/// different graders, weighted 1 / (m_u − 1) for its m_u grades), with n_c
/// its row sums and n their total: α = 1 − (n − 1) · Σ_{c≠k} o_ck /
/// Σ_{c≠k} n_c · n_k.
pub fn krippendorff_alpha(units: &[Vec<Option<Category>>]) -> Option<f64> {
    alpha_with(units, |c, k, _| if c == k { 0.0 } else { 1.0 })
}

/// Krippendorff's α for ordered categories (the levels of a scale, ranked
/// by their number): grading "Clear but curt" against "Clear and kind" is
/// a smaller disagreement than "Unclear" against "Clear and kind". Same
/// data as [`krippendorff_alpha`]; the metric is ordinal (Krippendorff
/// 2011, section E.3): δ²_ck = (Σ_{g=c..k} n_g − (n_c + n_k) / 2)², so the
/// distance between two levels grows with how many grades lie between them.
pub fn krippendorff_alpha_ordinal(units: &[Vec<Option<Category>>]) -> Option<f64> {
    alpha_with(units, |c, k, totals| {
        let (lo, hi) = if c <= k { (c, k) } else { (k, c) };
        let between: f64 = totals.range(lo..=hi).map(|(_, n)| n).sum();
        let ends =
            totals.get(&lo).copied().unwrap_or(0.0) + totals.get(&hi).copied().unwrap_or(0.0);
        (between - ends / 2.0).powi(2)
    })
}

/// α = 1 − (n − 1) · Σ o_ck δ²_ck / Σ n_c n_k δ²_ck for the squared
/// distance `delta(c, k, n_·)` between categories, given their totals.
fn alpha_with(
    units: &[Vec<Option<Category>>],
    delta: impl Fn(Category, Category, &BTreeMap<Category, f64>) -> f64,
) -> Option<f64> {
    let mut coincidences: BTreeMap<(Category, Category), f64> = BTreeMap::new();
    for unit in units {
        let grades: Vec<Category> = unit.iter().flatten().copied().collect();
        let m = grades.len();
        if m < 2 {
            continue;
        }
        let weight = 1.0 / (m as f64 - 1.0);
        for (i, c) in grades.iter().enumerate() {
            for (j, k) in grades.iter().enumerate() {
                if i != j {
                    *coincidences.entry((*c, *k)).or_default() += weight;
                }
            }
        }
    }
    let mut totals: BTreeMap<Category, f64> = BTreeMap::new();
    for ((c, _), o) in &coincidences {
        *totals.entry(*c).or_default() += o;
    }
    let n: f64 = totals.values().sum();
    if n < 2.0 {
        return None;
    }
    let disagreeing: f64 = coincidences
        .iter()
        .map(|((c, k), o)| o * delta(*c, *k, &totals))
        .sum();
    let mut expected = 0.0;
    for (c, nc) in &totals {
        for (k, nk) in &totals {
            expected += nc * nk * delta(*c, *k, &totals);
        }
    }
    ratio(expected - (n - 1.0) * disagreeing, expected)
}

/// Fleiss' κ. `units[u]` lists the grades item `u` received; every item
/// must have the same number of grades (at least two), else `None`.
/// κ = (P̄ − P̄_e) / (1 − P̄_e), with P̄ the mean share of agreeing pairs
/// per item and P̄_e the sum of squared category shares.
pub fn fleiss_kappa(units: &[Vec<Category>]) -> Option<f64> {
    let raters = units.first()?.len();
    if raters < 2 || units.iter().any(|u| u.len() != raters) {
        return None;
    }
    let r = raters as f64;
    let mut shares: BTreeMap<Category, f64> = BTreeMap::new();
    let mut agreement = 0.0;
    for unit in units {
        let mut counts: BTreeMap<Category, f64> = BTreeMap::new();
        for c in unit {
            *counts.entry(*c).or_default() += 1.0;
            *shares.entry(*c).or_default() += 1.0;
        }
        agreement += (counts.values().map(|n| n * n).sum::<f64>() - r) / (r * (r - 1.0));
    }
    let total = units.len() as f64 * r;
    let observed = agreement / units.len() as f64;
    let expected: f64 = shares.values().map(|n| (n / total).powi(2)).sum();
    ratio(observed - expected, 1.0 - expected)
}

/// The share of agreeing pairs among all pairs of grades given to the same
/// item (items with one grade left out): what people read as "they agreed
/// 80% of the time". `None` with no pair.
pub fn percent_agreement(units: &[Vec<Option<Category>>]) -> Option<f64> {
    let (mut agree, mut pairs) = (0usize, 0usize);
    for unit in units {
        let grades: Vec<Category> = unit.iter().flatten().copied().collect();
        for (i, c) in grades.iter().enumerate() {
            for k in &grades[i + 1..] {
                pairs += 1;
                agree += usize::from(c == k);
            }
        }
    }
    (pairs > 0).then(|| agree as f64 / pairs as f64)
}

/// `num / den`, `None` when the denominator is (numerically) zero.
fn ratio(num: f64, den: f64) -> Option<f64> {
    (den.abs() > 1e-12).then(|| num / den)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Krippendorff (2011), section C: four observers, twelve units,
    /// nominal α = 0.743. Rows are units, columns observers A–D.
    pub(crate) fn krippendorff_2011() -> Vec<Vec<Option<Category>>> {
        let n = None;
        let s = Some;
        vec![
            vec![s(1), s(1), n, s(1)],
            vec![s(2), s(2), s(3), s(2)],
            vec![s(3), s(3), s(3), s(3)],
            vec![s(3), s(3), s(3), s(3)],
            vec![s(2), s(2), s(2), s(2)],
            vec![s(1), s(2), s(3), s(4)],
            vec![s(4), s(4), s(4), s(4)],
            vec![s(1), s(1), s(2), s(1)],
            vec![s(2), s(2), s(2), s(2)],
            vec![n, s(5), s(5), s(5)],
            vec![n, n, s(1), s(1)],
            vec![n, s(3), n, n],
        ]
    }

    /// Fleiss (1971) as on Wikipedia: ten items, fourteen raters, five
    /// categories, given as how many raters chose each category; κ = 0.210.
    pub(crate) fn fleiss_wikipedia() -> Vec<Vec<Category>> {
        let counts: [[u32; 5]; 10] = [
            [0, 0, 0, 0, 14],
            [0, 2, 6, 4, 2],
            [0, 0, 3, 5, 6],
            [0, 3, 9, 2, 0],
            [2, 2, 8, 1, 1],
            [7, 7, 0, 0, 0],
            [3, 2, 6, 3, 0],
            [2, 5, 3, 2, 2],
            [6, 5, 2, 1, 0],
            [0, 2, 2, 3, 7],
        ];
        counts
            .iter()
            .map(|row| {
                row.iter()
                    .enumerate()
                    .flat_map(|(c, n)| std::iter::repeat_n(c as Category, *n as usize))
                    .collect()
            })
            .collect()
    }

    /// Two graders, met (1) or not (0): 20 both met, 5 only the first,
    /// 10 only the second, 15 neither. p_o = 0.7, p_e = 0.5, κ = 0.4.
    pub(crate) fn two_graders() -> (Vec<Option<Category>>, Vec<Option<Category>>) {
        let mut a = Vec::new();
        let mut b = Vec::new();
        for (x, y, n) in [(1, 1, 20), (1, 0, 5), (0, 1, 10), (0, 0, 15)] {
            for _ in 0..n {
                a.push(Some(x));
                b.push(Some(y));
            }
        }
        // An item only one of them graded does not count.
        a.push(Some(1));
        b.push(None);
        (a, b)
    }

    fn close(got: Option<f64>, want: f64, tolerance: f64) {
        let got = got.expect("defined");
        assert!((got - want).abs() < tolerance, "{got} is not {want}");
    }

    #[test]
    fn cohen_kappa_matches_the_textbook_table() {
        let (a, b) = two_graders();
        close(cohen_kappa(&a, &b), 0.4, 1e-12);
        // Perfect agreement with both categories used is 1; opposite grades
        // on a balanced set are −1.
        let x = [Some(1), Some(0), Some(1), Some(0)];
        close(cohen_kappa(&x, &x), 1.0, 1e-12);
        let y = [Some(0), Some(1), Some(0), Some(1)];
        close(cohen_kappa(&x, &y), -1.0, 1e-12);
    }

    #[test]
    fn krippendorff_alpha_matches_the_papers_example() {
        close(krippendorff_alpha(&krippendorff_2011()), 0.743, 5e-4);
        // Two graders on the textbook table: α equals κ here (both
        // graders' category rates average to the pooled ones), 0.4.
        let (a, b) = two_graders();
        let units: Vec<_> = a.iter().zip(&b).map(|(x, y)| vec![*x, *y]).collect();
        close(krippendorff_alpha(&units), 0.4, 1e-12);
        // Skewed rates: α (pooled rates) is below κ (each grader's own).
        let units = vec![
            vec![Some(1), Some(1)],
            vec![Some(1), Some(0)],
            vec![Some(1), Some(0)],
            vec![Some(0), Some(0)],
        ];
        let (a, b): (Vec<_>, Vec<_>) = units.iter().map(|u| (u[0], u[1])).unzip();
        let alpha = krippendorff_alpha(&units).expect("defined");
        let kappa = cohen_kappa(&a, &b).expect("defined");
        assert!(alpha < kappa, "{alpha} < {kappa}");
    }

    #[test]
    fn ordinal_alpha_matches_the_paper_and_weighs_distant_levels_more() {
        // The same paper's example, ordinal metric: α = 0.815.
        close(
            krippendorff_alpha_ordinal(&krippendorff_2011()),
            0.815,
            5e-4,
        );
        // Three levels (0 < 1 < 2), two graders, one disagreement each:
        // one step apart agrees more than two steps apart.
        let near = vec![
            vec![Some(0), Some(0)],
            vec![Some(1), Some(1)],
            vec![Some(2), Some(2)],
            vec![Some(2), Some(1)],
        ];
        let far = vec![
            vec![Some(0), Some(0)],
            vec![Some(1), Some(1)],
            vec![Some(2), Some(2)],
            vec![Some(2), Some(0)],
        ];
        let (near, far) = (
            krippendorff_alpha_ordinal(&near).expect("defined"),
            krippendorff_alpha_ordinal(&far).expect("defined"),
        );
        assert!(near > far, "{near} > {far}");
        // Everyone at one level: undefined, as for nominal α.
        assert_eq!(
            krippendorff_alpha_ordinal(&vec![vec![Some(2), Some(2)]; 3]),
            None
        );
    }

    #[test]
    fn fleiss_kappa_matches_the_worked_example() {
        close(fleiss_kappa(&fleiss_wikipedia()), 0.210, 5e-4);
        assert_eq!(fleiss_kappa(&[vec![1, 0], vec![1]]), None, "uneven rows");
        assert_eq!(fleiss_kappa(&[vec![1], vec![1]]), None, "one rater");
        assert_eq!(fleiss_kappa(&[]), None);
    }

    #[test]
    fn statistics_are_undefined_without_comparable_grades_or_variation() {
        assert_eq!(cohen_kappa(&[], &[]), None);
        assert_eq!(cohen_kappa(&[Some(1), None], &[None, Some(0)]), None);
        // Everyone always says met: chance explains all agreement.
        let same = [Some(1), Some(1), Some(1)];
        assert_eq!(cohen_kappa(&same, &same), None);
        assert_eq!(krippendorff_alpha(&vec![vec![Some(1), Some(1)]; 3]), None);
        assert_eq!(krippendorff_alpha(&[vec![Some(1), None]]), None);
        assert_eq!(percent_agreement(&[vec![Some(1), None]]), None);
    }

    #[test]
    fn percent_agreement_counts_pairs_per_item() {
        let units = vec![
            vec![Some(1), Some(1), Some(0)], // 1 of 3 pairs agree
            vec![Some(0), Some(0), None],    // 1 of 1
        ];
        close(percent_agreement(&units), 0.5, 1e-12);
    }

    /// Writes the fixed cases and this module's answers to the file named
    /// by `UNDERSTUDY_AGREEMENT_OUT`, for `tests/python/check_agreement.py`
    /// to recompute with the `krippendorff` and `statsmodels` packages.
    /// Does nothing without the variable.
    #[test]
    fn write_cases_for_the_python_reference_check() {
        let Some(path) = std::env::var_os("UNDERSTUDY_AGREEMENT_OUT") else {
            return;
        };
        let (a, b) = two_graders();
        let pairs: Vec<_> = a.iter().zip(&b).map(|(x, y)| vec![*x, *y]).collect();
        let paper = krippendorff_2011();
        let fleiss = fleiss_wikipedia();
        // Three graders on eight items, some skipped: the app's case.
        let graders: Vec<Vec<Option<Category>>> = vec![
            vec![Some(1), Some(1), Some(1)],
            vec![Some(1), Some(0), Some(1)],
            vec![Some(0), Some(0), Some(0)],
            vec![Some(1), None, Some(1)],
            vec![Some(0), Some(1), None],
            vec![Some(1), Some(1), Some(0)],
            vec![None, Some(0), Some(0)],
            vec![Some(1), Some(1), Some(1)],
        ];
        // Three graders on a three-level scale (0 < 1 < 2), some skipped.
        let levels: Vec<Vec<Option<Category>>> = vec![
            vec![Some(2), Some(2), Some(1)],
            vec![Some(0), Some(1), Some(0)],
            vec![Some(2), None, Some(2)],
            vec![Some(1), Some(1), Some(1)],
            vec![None, Some(0), Some(2)],
            vec![Some(2), Some(1), None],
        ];
        let cases = serde_json::json!({
            "cohen": [{"a": a, "b": b, "kappa": cohen_kappa(&a, &b)}],
            "alpha": [
                {"units": paper, "alpha": krippendorff_alpha(&paper)},
                {"units": pairs, "alpha": krippendorff_alpha(&pairs)},
                {"units": graders, "alpha": krippendorff_alpha(&graders)},
            ],
            "alpha_ordinal": [
                {"units": paper, "alpha": krippendorff_alpha_ordinal(&paper)},
                {"units": levels, "alpha": krippendorff_alpha_ordinal(&levels)},
            ],
            "fleiss": [{"units": fleiss, "kappa": fleiss_kappa(&fleiss)}],
        });
        std::fs::write(&path, serde_json::to_string_pretty(&cases).expect("json"))
            .expect("writing the agreement cases");
    }
}
