"""Compiled (numba) steps of the search: descend with virtual visits or losses, then expand
and back up.

The numpy search (`trapy_rl.mcts.search`, ``compiled=False``) descends all trees one depth
level per vectorized pass; for the few trees of one game that is numpy entering a function per
node. These kernels walk the trees in plain loops instead, and let one game's tree send
several leaves to one evaluator call (leaf parallelism, AlphaGo's and KataGo's):

1. `descend`: in each game, up to ``counts[i]`` descents from the root, one after the other.
   Each picks the PUCT action at every node as `trapy_rl.mcts.policies.select_puct` does (the
   same float32 roundings, the same ties), counting the descents already made in this step on
   their paths as `SearchSettings.virtual` says:

   - ``visits`` (*virtual visits*): an edge with v pending descents scores as if it had v
     more visits of its present value (its exploration term shrinks, its Q stays; an
     unvisited edge keeps the first-play urgency). This is WU-UCT's rule (Liu et al. 2020,
     "Watch the Unobserved"). With the shipped net, 200 simulations and 16 leaves it won
     46.5% of 200 games against the sequential search (95% interval 39.7-53.4%,
     `benchmarks.leaf_strength`), where virtual losses won 32.5% (26.4-39.3%): they spread
     the descents wider (16 leaves a call against 5) than the net's steady values warrant.
   - ``loss`` (*virtual loss*, Chaslot et al. 2008): the v pending visits are lost, -1 each
     for the player choosing the edge: ``Q = (W - v) / (n + v)``. With rollout values (uct,
     1000 simulations, 16 leaves) it won 115 of 200 games against the sequential search,
     57.5% (50.6-64.1%, ``benchmarks.leaf_strength --spec uct --simulations 1000 --seed 1``),
     where virtual visits won 36.0% of 100 (27.3-45.8%): one playout's noisy value moves a Q
     far, and the wide spread is what the rollout search needs. The ``uct`` agents use it.

   Either way the node's ``sqrt(N)`` counts the pending descents too. A descent ends
   at an unexpanded edge, which it claims (`trapy_rl.mcts.tree.PENDING`), or at a terminal
   node. A descent that reaches an edge claimed in this step ends the game's descents for the
   step (a collision: the next ones would repeat it, as they do where the search is sure).
   With forced playouts (self-play's, `trapy_rl.mcts.pruning`) a root child below its forced
   playouts is taken before the PUCT rule is asked, its pending descents counted as visits.
2. The caller replays and evaluates the new leaves (`trapy_rl.game.kernels.play_paths`, one
   evaluator call for all).
3. `expand_and_backup`: in the order of the descents, the new leaves join their trees and each
   leaf's value is added along its path (its sign flipping every ply), removing the pending
   visits.

With one descent per game a step is exactly the numpy search's simulation: the same trees,
bit for bit (tests/mcts/test_kernels.py holds them equal).

Flat ids: node ``j`` of game ``g`` is row ``g * N + j`` of the [B * N] node arrays and of the
[B * N, A] edge arrays (`Tree.rows`). Shapes: n games in the step, M descents, D the longest
path (A + 1 bounds it).
"""

from __future__ import annotations

import numpy as np

from trapy_rl.game.compiled import njit
from trapy_rl.mcts.settings import VIRTUALS
from trapy_rl.mcts.tree import NO_CHILD, PENDING, Tree

__all__ = ["Descents", "descend", "expand_and_backup"]


