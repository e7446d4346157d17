"""Fig. 2 of the stochastic Dykstra paper: the texture covariance set (Brodatz protocol on
scikit-image's textures), the SCS fallback of the reference, and the report section's claim checks."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import scipy.stats

from psdbench.report import findings as fd
from psdbench.api import Budget, DataError, Status
from psdbench.families.bregman_dykstra import report_fig2 as fig2
from psdbench.families.bregman_dykstra.dykstra import Dykstra
from psdbench.families.bregman_dykstra.pairs import covariance_descriptor
from psdbench.families.bregman_dykstra.problem import BregmanPairs
from psdbench.families.bregman_dykstra.textures import ImageCollection, brodatz_descriptors, quadrants
from psdbench.report import run_sections
from psdbench.report.blocks import Figure, Finding, Table
from psdbench.report.frame import tidy_frame

PROBLEM = BregmanPairs()


def _toy_images(rng, k=3, side=64):
    """k "textures": noise at different frequencies (distinct covariance descriptors)."""
    out = []
    for i in range(k):
        img = rng.normal(size=(side, side))
        for _ in range(i):  # smoothing lowers the derivative variances
            img = 0.25 * (np.roll(img, 1, 0) + np.roll(img, -1, 0) + np.roll(img, 1, 1) + np.roll(img, -1, 1))
        out.append(img)
    return np.stack(out)


def test_brodatz_protocol_shapes_seed_and_disjoint_sides():
    rng = np.random.default_rng(0)
    imgs = _toy_images(rng)
    Ctr, ytr, Cte, yte = brodatz_descriptors(imgs, patch=8, patches_per_image=6, seed=3)
    assert Ctr.shape == Cte.shape == (18, 5, 5)
    assert list(np.bincount(ytr)) == list(np.bincount(yte)) == [6, 6, 6]
    assert np.all(np.linalg.eigvalsh(Ctr)[:, 0] > 0)
    again = brodatz_descriptors(imgs, patch=8, patches_per_image=6, seed=3)
    assert np.array_equal(again[0], Ctr) and np.array_equal(again[2], Cte)
    other = brodatz_descriptors(imgs, patch=8, patches_per_image=6, seed=4)
    assert not np.array_equal(other[0], Ctr)
    # a test descriptor comes from one sub-image, training ones from the three others: a whole
    # sub-image's descriptor equals the descriptor of the patch that covers it exactly
    q = quadrants(imgs[0])
    C_full = [covariance_descriptor(s) for s in q]
    Ctr_q, _, Cte_q, _ = brodatz_descriptors(imgs, patch=32, patches_per_image=4, seed=3)
    test_q = [i for i, C in enumerate(C_full) if np.allclose(Cte_q[0], C)]
    assert len(test_q) == 1  # patch = sub-image side: the test patch is that whole sub-image
    assert not any(np.allclose(C, C_full[test_q[0]]) for C in Ctr_q[:4])
    with pytest.raises(DataError, match="patch"):
        brodatz_descriptors(imgs, patch=33, patches_per_image=2, seed=0)


def test_images_collection_reports_a_missing_name():
    coll = ImageCollection()
    with pytest.raises(DataError, match="unknown dataset"):
        coll.check("brodatz")


@pytest.fixture(scope="module")
def textures():
    pytest.importorskip("skimage")
    return ImageCollection().load("textures")


def test_texture_dataset_and_instance(textures):
    imgs = textures.payload["texture_images"]
    assert imgs.shape == (3, 512, 512) and 0 <= imgs.min() and imgs.max() <= 1
    I = PROBLEM.build(textures, {"pairs": "covariance", "phi": "sqrt", "pairs_per_class": 4, "patch": 32,
                                 "patches_per_image": 6}, 0)
    assert I.n == 5 and I.K == 12 and I.descriptors
    assert len(I.data.y_train) == len(I.data.y_test) == 18
    m = I.inner(np.eye(5))
    assert m.max() <= 1.0 + 1e-12  # Eye distances of training pairs scaled into [0, 1]


def test_scs_fallback_certifies_where_clarabel_fails(textures):
    """Log-mapped descriptors give A_k with condition numbers ~1e8, where Clarabel fails; the reference
    falls back to SCS and is still certified by the Lagrange dual bound, which ``dykstra`` agrees with."""
    I = PROBLEM.build(textures, {"pairs": "covariance", "phi": "log", "pairs_per_class": 20,
                                 "patches_per_image": 20}, 0)
    r = I.certified_reference(60)
    assert r["status"] == "ok" and r["lower"] is not None
    assert r["value"] - r["lower"] <= 1e-6 * abs(r["value"])
    sol = Dykstra().solve(I, Budget(), order="rand", gap_tol=1e-9, max_epochs=5000)
    assert sol.status is Status.OK
    obj = I.objective(sol)
    assert obj >= r["lower"] - 1e-9 * abs(r["lower"])
    assert obj - r["value"] <= 1e-6 * abs(r["value"])


# ---------------------------------------------------------------------------- the report section
def _raw(rows):
    out = []
    for i, (dataset, phi, div, seed, acc_w, acc_eye) in enumerate(rows):
        out.append({"run_id": "r", "cell_key": f"c{i}", "instance_key": f"i{i}", "problem": PROBLEM.name,
                    "dataset": dataset, "seed": seed, "solver": "dykstra", "status": "ok", "message": "",
                    "feasible": 1, "objective": 1.0, "reference_objective": 1.0, "reference_kind": "certified",
                    "instance_params": {"pairs": "covariance", "phi": phi, "divergence": div},
                    "solver_params": {"order": "rand"}, "metrics": {"acc_W": acc_w, "acc_eye": acc_eye},
                    "trace": "[]"})
    return pd.DataFrame(out)


def test_fig2_section_claims(tmp_path):
    rows = []
    for seed in (0, 1, 2):
        rows += [("images/textures", "id", "is", seed, 1.0, 1.0),         # Eye 100 %, W equal: met
                 ("images/textures", "log", "is", seed, 0.99, 1.0),       # Eye 100 %, W worse: not met
                 ("sklearn/digits:multiclass", "id", "is", seed, 0.70 + 0.01 * seed, 0.65),  # better: met
                 ("sklearn/digits:multiclass", "id", "l2", seed, 0.60, 0.65),
                 ("sklearn/digits:multiclass", "sqrt", "is", seed, 0.65, 0.65)]  # equal, Eye < 100 %: not met
    raw = _raw(rows)
    refs = pd.DataFrame({"instance_key": raw["instance_key"], "value": 1.0, "lower": 1.0, "kind": "certified"})
    frame = tidy_frame(raw, refs, {PROBLEM.name: PROBLEM}, {"dykstra": Dykstra()})
    sections = run_sections(frame, refs, {fig2.DykstraClassification.name: fig2.DykstraClassification()},
                            {PROBLEM.name: PROBLEM}, tmp_path, {})
    blocks = sections[0].blocks
    assert any(isinstance(b, Figure) and b.png[:4] == b"\x89PNG" for b in blocks)
    t = next(b for b in blocks if isinstance(b, Table))
    assert list(t.frame["set / Phi"]) == ["images/textures (128 px patches) / id", "images/textures (128 px patches) / log",
                                          "sklearn/digits:multiclass / id", "sklearn/digits:multiclass / sqrt"]
    row = t.frame.set_index("set / Phi").loc["sklearn/digits:multiclass / id"]
    assert row["Eye"] == "65.0 +- 0.0" and row["ISBD"] == "71.0 +- 1.0" and row["L2BD"] == "60.0 +- 0.0"
    found = [b for b in blocks if isinstance(b, Finding)]
    assert [x.verdict for x in found] == ["holds", "does not hold", "holds", "does not hold"]
    assert t.checks == [fd.finding_line(x) for x in found]
    # digits / id: W - Eye = 5, 6, 7 points: mean 6, 95 % t interval 6 +- t(0.975, 2) / sqrt(3)
    half = scipy.stats.t.ppf(0.975, 2) / np.sqrt(3)
    assert found[2].interval == f"+6.00 points [{6 - half:+.2f}, {6 + half:+.2f}] (95 %, 3 seeds)"
