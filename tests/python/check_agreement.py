"""Recomputes the engine's agreement statistics with the reference Python
packages: Krippendorff's alpha (nominal and ordinal) with `krippendorff`, Cohen's and Fleiss'
kappa with `statsmodels`. The cases and the engine's answers come from the
Rust test `grading::agreement::tests::write_cases_for_the_python_reference_check`
(see python_check_agreement in scripts/python.sh).

Usage: check_agreement.py CASES.json
"""

import json
import math
import sys

import krippendorff
import numpy as np
from statsmodels.stats.inter_rater import aggregate_raters, cohens_kappa, fleiss_kappa, to_table

TOLERANCE = 1e-9


def close(name: str, engine, reference: float) -> None:
    if engine is None:
        raise SystemExit(f"{name}: the engine gave no value; the reference says {reference}")
    if not math.isclose(engine, reference, rel_tol=0, abs_tol=TOLERANCE):
        raise SystemExit(f"{name}: the engine says {engine}, the reference {reference}")
    print(f"ok  {name}: {engine:.6f}")


def reliability(units) -> np.ndarray:
    """krippendorff wants graders as rows and items as columns, nan for a gap."""
    return np.array([[np.nan if v is None else v for v in unit] for unit in units], dtype=float).T


def main(path: str) -> None:
    with open(path, encoding="utf-8") as f:
        cases = json.load(f)
    checked = 0
    for i, case in enumerate(cases["cohen"]):
        pairs = [(a, b) for a, b in zip(case["a"], case["b"]) if a is not None and b is not None]
        table, _ = to_table(np.array(pairs))
        close(f"cohen #{i}", case["kappa"], cohens_kappa(table).kappa)
        checked += 1
    for key, level in [("alpha", "nominal"), ("alpha_ordinal", "ordinal")]:
        for i, case in enumerate(cases[key]):
            data = reliability(case["units"])
            close(f"{level} alpha #{i}", case["alpha"], krippendorff.alpha(reliability_data=data, level_of_measurement=level))
            checked += 1
    for i, case in enumerate(cases["fleiss"]):
        table, _ = aggregate_raters(np.array(case["units"]))
        close(f"fleiss #{i}", case["kappa"], fleiss_kappa(table, method="fleiss"))
        checked += 1
    if checked < 7:
        raise SystemExit(f"only {checked} cases were checked; expected at least 7")
    print(f"{checked} agreement cases match the reference packages")


if __name__ == "__main__":
    main(sys.argv[1])
