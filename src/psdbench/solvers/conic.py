"""Generic conic solvers on an instance's cvxpy reference formulation.

The parameter ``formulation`` selects one of the instance's equivalent formulations (for
graph-classification: ``primal``, the SDP (8), or ``reduced``); every other parameter is passed to
the backend as a solver option.

``scs`` (ADMM, O'Donoghue et al.), ``clarabel`` (interior point) and ``mosek`` (interior point,
when a license is present) solve whatever :meth:`Instance.reference_formulation` returns, so any
problem that offers a cvxpy formulation gets all three without new code.
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version
from typing import Any

import numpy as np

from psdbench import api
from psdbench.api import Budget, Formulation, Instance, Solution, Status  # noqa: F401  (Formulation: re-exported)


def _version(pkg: str) -> str:
    try:
        return version(pkg)
    except PackageNotFoundError:
        return "absent"


#: Keywords of ``cvxpy.Problem.solve`` itself, accepted beside any backend's options.
CVXPY_SOLVE_KEYWORDS = {"warm_start", "verbose", "ignore_dpp", "enforce_dpp", "canon_backend"}
#: SCS 3's settings (its documented ``scs.SCS(data, cone, **settings)`` keywords, ``linear_solver``
#: from 3.3) and the keywords cvxpy's SCS interface maps onto them (``eps``, ``use_indirect``,
#: ``use_quad_obj``).  ``tests/test_conic_options.py`` checks each against the installed SCS.
SCS_OPTIONS = {"normalize", "scale", "adaptive_scale", "rho_x", "max_iters", "eps_abs", "eps_rel", "eps_infeas",
               "alpha", "time_limit_secs", "acceleration_lookback", "acceleration_interval",
               "write_data_filename", "log_csv_filename", "linear_solver", "eps", "use_indirect", "use_quad_obj"}
#: The options cvxpy's MOSEK interface takes (``MOSEK.handle_options``; MOSEK's own parameters go
#: inside ``mosek_params``).
MOSEK_OPTIONS = {"mosek_params", "save_file", "bfs", "accept_unknown", "eps"}


class CvxpySolver:
    """Base class: solve the reference formulation with one cvxpy backend."""

    name = "cvxpy"
    backend = ""
    package = ""
    kinds: tuple[str, ...] = ("*",)
    requires = ("reference_formulation",)  # a problem whose instances return None is skipped
    returns = "the variables the problem's reference formulation extracts (e.g. M); none if the solve fails"
    params: dict[str, api.Param] = {}
    default_params: dict[str, Any] = {}
    # ``formulation`` (a variant of Instance.reference_formulation) and backend options pass through
    accepts_any_params = True
    time_limit_option: str | None = None

    def library_versions(self) -> dict[str, str]:
        return {"cvxpy": _version("cvxpy"), self.package: _version(self.package)}

    def option_names(self) -> set[str] | None:
        """The option names the backend accepts besides ``formulation`` (None: it offers no list)."""
        return None

    def available(self) -> tuple[bool, str]:
        import cvxpy as cp

        ok = self.backend in cp.installed_solvers()
        return ok, "" if ok else f"{self.backend} is not installed"

    def skip_reason(self, instance: Instance) -> str | None:
        """Why this backend does not run on ``instance``: not installed, no license, or no formulation.

        Building the default formulation is symbolic (cvxpy compiles only at solve time), so the
        check is cheap.
        """
        ok, why = self.available()
        if not ok:
            return why
        hook = getattr(instance, "reference_formulation", None)
        if hook is None or hook() is None:
            return f"{getattr(instance, 'problem', 'this problem')} offers no cvxpy formulation"
        return None

    def supports(self, instance: Instance) -> bool:
        return self.skip_reason(instance) is None

    def solve(self, instance: Instance, budget: Budget, **params: Any) -> Solution:
        import cvxpy as cp

        ok, why = self.available()
        if not ok:
            return Solution(variables={}, status=Status.SKIPPED, message=why)
        opts = {**self.default_params, **params}
        # "formulation" picks one of the instance's equivalent cvxpy formulations; the rest are
        # backend options.
        variant = opts.pop("formulation", None)
        form = instance.reference_formulation() if variant is None else instance.reference_formulation(variant)
        if form is None:
            return Solution(variables={}, status=Status.SKIPPED, message="no cvxpy formulation for this problem")
        left = budget.remaining()
        if left is not None and self.time_limit_option:  # the cell's deadline; a limit of 0 means none to SCS
            opts.setdefault(self.time_limit_option, max(left, 1e-3))
        form.problem.solve(solver=self.backend, **opts)
        stats = form.problem.solver_stats
        cvx = str(form.problem.status)
        status, message = self.outcome(cvx, budget.expired())
        variables = form.extract() if cvx in (cp.OPTIMAL, cp.OPTIMAL_INACCURATE, cp.USER_LIMIT) else {}
        if status is not Status.OK and not variables:
            return Solution(variables={}, status=status, message=message)
        return Solution(
            variables=variables,
            status=status,
            iterations=int(stats.num_iters or 0),
            info={"solver_objective": float(form.problem.value), "solve_time_s": float(stats.solve_time or 0.0),
                  "cvxpy_status": cvx},
            message=message,
        )

    @staticmethod
    def outcome(cvxpy_status: str, expired: bool = False) -> tuple[Status, str]:
        """The cell status and message of a cvxpy status (the message prefixes of :class:`api.Status`).

        ``optimal`` is ``ok``; ``optimal_inaccurate`` is ``max_iter`` with a message starting
        :data:`api.INACCURATE`; ``user_limit`` (an iteration or time limit) is ``max_iter``; either
        is ``timeout`` once the cell's deadline has passed (its point is verified and kept);
        ``infeasible[_inaccurate]`` is ``infeasible`` with a message starting
        :data:`api.SOLVER_INFEASIBLE` (no point is returned); ``unbounded[_inaccurate]`` is
        ``diverged``; anything else (``solver_error``) is ``error``.
        """
        import cvxpy as cp

        said = f"cvxpy status {cvxpy_status}"
        if cvxpy_status == cp.OPTIMAL:
            return Status.OK, ""
        if cvxpy_status == cp.OPTIMAL_INACCURATE:
            return (Status.TIMEOUT if expired else Status.MAX_ITER), f"{api.INACCURATE} ({said})"
        if cvxpy_status == cp.USER_LIMIT:
            return (Status.TIMEOUT if expired else Status.MAX_ITER), f"stopped at a limit ({said})"
        if cvxpy_status in (cp.INFEASIBLE, cp.INFEASIBLE_INACCURATE):
            return Status.INFEASIBLE, f"{api.SOLVER_INFEASIBLE}: primal infeasible ({said})"
        if cvxpy_status in (cp.UNBOUNDED, cp.UNBOUNDED_INACCURATE):
            return Status.DIVERGED, f"solver reported unbounded ({said})"
        return Status.ERROR, said


class Scs(CvxpySolver):
    """SCS (ADMM on the homogeneous self-dual embedding) with its own default accuracy 1e-4."""

    name = "scs"
    backend = "SCS"
    package = "scs"
    params: dict[str, api.Param] = {
        "eps_abs": api.number(low=0, default=1e-4, doc="absolute feasibility and gap tolerance"),
        "eps_rel": api.number(low=0, default=1e-4, doc="relative feasibility and gap tolerance"),
        "max_iters": api.number(low=1, default=100000, integer=True, doc="ADMM iteration limit"),
    }
    default_params: dict[str, Any] = api.default_params(params)
    time_limit_option = "time_limit_secs"

    def option_names(self) -> set[str] | None:
        """SCS's settings (:data:`SCS_OPTIONS`) and cvxpy's own ``solve`` keywords."""
        return SCS_OPTIONS | CVXPY_SOLVE_KEYWORDS | {"formulation"}


class Clarabel(CvxpySolver):
    """Clarabel (primal-dual interior point).  Its KKT system grows as n^4 on an n x n PSD cone."""

    name = "clarabel"
    backend = "CLARABEL"
    package = "clarabel"
    default_params: dict[str, Any] = {}
    time_limit_option = "time_limit"

    def option_names(self) -> set[str] | None:
        """Clarabel's settings (``clarabel.DefaultSettings``) and cvxpy's own ``solve`` keywords."""
        try:
            import clarabel
        except ImportError:  # not installed: the cell is skipped anyway
            return None
        return ({a for a in dir(clarabel.DefaultSettings()) if not a.startswith("_") and a != "default"}
                | CVXPY_SOLVE_KEYWORDS | {"formulation"})


class Mosek(CvxpySolver):
    """MOSEK interior point; ``skipped`` unless the package and a license are present."""

    name = "mosek"
    backend = "MOSEK"
    package = "mosek"
    default_params: dict[str, Any] = {}
    time_limit_option = None

    def option_names(self) -> set[str] | None:
        """cvxpy's MOSEK options (:data:`MOSEK_OPTIONS`) and its own ``solve`` keywords."""
        return MOSEK_OPTIONS | CVXPY_SOLVE_KEYWORDS | {"formulation"}

    def available(self) -> tuple[bool, str]:
        ok, why = super().available()
        if not ok:
            return ok, why
        try:  # a license check that costs nothing
            import mosek

            with mosek.Env() as env:
                env.checkoutlicense(mosek.feature.pton)
        except Exception as exc:  # no license: skipped, not an error
            return False, f"MOSEK license unavailable: {str(exc).splitlines()[0]}"
        return True, ""