@njit(nogil=True)
def _select(node, children, priors, edge_visits, edge_q, edge_sums, node_visits, node_sums,
            virtual, base, c_puct, fpu_reduction, virtual_loss, scores):  # fmt: skip
    """The PUCT action at flat node ``node`` with the pending descents counted as virtual
    visits, or as virtual losses where ``virtual_loss`` (see the module docstring).

    ``scores`` is [A] float32 scratch.
    """
    num_actions = priors.shape[1]
    real_visits = node_visits[node]
    scale = np.float32(c_puct * np.sqrt(np.float64(real_visits + virtual[node])))
    fpu = np.float32(node_sums[node] / real_visits - fpu_reduction)
    one, zero = np.float32(1.0), np.float32(0.0)
    p, n, q = priors[node], edge_visits[node], edge_q[node]
    # Exactly select_puct's arithmetic (an unvisited edge's q is 0; a visited one adds 0).
    for a in range(num_actions):
        scores[a] = p[a] * scale / (n[a] + one) + q[a] + (fpu if n[a] == zero else zero)
    if virtual[node] > 0:
        # Edges with pending descents (only below a node with some): n + v visits, of the
        # edge's present value or lost.
        for a in range(num_actions):
            child = children[node, a]
            pending = virtual[base + child] if child >= 0 else (1 if child == PENDING else 0)
            if pending > 0:
                loaded = n[a] + np.float32(pending)
                if virtual_loss:
                    sums = edge_sums[node, a] if n[a] > zero else 0.0
                    q_here = np.float32((sums - pending) / loaded)
                else:
                    q_here = q[a] if n[a] > zero else fpu
                scores[a] = p[a] * scale / (loaded + one) + q_here
    best = 0
    for a in range(1, num_actions):
        if scores[a] > scores[best]:
            best = a
    return best


@njit(nogil=True)
def _forced_root_action(root, children, priors, edge_visits, node_visits, virtual, base,
                        forced_playouts):  # fmt: skip
    """The lowest action at flat root ``root`` whose child is below its forced playouts
    (`trapy_rl.mcts.pruning`), each pending descent counted as a visit; -1 if none."""
    # Every visit of the root but its own evaluation went through a child; so did every
    # pending descent.
    total = np.float64(node_visits[root] - 1 + virtual[root])
    p, n = priors[root], edge_visits[root]
    for a in range(priors.shape[1]):
        if n[a] < 1:
            continue  # unvisited (or illegal): never forced
        child = children[root, a]
        pending = virtual[base + child] if child >= 0 else (1 if child == PENDING else 0)
        visits = np.float64(n[a]) + pending
        if visits * visits < forced_playouts * np.float64(p[a]) * total:
            return a
    return -1


@njit(nogil=True)
def _descend(children, priors, edge_visits, edge_q, edge_sums, node_visits, node_sums, virtual,
             terminal, capacity, games, counts, root_actions, c_puct, fpu_reduction,
             virtual_loss, forced_playouts, out_game, out_nodes, out_actions, out_depth, out_new,
             made):  # fmt: skip
    m = 0
    scores = np.empty(priors.shape[1], dtype=np.float32)
    for i in range(games.shape[0]):
        base = games[i] * capacity
        for j in range(counts[i]):
            node, depth, new, collided = base, 0, False, False
            while True:
                out_nodes[m, depth] = node - base
                action = -1
                if depth == 0 and root_actions.shape[1] > 0:
                    action = root_actions[i, j]
                elif depth == 0 and forced_playouts > 0:
                    action = _forced_root_action(
                        node, children, priors, edge_visits, node_visits, virtual, base,
                        forced_playouts,
                    )  # fmt: skip
                if action < 0:
                    action = _select(
                        node, children, priors, edge_visits, edge_q, edge_sums, node_visits,
                        node_sums, virtual, base, c_puct, fpu_reduction, virtual_loss, scores,
                    )  # fmt: skip
                child = children[node, action]
                if child == PENDING:
                    collided = True
                    break
                out_actions[m, depth] = action
                depth += 1
                if child == NO_CHILD:
                    new = True
                    break
                node = base + child
                if terminal[node]:
                    out_nodes[m, depth] = child
                    break
            if collided:
                break  # the game's next descents would take the same path
            # The pending visit: every existing node of the path counts one; the
            # claimed edge counts one through PENDING.
            for d in range(depth if new else depth + 1):
                virtual[base + out_nodes[m, d]] += 1
            if new:
                children[base + out_nodes[m, depth - 1], out_actions[m, depth - 1]] = PENDING
            out_game[m], out_depth[m], out_new[m] = i, depth, new
            made[i] += 1
            m += 1
    return m


