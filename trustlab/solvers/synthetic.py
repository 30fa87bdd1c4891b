"""Synthetic clique-partitioning instances.

* :func:`planted_er_graph`: xER-style entity-resolution graphs (planted clusters,
  blocked by a threshold).
* CP-Lib-like families (Sørensen & Letchford, *CP-Lib*, Math. Prog. Comp. 2024), each a
  dense symmetric float64 weight matrix with a zero diagonal (every pair is an edge,
  maximise the within-cluster weight): :func:`cluster_editing_instance`,
  :func:`random_integer_instance`, :func:`cell_formation_instance`,
  :func:`equicut_instance`, and the registry :func:`make_instance` over them
  (``FAMILIES``).
* Families of the heuristics literature (Charon & Hudry, Brusco & Köhn, Palubeckis et
  al., Zhou, Hao & Goëffon), with no planted structure and so harder for a local
  search: :func:`signed_graph_instance` (unplanted ±1, cluster editing on a
  ``G(n, p)`` graph), :func:`uniform_instance` (uniform integers in ``[-a, a]``, the
  ``rand100-5``/``rand100-100`` and ``p500-5-*`` instances) and
  :func:`gaussian_instance` (rounded normal weights, the ``gauss500-100-*`` instances).

These generators reproduce the *shape* of the published families (weight ranges,
sparsity, structure); they are not the published instances themselves.
"""
from __future__ import annotations

from typing import Any

import networkx as nx
import numpy as np

from trustlab._validation import Registry, check_int, check_interval, check_random_state

__all__ = ["planted_er_graph", "cluster_editing_instance", "random_integer_instance",
           "cell_formation_instance", "equicut_instance", "signed_graph_instance", "uniform_instance",
           "gaussian_instance", "make_instance", "FAMILIES"]


def planted_er_graph(
    n: int,
    mean_cluster_size: float = 3.0,
    threshold: float = -0.3,
    *,
    sigma: float = 0.3,
    random_state: Any = None,
) -> tuple[nx.Graph, np.ndarray]:
    """A planted-cluster similarity graph as in xER section 5 (ECB+ synthetic scores).

    Gold clusters have geometric sizes with the given mean; every pair gets
    ``w ~ Normal(+0.5, sigma)`` if co-referent and ``Normal(-0.5, sigma)`` otherwise
    (the paper's "variance of 0.3" read as ``sigma = 0.3``, which matches its edge
    counts); blocking keeps the pairs with ``w >= threshold``.

    Returns
    -------
    (networkx.Graph with ``weight`` attributes, gold labels)

    Examples
    --------
    >>> G, gold = planted_er_graph(49, 2.5, -0.7, random_state=0)
    >>> G.number_of_nodes(), 700 < G.number_of_edges() < 1000
    (49, True)
    """
    n = check_int(n, "n", low=1, func="planted_er_graph")
    mean_cluster_size = check_interval(mean_cluster_size, "mean_cluster_size", low=1, closed="left",
                                       func="planted_er_graph")
    sigma = check_interval(sigma, "sigma", low=0, closed="left", func="planted_er_graph")
    rng = check_random_state(random_state)
    gold = np.empty(n, np.int64)
    i = c = 0
    while i < n:
        s = int(rng.geometric(1.0 / mean_cluster_size))
        gold[i:i + s] = c
        i += s
        c += 1
    iu, ju = np.triu_indices(n, 1)
    mu = np.where(gold[iu] == gold[ju], 0.5, -0.5)
    w = rng.normal(mu, sigma)
    keep = w >= threshold
    G = nx.Graph()
    G.add_nodes_from(range(n))
    G.add_weighted_edges_from(zip(iu[keep].tolist(), ju[keep].tolist(), w[keep].tolist()))
    return G, gold


def _symmetric(U: np.ndarray) -> np.ndarray:
    """Mirror the strict upper triangle of ``U`` (float64, zero diagonal)."""
    U = np.triu(np.asarray(U, np.float64), 1)
    return np.ascontiguousarray(U + U.T)