#: Clarabel settings for certified references (tight; Clarabel may stop "inaccurate" short of them)
CLARABEL_TIGHT = {"tol_gap_abs": 1e-10, "tol_gap_rel": 1e-10, "tol_feas": 1e-10, "max_iter": 500}


def solve_reference_clarabel(problem: Any, time_limit_s: float | None = None,
                             tight: dict[str, Any] | None = None) -> tuple[bool, str]:
    """Solve a cvxpy ``problem`` with Clarabel for a reference: tight settings, then its defaults.

    Where the tight solve fails (a ``SolverError`` or a status other than optimal / optimal
    inaccurate, e.g. on badly scaled data) Clarabel's default settings are tried; the remaining
    ``time_limit_s`` is shared.  "Solution may be inaccurate" warnings are silenced: the caller
    certifies the point itself (a Frank-Wolfe or a Lagrange dual bound), whatever Clarabel's status.

    Returns
    -------
    (bool, str)
        Whether a usable point came back, and a description: Clarabel's status and which settings
        gave it, or why both attempts failed.
    """
    import time
    import warnings

    import cvxpy as cp

    t0, status = time.perf_counter(), "not solved"
    for name, settings in (("tight", CLARABEL_TIGHT if tight is None else tight), ("default", {})):
        opts: dict[str, Any] = dict(settings)
        if time_limit_s:
            opts["time_limit"] = max(float(time_limit_s) - (time.perf_counter() - t0), 1e-3)
        try:
            with warnings.catch_warnings():
                warnings.filterwarnings("ignore", message="Solution may be inaccurate")
                problem.solve(solver="CLARABEL", **opts)
        except cp.SolverError as exc:
            status = f"SolverError: {exc}"
            continue
        status = str(problem.status)
        if problem.status in (cp.OPTIMAL, cp.OPTIMAL_INACCURATE):
            return True, f"clarabel status {status} ({name} settings)"
    return False, f"clarabel: {status} (tight and default settings)"
