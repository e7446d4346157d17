"""Graph-balancing post-steps: the Min, Max and Greed baselines of the BSGL paper.

"Efficient Learning of Balanced Signed Graphs via Sparse Linear Programming" (Yokota, Higashi,
Tanaka, Cheung; ``shared/papers/balanced-signed-graph-learning-sparse-lp.txt``, section VI-A1)
compares its learner with two-step baselines: estimate a signed precision matrix (GLASSO, CLIME),
then make it balanced with one of three post-steps:

* **MinCut Balancing (Min)** [27]: "Nodes were polarized based on the min-cut of positive edges,
  and inconsistent edges were removed."
* **MaxCut Balancing (Max)** [27]: "Nodes were polarized based on the max-cut of negative edges,
  and inconsistent edges were removed."
* **Greedy Balancing (Greed)** [22]: "A polarized set was initialized by polarizing a random node
  to 1, then nodes connected to the set were greedily polarized one by one, keeping the edge with
  the largest weight magnitude and removing the rest in each polarization."

Conventions (shared with :mod:`psdbench.linalg.balance`): the input is a symmetric generalized
graph Laplacian ``L`` with ``L_ij = -W_ij`` off the diagonal, so ``L_ij < -tol`` is a positive edge
of weight ``-L_ij`` and ``L_ij > tol`` a negative edge of weight ``L_ij``; entries with
``|L_ij| <= tol`` are not edges and are left untouched.  A polarity ``beta`` in ``{+1, -1}^N`` makes
edge ``(i, j)`` consistent when ``beta_i beta_j L_ij <= 0`` (Cartwright-Harary).  Removing an edge
sets ``L_ij = L_ji = 0``; the diagonal is never changed.  The graph that keeps exactly the edges
consistent with one polarity is balanced.

How the vague parts of the paper's description were read
--------------------------------------------------------
Min
    Global minimum cut of the positive-edge graph (weights ``-L_ij``) by Stoer-Wagner
    (:func:`networkx.stoer_wagner`); the two sides get polarities ``+1`` (the side holding node 0)
    and ``-1``.  When the positive graph is disconnected (isolated nodes count as components) the
    minimum cut is 0 and far from unique: every component then gets one polarity, chosen to cut
    as much *negative* weight between components as possible (so as few negative edges as possible
    are removed), while keeping both sides non-empty.  The choice is exact (enumeration, component
    0 fixed at ``+1``) for at most :data:`EXACT_COMPONENTS` components and greedy plus single-flip
    local search beyond that.  The positive cut stays 0 either way.
Max
    Maximum cut of the negative-edge graph (weights ``L_ij``) by Goemans-Williamson: the SDP
    relaxation ``max sum_{i<j} w_ij (1 - X_ij) / 2`` over ``X`` PSD with ``diag(X) = 1`` (cvxpy,
    Clarabel with SCS as fallback), ``n_rounds`` random-hyperplane roundings from
    ``numpy.random.default_rng(seed)`` keeping the best, then single-flip local search until no flip
    improves the cut.  This is done per connected component of the negative graph (the cut is
    additive over components).  The orientation of each negative-graph component (and of nodes with
    no negative edge) does not change the cut, so, symmetrically to Min, it is chosen to keep as much
    *positive* weight between components as possible (exact for at most :data:`EXACT_COMPONENTS`
    components, greedy plus local search otherwise).  Without negative edges every node is ``+1``.
Greed
    Prim-style growth of a polarized set ``P``: repeatedly take, among the edges between ``P`` and a
    node ``k`` outside it, the one ``(k, p)`` with the largest ``|w|`` (ties: lowest ``k``, then the
    earliest-polarized ``p``), set ``beta_k = sign(w_kp) beta_p``, and remove every edge between
    ``k`` and ``P`` inconsistent with it.  The first component starts at a node drawn by
    ``numpy.random.default_rng(seed)``; when no node outside ``P`` is connected to ``P`` a new
    component starts at its lowest-index unpolarized node, with polarity ``+1``.  The kept "largest"
    edges form a maximum-weight spanning forest of ``|W|``; since every edge is examined exactly when
    its later endpoint is polarized, the removed edges are exactly those inconsistent with the final
    polarity.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import connected_components

#: Known balancing methods of :func:`balance_graph`.
METHODS = ("min", "max", "greedy")

#: Up to this many components, component polarities are chosen by exact enumeration.
EXACT_COMPONENTS = 16


@dataclass
class BalanceResult:
    """Result of :func:`balance_graph`.

    Attributes
    ----------
    L : ndarray, shape (N, N)
        Balanced copy of the input: edges inconsistent with ``polarity`` set to 0, diagonal unchanged.
    polarity : ndarray of +-1 floats, shape (N,)
        Node polarities, consistent with every remaining edge.
    n_removed : int
        Number of removed edges (unordered pairs).
    cut_value : float
        Objective of the cut that fixed the polarities: the positive weight crossing the cut for
        ``"min"``, the negative weight crossing it for ``"max"``, ``nan`` for ``"greedy"``.
    """

    L: np.ndarray
    polarity: np.ndarray
    n_removed: int
    cut_value: float


# --------------------------------------------------------------------------------------------------
# helpers


def _check_laplacian(L: np.ndarray) -> np.ndarray:
    """Validate ``L`` and return its symmetrized float copy (used for every decision)."""
    L = np.asarray(L, dtype=float)
    if L.ndim != 2 or L.shape[0] != L.shape[1]:
        raise ValueError(f"L must be a square matrix, got shape {L.shape}")
    if not np.all(np.isfinite(L)):
        raise ValueError("L contains non-finite entries")
    if not np.allclose(L, L.T, rtol=1e-10, atol=1e-12 * max(1.0, float(np.abs(L).max(initial=0.0)))):
        raise ValueError("L must be symmetric")
    return (L + L.T) / 2.0


def _edge_weights(S: np.ndarray, tol: float) -> tuple[np.ndarray, np.ndarray]:
    """Positive and negative edge weight matrices (non-negative, zero diagonal) of symmetric ``S``."""
    pos = np.where(S < -tol, -S, 0.0)
    neg = np.where(S > tol, S, 0.0)
    np.fill_diagonal(pos, 0.0)
    np.fill_diagonal(neg, 0.0)
    return pos, neg


def _cut(W: np.ndarray, beta: np.ndarray) -> float:
    """Weight of the edges of non-negative symmetric ``W`` joining nodes of different polarity."""
    diff = beta[:, None] != beta[None, :]
    return float(np.triu(W * diff, 1).sum())


def _inconsistent(S: np.ndarray, beta: np.ndarray, tol: float) -> np.ndarray:
    """Symmetric mask of the edges of ``S`` inconsistent with ``beta`` (``beta_i beta_j S_ij > 0``)."""
    bad = (np.abs(S) > tol) & (np.outer(beta, beta) * S > 0)
    np.fill_diagonal(bad, False)
    return bad


def _components(W: np.ndarray) -> tuple[int, np.ndarray]:
    """Connected components of the graph with adjacency ``W != 0`` (labels ordered by lowest node)."""
    return connected_components(csr_matrix(W != 0), directed=False)


def _orient_components(labels: np.ndarray, n_comp: int, G: np.ndarray, proper: bool) -> np.ndarray:
    """Give each component one polarity, maximizing the weight of ``G`` across polarities.

    Maximizes ``sum_{i<j} G_ij [beta_i != beta_j]`` over polarities constant on each component, for a
    symmetric ``G`` of any sign (zero inside components).  Component 0 is ``+1``.  With ``proper``
    both polarities must occur (when there are at least two components).  Exact for at most
    :data:`EXACT_COMPONENTS` components (first optimum in enumeration order), otherwise greedy
    assignment plus single-flip local search.
    """
    if n_comp == 1:
        return np.ones(labels.size)
    # Component-level weights: C[a, b] = sum of G over nodes of a x nodes of b (a != b).
    ind = np.zeros((labels.size, n_comp))
    ind[np.arange(labels.size), labels] = 1.0
    C = ind.T @ G @ ind
    np.fill_diagonal(C, 0.0)
    scale = float(np.abs(C).sum()) or 1.0

    if n_comp <= EXACT_COMPONENTS:
        # Rows: component 0 fixed at +1, bit k of m sets component k + 1 to -1.
        masks = np.arange(1 if proper else 0, 2 ** (n_comp - 1))
        bits = (masks[:, None] >> np.arange(n_comp - 1)[None, :]) & 1
        s = np.hstack([np.ones((masks.size, 1)), 1.0 - 2.0 * bits])
        # Cross weight = (sum C - s^T C s) / 4 with C counting both orders.
        value = (C.sum() - ((s @ C) * s).sum(axis=1)) / 4.0
        best = int(np.argmax(value >= value.max() - 1e-12 * scale))  # first (near-)optimum
        comp_sign = s[best]
    else:
        comp_sign = np.zeros(n_comp)
        comp_sign[0] = 1.0
        strength = np.abs(C[:, 0]).copy()
        for _ in range(n_comp - 1):
            cand = np.where(comp_sign == 0, strength, -np.inf)
            a = int(np.argmax(cand))
            pull = C[a] @ comp_sign  # > 0: prefers the opposite of the weighted neighbours
            comp_sign[a] = -1.0 if pull > 0 else 1.0
            strength += np.abs(C[:, a])
        while True:  # flipping a changes the cross weight by s_a (C s)_a
            gain = comp_sign * (C @ comp_sign)
            gain[0] = -np.inf  # keep component 0 at +1 (global flips are free)
            a = int(np.argmax(gain))
            if gain[a] <= 1e-12 * scale:
                break
            comp_sign[a] = -comp_sign[a]
        if proper and np.all(comp_sign > 0):
            gain = comp_sign * (C @ comp_sign)
            gain[0] = -np.inf
            comp_sign[int(np.argmax(gain))] = -1.0
    return comp_sign[labels]


# --------------------------------------------------------------------------------------------------
# polarities


def min_cut_polarity(L: np.ndarray, tol: float = 0.0) -> tuple[np.ndarray, float]:
    """Polarity from the global minimum cut of the positive-edge graph (Min balancing).

    Parameters
    ----------
    L : ndarray, shape (N, N)
        Symmetric generalized graph Laplacian; ``L_ij < -tol`` is a positive edge of weight ``-L_ij``.
    tol : float
        Entries with ``|L_ij| <= tol`` are not edges.

    Returns
    -------
    polarity : ndarray of +-1 floats, shape (N,)
        ``+1`` on the side holding node 0.  For ``N >= 2`` both sides are non-empty.
    cut_value : float
        Positive weight crossing the cut (0 when the positive graph is disconnected or ``N = 1``).

    Notes
    -----
    A connected positive graph is cut with :func:`networkx.stoer_wagner`.  A disconnected one has
    minimum cut 0; its components then get polarities that cut as much negative weight between
    components as possible (see the module docstring).
    """
    S = _check_laplacian(L)
    n = S.shape[0]
    pos, neg = _edge_weights(S, tol)
    if n == 1:
        return np.ones(1), 0.0
    n_comp, labels = _components(pos)
    if n_comp == 1:
        import networkx as nx  # here: importing the family (a resumed run) needs neither library

        G = nx.Graph()
        G.add_nodes_from(range(n))
        iu, ju = np.nonzero(np.triu(pos, 1))
        G.add_weighted_edges_from(zip(iu.tolist(), ju.tolist(), pos[iu, ju].tolist()))
        _, (side_a, side_b) = nx.stoer_wagner(G, weight="weight")
        minus = side_b if 0 in side_a else side_a
        beta = np.ones(n)
        beta[list(minus)] = -1.0
    else:
        beta = _orient_components(labels, n_comp, neg, proper=True)
    return beta, _cut(pos, beta)


def _solve_maxcut_sdp(W: np.ndarray) -> np.ndarray:
    """Goemans-Williamson SDP ``max sum_{i<j} w_ij (1 - X_ij)/2``, ``X`` PSD, ``diag(X) = 1``."""
    import cvxpy as cp

    n = W.shape[0]
    scale = float(W.max())
    Wn = W / scale
    X = cp.Variable((n, n), PSD=True)
    problem = cp.Problem(cp.Maximize(cp.sum(cp.multiply(Wn, 1 - X)) / 4), [cp.diag(X) == 1])
    last_error: Exception | None = None
    for solver in (cp.CLARABEL, cp.SCS):
        try:
            problem.solve(solver=solver)
        except cp.error.SolverError as exc:
            last_error = exc
            continue
        if problem.status in (cp.OPTIMAL, cp.OPTIMAL_INACCURATE) and X.value is not None:
            return (X.value + X.value.T) / 2.0
        last_error = RuntimeError(f"{solver} returned status {problem.status}")
    raise RuntimeError(f"max-cut SDP failed with Clarabel and SCS: {last_error}")


def _goemans_williamson(W: np.ndarray, rng: np.random.Generator, n_rounds: int) -> np.ndarray:
    """Best of ``n_rounds`` hyperplane roundings of the SDP solution, then single-flip local search."""
    n = W.shape[0]
    if n == 2:
        return np.array([1.0, -1.0])
    X = _solve_maxcut_sdp(W)
    lam, U = np.linalg.eigh(X)
    V = U * np.sqrt(np.clip(lam, 0.0, None))  # rows: unit-ish vectors with X ~ V V^T
    R = rng.standard_normal((n, max(1, int(n_rounds))))
    signs = np.where(V @ R >= 0, 1.0, -1.0)
    values = W.sum() - (signs * (W @ signs)).sum(axis=0)  # 4 x cut of each rounding
    beta = signs[:, int(np.argmax(values))].copy()
    eps = 1e-12 * float(W.sum())
    while True:  # flipping i changes the cut by beta_i (W beta)_i
        gain = beta * (W @ beta)
        i = int(np.argmax(gain))
        if gain[i] <= eps:
            break
        beta[i] = -beta[i]
    return beta


def max_cut_polarity(
    L: np.ndarray, seed: int = 0, tol: float = 0.0, n_rounds: int = 100
) -> tuple[np.ndarray, float]:
    """Polarity from a Goemans-Williamson maximum cut of the negative-edge graph (Max balancing).

    Parameters
    ----------
    L : ndarray, shape (N, N)
        Symmetric generalized graph Laplacian; ``L_ij > tol`` is a negative edge of weight ``L_ij``.
    seed : int
        Seed of the ``numpy.random.default_rng`` used for the hyperplane roundings.
    tol : float
        Entries with ``|L_ij| <= tol`` are not edges.
    n_rounds : int
        Random-hyperplane roundings per connected component of the negative graph.

    Returns
    -------
    polarity : ndarray of +-1 floats, shape (N,)
    cut_value : float
        Negative weight crossing the cut (at least 0.878 of the optimum in expectation; the local
        search usually reaches the optimum on small graphs).

    Notes
    -----
    Components of the negative graph are cut separately; their orientations (and the polarity of
    nodes without negative edges) are then chosen to keep as much positive weight as possible.
    Without negative edges every node is ``+1``.
    """
    S = _check_laplacian(L)
    n = S.shape[0]
    pos, neg = _edge_weights(S, tol)
    if not np.any(neg):
        return np.ones(n), 0.0
    rng = np.random.default_rng(seed)
    n_comp, labels = _components(neg)
    beta = np.ones(n)
    for c in range(n_comp):
        nodes = np.flatnonzero(labels == c)
        if nodes.size < 2:
            continue
        b = _goemans_williamson(neg[np.ix_(nodes, nodes)], rng, n_rounds)
        beta[nodes] = b * b[0]  # lowest node of each component +1
    # Orient each component (beta_i -> s_c beta_i): keep as much positive weight as possible, i.e.
    # maximize the cross weight of G_ij = -pos_ij beta_i beta_j between component signs s.
    flip = _orient_components(labels, n_comp, -pos * np.outer(beta, beta), proper=False)
    beta = beta * flip
    return beta, _cut(neg, beta)


def greedy_polarity(L: np.ndarray, seed: int = 0, tol: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    """Greedy balancing (Greed): grow a polarized set along the heaviest edges.

    Parameters
    ----------
    L : ndarray, shape (N, N)
        Symmetric generalized graph Laplacian.
    seed : int
        Seed of the ``numpy.random.default_rng`` that picks the first polarized node.
    tol : float
        Entries with ``|L_ij| <= tol`` are not edges.

    Returns
    -------
    polarity : ndarray of +-1 floats, shape (N,)
    L_balanced : ndarray, shape (N, N)
        Copy of ``L`` with the edges removed during the polarizations set to 0.

    Notes
    -----
    Each step takes the edge ``(k, p)`` with the largest ``|L_kp|`` between the polarized set ``P``
    and a node ``k`` outside it, sets ``beta_k = sign(-L_kp) beta_p`` (equal polarity across a
    positive edge), and removes the edges between ``k`` and ``P`` inconsistent with ``beta_k``.
    New components start at the lowest-index unpolarized node with ``+1``.
    """
    S = _check_laplacian(L)
    out = np.array(L, dtype=float, copy=True)
    n = S.shape[0]
    A = np.where(np.abs(S) > tol, np.abs(S), 0.0)
    np.fill_diagonal(A, 0.0)
    rng = np.random.default_rng(seed)
    beta = np.zeros(n)
    in_p = np.zeros(n, dtype=bool)
    best_w = np.zeros(n)  # heaviest edge from each outside node into P (0: none)
    best_p = np.full(n, -1)

    def polarize(k: int, value: float) -> None:
        beta[k] = value
        in_p[k] = True
        nbrs = np.flatnonzero((A[k] > 0) & in_p)
        bad = nbrs[beta[k] * beta[nbrs] * S[k, nbrs] > 0]
        out[k, bad] = 0.0
        out[bad, k] = 0.0
        better = (A[k] > best_w) & ~in_p  # strict: ties keep the earlier-polarized endpoint
        best_w[better] = A[k, better]
        best_p[better] = k

    start = int(rng.integers(n))
    for _ in range(n):
        cand = np.where(in_p, -1.0, best_w)
        k = int(np.argmax(cand))
        if cand[k] > 0:
            p = int(best_p[k])
            polarize(k, beta[p] * (1.0 if S[k, p] < 0 else -1.0))
        else:
            polarize(start if not in_p[start] else int(np.argmin(in_p)), 1.0)
    return beta, out


# --------------------------------------------------------------------------------------------------
# entry point


def balance_graph(L: np.ndarray, method: str, seed: int = 0, tol: float = 0.0) -> BalanceResult:
    """Balance the signed graph of ``L`` by removing the edges inconsistent with a polarity.

    Parameters
    ----------
    L : ndarray, shape (N, N)
        Symmetric generalized graph Laplacian (``L_ij < 0``: positive edge, ``L_ij > 0``: negative).
    method : {"min", "max", "greedy"}
        Which polarity: :func:`min_cut_polarity`, :func:`max_cut_polarity` or
        :func:`greedy_polarity` (BSGL paper, section VI-A1).
    seed : int
        Seed for the randomized parts (Max roundings, Greed start node).
    tol : float
        Entries with ``|L_ij| <= tol`` are not edges and are left as they are.

    Returns
    -------
    BalanceResult

    Raises
    ------
    ValueError
        For an unknown ``method`` or a non-square, non-symmetric or non-finite ``L``.
    """
    if method not in METHODS:
        raise ValueError(f"unknown balancing method {method!r}; known methods: {', '.join(METHODS)}")
    S = _check_laplacian(L)
    if method == "greedy":
        beta, out = greedy_polarity(L, seed=seed, tol=tol)
        removed = (np.abs(S) > tol) & (out == 0)
        np.fill_diagonal(removed, False)
        cut_value = float("nan")
    else:
        if method == "min":
            beta, cut_value = min_cut_polarity(L, tol=tol)
        else:
            beta, cut_value = max_cut_polarity(L, seed=seed, tol=tol)
        removed = _inconsistent(S, beta, tol)
        out = np.array(L, dtype=float, copy=True)
        out[removed] = 0.0
    return BalanceResult(L=out, polarity=beta, n_removed=int(np.triu(removed, 1).sum()), cut_value=cut_value)