def cluster_editing_instance(
    n: int,
    n_clusters: int | None = None,
    flip: float = 0.2,
    *,
    random_state: Any = None,
) -> np.ndarray:
    """Cluster-editing weights: a planted partition with a fraction of ±1 flips.

    Nodes get uniform random labels from ``n_clusters`` planted clusters; a pair gets
    ``+1`` inside a planted cluster and ``-1`` across, and each pair's sign is flipped
    independently with probability ``flip`` (CP-Lib's ``ClusEdit`` family: random
    cluster-editing instances, unit weights). Maximising the within-cluster weight is
    cluster editing (minimum number of edge insertions/deletions to a disjoint union of
    cliques) up to a constant.

    Parameters
    ----------
    n : int
        Number of nodes (>= 1).
    n_clusters : int, optional
        Planted clusters; default ``max(2, round(sqrt(n) / 1.5))``.
    flip : float in [0, 0.5]
        Probability that a pair's sign is flipped.
    random_state : None, int or numpy.random.Generator

    Returns
    -------
    numpy.ndarray
        ``(n, n)`` symmetric float64 matrix with entries in {-1, 0, +1} (0 only on the
        diagonal).

    Examples
    --------
    >>> W = cluster_editing_instance(6, 2, 0.0, random_state=0)
    >>> W.shape, sorted(set(W[~np.eye(6, dtype=bool)].tolist())) in ([-1.0, 1.0], [1.0])
    ((6, 6), True)
    >>> bool((W == W.T).all() and (np.diag(W) == 0).all())
    True
    """
    n = check_int(n, "n", low=1, func="cluster_editing_instance")
    if n_clusters is None:
        n_clusters = max(2, int(round(np.sqrt(n) / 1.5)))
    n_clusters = check_int(n_clusters, "n_clusters", low=1, func="cluster_editing_instance")
    flip = check_interval(flip, "flip", low=0, high=0.5, closed="both", func="cluster_editing_instance")
    rng = check_random_state(random_state)
    gold = rng.integers(0, n_clusters, n)
    U = np.where(gold[:, None] == gold[None, :], 1.0, -1.0)
    U = np.where(rng.random((n, n)) < flip, -U, U)
    return _symmetric(U)


def random_integer_instance(
    n: int, low: int = -100, high: int = 100, *, random_state: Any = None
) -> np.ndarray:
    """Uniform random integer weights in ``[low, high]`` (CP-Lib's ``Random`` family,
    the classic ``rand100-*`` instances use ``[-100, 100]``).

    Parameters
    ----------
    n : int
        Number of nodes (>= 1).
    low, high : int
        Inclusive weight range, ``low <= high``.
    random_state : None, int or numpy.random.Generator

    Returns
    -------
    numpy.ndarray
        ``(n, n)`` symmetric float64 matrix, zero diagonal.

    Examples
    --------
    >>> W = random_integer_instance(5, random_state=1)
    >>> bool((W == W.T).all()), bool(np.abs(W).max() <= 100), W.dtype.name
    (True, True, 'float64')
    """
    n = check_int(n, "n", low=1, func="random_integer_instance")
    low = check_int(low, "low", func="random_integer_instance")
    high = check_int(high, "high", low=low, func="random_integer_instance")
    rng = check_random_state(random_state)
    return _symmetric(rng.integers(low, high + 1, (n, n)))


