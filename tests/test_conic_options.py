"""Every backend's options are checked before any work: the lists in ``solvers/conic.py`` against
the installed libraries, and an unknown option as one line, exit 2, nothing written."""

from __future__ import annotations

import numpy as np
import pytest

from psdbench.solvers.conic import CVXPY_SOLVE_KEYWORDS, SCS_OPTIONS, Clarabel, Mosek, Scs

from .test_cli_bad_input import cli, grid, make_store, snapshot


def _scs_accepts(name: str) -> bool:
    """Whether the installed SCS (or cvxpy's SCS interface, which maps its own keywords) takes ``name``."""
    import scs
    from cvxpy.reductions.solvers.conic_solvers.scs_conif import SCS as CvxpyScs
    from scipy import sparse

    opts = CvxpyScs.parse_solver_options({name: _value(name)})
    data = {"A": sparse.csc_matrix(np.array([[1.0]])), "b": np.array([1.0]), "c": np.array([1.0])}
    try:
        scs.SCS(data, {"l": 1}, **{"verbose": False, **opts})
    except TypeError as exc:
        if "invalid keyword" in str(exc):
            return False
        raise
    return True


def _value(name: str):
    return {"normalize": True, "adaptive_scale": True, "linear_solver": "qdldl", "use_indirect": False,
            "write_data_filename": None, "log_csv_filename": None, "use_quad_obj": False}.get(name, 1)


def test_scs_option_list_matches_the_installed_scs():
    for name in sorted(SCS_OPTIONS):
        assert _scs_accepts(name), name
    assert not _scs_accepts("no_such_option")
    assert {"eps_abs", "max_iters", "acceleration_lookback"} <= Scs().option_names()
    assert CVXPY_SOLVE_KEYWORDS <= Scs().option_names() and CVXPY_SOLVE_KEYWORDS <= Mosek().option_names()
    clarabel = Clarabel().option_names()
    assert clarabel is None or {"tol_gap_abs", "max_iter"} <= clarabel


@pytest.mark.parametrize("solver", ["scs[no_such_option=1]", "mosek[no_such_option=1]", "clarabel[no_such_option=1]"])
def test_unknown_backend_option_is_one_line_before_any_work(solver, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    make_store(tmp_path / "store.sqlite")
    (tmp_path / "g.toml").write_text(grid())
    before = snapshot(tmp_path)
    code, out, err = cli(["run", "--grid", tmp_path / "g.toml", "--db", tmp_path / "store.sqlite", "--report",
                          tmp_path / "rep", "--quiet", "-s", solver])
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1, err
    assert "no_such_option" in err and "its backend accepts:" in err
    assert snapshot(tmp_path) == before