class Descents:
    """The M descents of one step (`descend`'s output), in the order they were made.

    Attributes:
        game: [M] intp, the row in the step's ``games`` of each descent's game.
        nodes: [M, D + 1] intp, node indices (within the game's tree) from the root; entry
            ``depth`` is the leaf, filled in by `expand_and_backup` for a new leaf.
        actions: [M, D] intp, the actions taken, ``depth`` of them.
        depth: [M] intp.
        new: [M] bool, the path ends at an unexpanded edge (a new leaf), not a terminal node.
        made: [n] intp, the descents made in each game (fewer than asked after a collision).
    """

    def __init__(self, capacity: int, num_games: int, max_depth: int) -> None:
        # Written by the kernel before they are read (paths past their depth: never read).
        self.game = np.empty(capacity, dtype=np.intp)
        self.nodes = np.empty((capacity, max_depth + 1), dtype=np.intp)
        self.actions = np.empty((capacity, max_depth), dtype=np.intp)
        self.depth = np.empty(capacity, dtype=np.intp)
        self.new = np.empty(capacity, dtype=np.bool_)
        self.made = np.zeros(num_games, dtype=np.intp)
        self.count = 0

    def trim(self, count: int) -> None:
        """Keep the first ``count`` descents."""
        self.count = count
        for name in ("game", "nodes", "actions", "depth", "new"):
            setattr(self, name, getattr(self, name)[:count])


def descend(
    tree: Tree,
    games: np.ndarray,
    counts: np.ndarray,
    *,
    c_puct: float,
    fpu_reduction: float,
    virtual: str = "visits",
    root_actions: np.ndarray | None = None,
    forced_playouts: float = 0.0,
) -> Descents:
    """Up to ``counts[i]`` descents with virtual visits or losses in the tree of each
    ``games[i]``.

    Args:
        tree: the trees; their priors must be normalized (no pending logits), the roots
            expanded. Mutated: virtual visits and claimed edges, undone by `expand_and_backup`.
        games: [n] intp, distinct games.
        counts: [n] intp, descents to make in each (>= 1).
        c_puct, fpu_reduction: as in `trapy_rl.mcts.policies.select_puct`.
        virtual: how pending descents count, ``visits`` or ``loss`` (`SearchSettings.virtual`).
        root_actions: [n, max(counts)] int, the action each descent takes at the root (the
            gumbel root chooses them), or None for PUCT there too.
        forced_playouts: k > 0: at the root, a child below its forced playouts is taken
            before the PUCT rule is asked (`trapy_rl.mcts.pruning`); 0: PUCT alone.

    Returns:
        The descents (`Descents`), at least one per game.
    """
    if virtual not in VIRTUALS:
        raise ValueError(f"virtual must be one of {VIRTUALS}, got {virtual!r}")
    num_actions = tree.num_actions
    descents = Descents(int(counts.sum()), len(games), num_actions + 1)
    chosen = np.zeros((len(games), 0), dtype=np.intp) if root_actions is None else root_actions
    count = _descend(
        tree.rows("children_index"), tree.rows("priors"), tree.rows("edge_visits"),
        tree.rows("edge_q"), tree.rows("edge_value_sums"), tree.node_visits.reshape(-1),
        tree.node_value_sums.reshape(-1), tree.virtual_visits.reshape(-1),
        tree.terminal.reshape(-1), tree.capacity, games.astype(np.intp),
        counts.astype(np.intp), chosen.astype(np.intp), float(c_puct), float(fpu_reduction),
        virtual == "loss", float(forced_playouts), descents.game, descents.nodes,
        descents.actions, descents.depth, descents.new, descents.made,
    )  # fmt: skip
    descents.trim(count)
    return descents