def cell_formation_instance(
    n: int,
    n_cells: int | None = None,
    machine_fraction: float = 0.4,
    density_in: float = 0.6,
    density_out: float = 0.08,
    *,
    random_state: Any = None,
) -> np.ndarray:
    """Manufacturing cell formation (MCF) turned into CPP weights, as in CP-Lib's ``MCF``.

    A sparse 0/1 machine–part incidence matrix ``a`` (``m`` machines × ``p`` parts,
    ``m + p = n``) is drawn with a planted block structure: machine and part of the
    same planted cell are incident with probability ``density_in``, otherwise with
    ``density_out`` (the "exceptional elements"); every machine and part gets at least
    one incidence. The CPP graph has one node per part (first ``p`` nodes) and per
    machine (last ``m``); a machine–part pair weighs ``+1`` if the machine processes
    the part and ``-1`` otherwise; machine–machine and part–part pairs weigh 0 (this is
    how the CP-Lib ``MCF`` files, e.g. ``boc_1``, are built). A cluster is a cell.

    Parameters
    ----------
    n : int
        Number of nodes (machines + parts, >= 2).
    n_cells : int, optional
        Planted cells; default ``max(2, n // 12)``.
    machine_fraction : float in (0, 1)
        Share of the nodes that are machines (at least one machine and one part).
    density_in, density_out : float in [0, 1]
        Incidence probability inside / outside a planted cell.
    random_state : None, int or numpy.random.Generator

    Returns
    -------
    numpy.ndarray
        ``(n, n)`` symmetric float64 matrix with entries in {-1, 0, +1}.

    Examples
    --------
    >>> W = cell_formation_instance(10, 2, random_state=0)
    >>> m = 4  # round(0.4 * 10) machines, the last four nodes
    >>> bool((W[:6, :6] == 0).all() and (W[6:, 6:] == 0).all()), bool(np.abs(W[:6, 6:]).min() == 1)
    (True, True)
    """
    func = "cell_formation_instance"
    n = check_int(n, "n", low=2, func=func)
    if n_cells is None:
        n_cells = max(2, n // 12)
    n_cells = check_int(n_cells, "n_cells", low=1, func=func)
    machine_fraction = check_interval(machine_fraction, "machine_fraction", low=0, high=1, func=func)
    density_in = check_interval(density_in, "density_in", low=0, high=1, closed="both", func=func)
    density_out = check_interval(density_out, "density_out", low=0, high=1, closed="both", func=func)
    rng = check_random_state(random_state)
    m = min(n - 1, max(1, int(round(machine_fraction * n))))
    p = n - m
    cm = rng.integers(0, n_cells, m)
    cp = rng.integers(0, n_cells, p)
    prob = np.where(cm[:, None] == cp[None, :], density_in, density_out)
    a = rng.random((m, p)) < prob
    for i in np.flatnonzero(~a.any(axis=1)):  # every machine processes some part
        a[i, rng.integers(0, p)] = True
    for j in np.flatnonzero(~a.any(axis=0)):  # every part needs some machine
        a[rng.integers(0, m), j] = True
    W = np.zeros((n, n))
    W[:p, p:] = np.where(a.T, 1.0, -1.0)
    W[p:, :p] = W[:p, p:].T
    return np.ascontiguousarray(W)


def equicut_instance(
    n: int, density: float = 0.75, max_weight: int = 9, *, random_state: Any = None
) -> np.ndarray:
    """Equicut-like weights: a random graph with integer weights of both signs.

    Like the ``neg-c-*`` instances of Brunetta et al. in CP-Lib's ``Equicut`` folder:
    each pair is an edge with probability ``density`` and then gets a uniform nonzero
    integer weight in ``[-max_weight, max_weight]``; other pairs weigh 0.

    Parameters
    ----------
    n : int
        Number of nodes (>= 1).
    density : float in [0, 1]
        Probability that a pair has a nonzero weight.
    max_weight : int
        Largest absolute weight (>= 1).
    random_state : None, int or numpy.random.Generator

    Returns
    -------
    numpy.ndarray
        ``(n, n)`` symmetric float64 matrix, zero diagonal.

    Examples
    --------
    >>> W = equicut_instance(8, random_state=0)
    >>> bool((W == W.T).all()), bool(np.abs(W).max() <= 9), bool(np.all(W == np.round(W)))
    (True, True, True)
    """
    n = check_int(n, "n", low=1, func="equicut_instance")
    density = check_interval(density, "density", low=0, high=1, closed="both", func="equicut_instance")
    max_weight = check_int(max_weight, "max_weight", low=1, func="equicut_instance")
    rng = check_random_state(random_state)
    mag = rng.integers(1, max_weight + 1, (n, n))
    sign = np.where(rng.random((n, n)) < 0.5, -1, 1)
    keep = rng.random((n, n)) < density
    return _symmetric(np.where(keep, sign * mag, 0))


def signed_graph_instance(n: int, p: float = 0.5, *, random_state: Any = None) -> np.ndarray:
    """Unplanted cluster editing: ``+1`` on the edges of a ``G(n, p)`` random graph,
    ``-1`` on the other pairs.

    The same weights as :func:`cluster_editing_instance` with ``flip = 0.5`` when
    ``p = 0.5``, but with no planted partition at all: the optimum is a packing of the
    random graph into near-cliques, which local search finds much harder than a planted
    partition (CP-Lib's random cluster-editing instances ``ce50-20`` ... ``ce80-60``
    are of this kind). Maximising the within-cluster weight is cluster editing on the
    graph up to a constant.

    Parameters
    ----------
    n : int
        Number of nodes (>= 1).
    p : float in [0, 1]
        Edge probability of the random graph (the share of ``+1`` pairs).
    random_state : None, int or numpy.random.Generator

    Returns
    -------
    numpy.ndarray
        ``(n, n)`` symmetric float64 matrix with entries in {-1, 0, +1} (0 only on the
        diagonal).

    Examples
    --------
    >>> W = signed_graph_instance(40, 0.3, random_state=0)
    >>> off = W[np.triu_indices(40, 1)]
    >>> sorted(set(off.tolist())), 0.2 < float((off > 0).mean()) < 0.4
    ([-1.0, 1.0], True)
    """
    n = check_int(n, "n", low=1, func="signed_graph_instance")
    p = check_interval(p, "p", low=0, high=1, closed="both", func="signed_graph_instance")
    rng = check_random_state(random_state)
    return _symmetric(np.where(rng.random((n, n)) < p, 1.0, -1.0))


def uniform_instance(
    n: int, max_weight: int = 5, density: float = 1.0, *, random_state: Any = None
) -> np.ndarray:
    """Uniform random integer weights in ``[-max_weight, max_weight]``, the classic
    random CPP benchmarks.

    Charon & Hudry's ``rand100-5`` ... ``rand500-5`` (``max_weight = 5``) and
    ``rand100-100`` ... ``rand500-100`` (``max_weight = 100``), used by Brusco & Köhn
    and Zhou, Hao & Goëffon, have this shape (checked on the two n = 100 files: dense,
    every integer of the range about equally likely, 0 included, so about one pair in
    ``2 * max_weight + 1`` weighs 0), and so do the rows of Palubeckis et al.'s
    ``p500-5-1`` we inspected. ``density < 1`` sets each pair to 0 with
    probability ``1 - density`` first (sparser variants of the same family).

    Parameters
    ----------
    n : int
        Number of nodes (>= 1).
    max_weight : int
        Largest absolute weight (>= 1).
    density : float in [0, 1]
        Probability that a pair keeps its drawn weight (else 0).
    random_state : None, int or numpy.random.Generator

    Returns
    -------
    numpy.ndarray
        ``(n, n)`` symmetric float64 matrix, zero diagonal.

    Examples
    --------
    >>> W = uniform_instance(60, random_state=0)
    >>> off = W[np.triu_indices(60, 1)]
    >>> int(off.min()), int(off.max()), 0.05 < float((off == 0).mean()) < 0.14
    (-5, 5, True)
    >>> W = uniform_instance(60, 100, density=0.3, random_state=0)
    >>> 0.6 < float((W[np.triu_indices(60, 1)] == 0).mean()) < 0.8
    True
    """
    func = "uniform_instance"
    n = check_int(n, "n", low=1, func=func)
    max_weight = check_int(max_weight, "max_weight", low=1, func=func)
    density = check_interval(density, "density", low=0, high=1, closed="both", func=func)
    rng = check_random_state(random_state)
    U = rng.integers(-max_weight, max_weight + 1, (n, n))
    if density < 1.0:
        U = np.where(rng.random((n, n)) < density, U, 0)
    return _symmetric(U)


def gaussian_instance(
    n: int,
    sigma: float = 50.0,
    mean: float = 0.0,
    density: float = 1.0,
    *,
    integer: bool = True,
    random_state: Any = None,
) -> np.ndarray:
    """Normally distributed weights, like Zhou, Hao & Goëffon's ``gauss500-100-*``.

    Each pair gets ``Normal(mean, sigma)``, rounded to the nearest integer unless
    ``integer=False`` (the published ``gauss500-100-*`` files hold integers with a
    standard deviation of about 50 and mean 0, the defaults here); ``density < 1`` sets
    each pair to 0 with probability ``1 - density``.

    Parameters
    ----------
    n : int
        Number of nodes (>= 1).
    sigma : float > 0
        Standard deviation of the weights.
    mean : float
        Mean of the weights (a negative mean gives smaller clusters).
    density : float in [0, 1]
        Probability that a pair keeps its drawn weight (else 0).
    integer : bool
        Round the weights to integers (default) or keep floats.
    random_state : None, int or numpy.random.Generator

    Returns
    -------
    numpy.ndarray
        ``(n, n)`` symmetric float64 matrix, zero diagonal.

    Examples
    --------
    >>> W = gaussian_instance(80, random_state=0)
    >>> off = W[np.triu_indices(80, 1)]
    >>> bool(np.all(off == np.round(off))), 40 < float(off.std()) < 60, abs(float(off.mean())) < 5
    (True, True, True)
    >>> W = gaussian_instance(5, 1.0, integer=False, random_state=0)
    >>> bool(np.all(W == W.T)), bool(np.any(W != np.round(W)))
    (True, True)
    """
    func = "gaussian_instance"
    n = check_int(n, "n", low=1, func=func)
    sigma = check_interval(sigma, "sigma", low=0, func=func)
    mean = check_interval(mean, "mean", func=func)
    density = check_interval(density, "density", low=0, high=1, closed="both", func=func)
    rng = check_random_state(random_state)
    U = rng.normal(mean, sigma, (n, n))
    if integer:
        U = np.round(U)
    if density < 1.0:
        U = np.where(rng.random((n, n)) < density, U, 0.0)
    return _symmetric(U)


#: instance families of :func:`make_instance` (name -> generator)
FAMILIES = Registry("instance family")
FAMILIES.register("cluster_editing", cluster_editing_instance)
FAMILIES.register("random", random_integer_instance)
FAMILIES.register("mcf", cell_formation_instance)
FAMILIES.register("equicut", equicut_instance)
FAMILIES.register("signed_gnp", signed_graph_instance)
FAMILIES.register("uniform", uniform_instance)
FAMILIES.register("gauss", gaussian_instance)


def make_instance(family: str, n: int, random_state: Any = None, **kwargs: Any) -> np.ndarray:
    """A dense CPP weight matrix of a named CP-Lib-like family.

    Parameters
    ----------
    family : {"cluster_editing", "random", "mcf", "equicut", "signed_gnp", "uniform", "gauss"}
        See :func:`cluster_editing_instance`, :func:`random_integer_instance`,
        :func:`cell_formation_instance`, :func:`equicut_instance`,
        :func:`signed_graph_instance`, :func:`uniform_instance` and
        :func:`gaussian_instance`.
    n : int
        Number of nodes.
    random_state : None, int or numpy.random.Generator
    **kwargs
        Passed on to the family's generator.

    Returns
    -------
    numpy.ndarray
        ``(n, n)`` symmetric float64 weights with a zero diagonal.

    Raises
    ------
    ValueError
        An unknown family (the message lists the valid ones).

    Examples
    --------
    >>> from trustlab.solvers import partition
    >>> W = make_instance("cluster_editing", 12, random_state=3)
    >>> W.shape
    (12, 12)
    >>> partition(W, random_state=0).status
    'optimal'
    >>> sorted(FAMILIES)
    ['cluster_editing', 'equicut', 'gauss', 'mcf', 'random', 'signed_gnp', 'uniform']
    >>> bool(make_instance("uniform", 50, max_weight=100, random_state=1).max() > 5)
    True
    """
    return FAMILIES[family](n, random_state=random_state, **kwargs)