@njit(nogil=True)
def _expand_and_backup(children, priors, edge_visits, edge_q, edge_sums, node_visits, node_sums,
                       virtual, terminal, pending, parents, actions_from_parent, num_nodes,
                       stale_end, capacity, games, game, nodes, actions, depth, new, ended,
                       leaf_priors, values):  # fmt: skip
    one = np.float32(1.0)
    for k in range(game.shape[0]):
        g = games[game[k]]
        base = g * capacity
        d = depth[k]
        if new[k]:  # allocate the leaf's node as `Tree.allocate` does, and fill it
            leaf = num_nodes[g]
            num_nodes[g] += 1
            row = base + leaf
            node_visits[row] = 0
            node_sums[row] = 0.0
            if leaf < stale_end[g]:
                children[row, :] = NO_CHILD
                edge_visits[row, :] = 0.0
                edge_q[row, :] = 0.0
            stale_end[g] = max(stale_end[g], leaf + 1)
            parent = nodes[k, d - 1]
            children[base + parent, actions[k, d - 1]] = leaf
            parents[row] = parent
            actions_from_parent[row] = actions[k, d - 1]
            terminal[row] = ended[k]
            pending[row] = False
            if ended[k]:
                priors[row, :] = -np.inf
            else:
                priors[row, :] = leaf_priors[k]
            nodes[k, d] = leaf
        for t in range(d if new[k] else d + 1):
            virtual[base + nodes[k, t]] -= 1
        value = values[k]  # for the player to move at the leaf; flips every ply up
        for t in range(d, -1, -1):
            row = base + nodes[k, t]
            node_visits[row] += 1
            node_sums[row] += value
            if t < d:
                a = actions[k, t]
                visits = edge_visits[row, a] + one
                # Slots are not cleared on allocation: a first visit overwrites the sum.
                sums = value if visits == one else edge_sums[row, a] + value
                edge_visits[row, a] = visits
                edge_sums[row, a] = sums
                edge_q[row, a] = np.float32(sums / np.float64(visits))
            value = -value


def expand_and_backup(
    tree: Tree,
    games: np.ndarray,
    descents: Descents,
    ended: np.ndarray,
    leaf_priors: np.ndarray,
    values: np.ndarray,
) -> None:
    """Add the new leaves of ``descents`` to their trees and back up every leaf's value.

    Args:
        tree: the trees `descend` walked (grown beforehand: a node slot per new leaf).
        games: [n] intp, `descend`'s games.
        descents: its result; ``nodes`` gets the new leaves' indices.
        ended: [M] bool, the new leaf's game is over (terminal; unused for the others).
        leaf_priors: [M, A] float32, normalized priors of the evaluated new leaves (-inf at
            illegal actions; other rows unused).
        values: [M] float64, each leaf's value for the player to move there (-1 where the
            game is over).
    """
    _expand_and_backup(
        tree.rows("children_index"), tree.rows("priors"), tree.rows("edge_visits"),
        tree.rows("edge_q"), tree.rows("edge_value_sums"), tree.node_visits.reshape(-1),
        tree.node_value_sums.reshape(-1), tree.virtual_visits.reshape(-1),
        tree.terminal.reshape(-1), tree.pending.reshape(-1), tree.parents.reshape(-1),
        tree.actions_from_parent.reshape(-1), tree.num_nodes, tree.stale_end, tree.capacity,
        games.astype(np.intp), descents.game, descents.nodes, descents.actions, descents.depth,
        descents.new, np.ascontiguousarray(ended, dtype=np.bool_),
        np.ascontiguousarray(leaf_priors, dtype=np.float32),
        np.ascontiguousarray(values, dtype=np.float64),
    )  # fmt: skip
