"""The search trees of B games, as preallocated arrays (one tree per game, like mctx's ``Tree``).

Legend: B games, N node slots per tree, A actions. Node 0 is the root of every tree; a tree with
``num_nodes == 0`` is empty. Nodes are numbered in the order they were created, so a parent's
index is always below its children's. No position is stored per node: the search replays the
actions from the root (the engine copies and steps cheaply).

Values are from the view of the player to move at the node that owns them. The statistics of
an edge (node, action) are kept at the parent, in the parent's view: ``edge_value_sums`` adds
the value of each simulation through the edge for the player to move at the parent.

Slots past ``num_nodes`` may hold stale data: `reset` and `compact` only move counters and the
kept nodes. A stale slot is cleared when `allocate` hands it out, or in bulk by `clear_stale`
(one pass over a whole empty tree is much cheaper than clearing its nodes one step at a time).

Mutating methods: `reset`, `grow`, `allocate`, `clear_stale`, `compact`. The search mutates the
statistics.
"""

from __future__ import annotations

import numpy as np

__all__ = ["Tree"]

NO_CHILD = -1
# During one step of the leaf-parallel search: the edge leads to a leaf that a descent of this
# step claimed, to be expanded at the end of the step (`trapy_rl.mcts.kernels`).
PENDING = -2


class Tree:
    """B search trees of up to N nodes each.

    Attributes:
        capacity: N, node slots per tree (`grow` raises it).
        num_nodes: [B] int32, nodes in use in each tree (0: empty tree).
        stale_end: [B] int32, slots at or past it are clean (children -1, visits and Q 0).
        parents: [B, N] int32, the parent of each node (-1 at the root).
        actions_from_parent: [B, N] int16, the action leading to each node (-1 at the root).
        terminal: [B, N] bool, the game is over at the node (the player who just moved won).
        node_visits: [B, N] int32, simulations through the node, counting its own evaluation.
        node_value_sums: [B, N] float64, their values for the player to move at the node.
        virtual_visits: [B, N] int32, descents through the node waiting for their leaf's
            evaluation (the leaf-parallel search's virtual visits); 0 between steps.
        children_index: [B, N, A] int32, the child reached by each action, -1 if not expanded
            (-2, `PENDING`, only within a step of the leaf-parallel search).
        pending: [B, N] bool, the node's ``priors`` row still holds the evaluator's masked
            logits: the softmax is taken when a simulation first selects from the node (most
            leaves never are), by `normalize_logits`, which gives the same numbers.
        priors: [B, N, A] float32, the prior of each legal action; -inf marks an illegal one
            (every action of a terminal node), which makes its PUCT score -inf.
        edge_visits: [B, N, A] float32, simulations through each edge (the child's visit
            count; whole numbers, exact below 2**24). float32 keeps the PUCT arithmetic in one
            dtype, which numpy runs several times faster than mixed or float64 arithmetic.
        edge_value_sums: [B, N, A] float64, their values for the player to move at the parent;
            meaningful only where ``edge_visits > 0`` (not cleared on allocation).
        edge_q: [B, N, A] float32, ``edge_value_sums / edge_visits``, 0 where not visited.
    """

    def __init__(self, num_games: int, num_actions: int, capacity: int):
        if num_games < 1:
            raise ValueError(f"num_games must be >= 1, got {num_games}")
        if capacity < 1:
            raise ValueError(f"capacity must be >= 1 node, got {capacity}")
        self.num_games = int(num_games)
        self.num_actions = int(num_actions)
        self.num_nodes = np.zeros(num_games, dtype=np.int32)
        self.stale_end = np.zeros(num_games, dtype=np.int32)
        self._allocate_arrays(int(capacity))

    def _allocate_arrays(self, capacity: int) -> None:
        b, a = self.num_games, self.num_actions
        self.capacity = capacity
        self.parents = np.full((b, capacity), -1, dtype=np.int32)
        self.actions_from_parent = np.full((b, capacity), -1, dtype=np.int16)
        self.terminal = np.zeros((b, capacity), dtype=bool)
        self.pending = np.zeros((b, capacity), dtype=bool)
        self.node_visits = np.zeros((b, capacity), dtype=np.int32)
        self.node_value_sums = np.zeros((b, capacity), dtype=np.float64)
        self.virtual_visits = np.zeros((b, capacity), dtype=np.int32)
        self.children_index = np.full((b, capacity, a), NO_CHILD, dtype=np.int32)
        self.priors = np.full((b, capacity, a), -np.inf, dtype=np.float32)
        self.edge_visits = np.zeros((b, capacity, a), dtype=np.float32)
        self.edge_value_sums = np.zeros((b, capacity, a), dtype=np.float64)
        self.edge_q = np.zeros((b, capacity, a), dtype=np.float32)

    _NODE_FIELDS = (
        "parents",
        "actions_from_parent",
        "terminal",
        "pending",
        "node_visits",
        "node_value_sums",
        "virtual_visits",
    )
    _EDGE_FIELDS = ("children_index", "priors", "edge_visits", "edge_value_sums", "edge_q")

    # ------------------------------------------------------------------ capacity
    def grow(self, capacity: int) -> None:
        """Make room for at least ``capacity`` nodes per tree, keeping every tree."""
        if capacity <= self.capacity:
            return
        old = {name: getattr(self, name) for name in (*self._NODE_FIELDS, *self._EDGE_FIELDS)}
        self._allocate_arrays(int(capacity))
        for name, array in old.items():
            getattr(self, name)[:, : array.shape[1]] = array

    def allocate(self, games: np.ndarray) -> np.ndarray:
        """Hand out one cleared node slot in each of ``games`` ([n] int, distinct).

        Returns:
            [n] intp, the new node indices. The caller sets parent, action and the rest.
        """
        nodes = self.num_nodes[games].astype(np.intp)
        if nodes.size and nodes.max() >= self.capacity:
            raise RuntimeError("search tree is full; grow it before allocating")
        self.num_nodes[games] += 1
        rows = self.node_ids(games, nodes)
        self.node_visits.reshape(-1)[rows] = 0
        self.node_value_sums.reshape(-1)[rows] = 0.0
        stale = nodes < self.stale_end[games]
        if stale.any():
            rows = rows[stale]
            self.rows("children_index")[rows] = NO_CHILD
            self.rows("edge_visits")[rows] = 0.0
            self.rows("edge_q")[rows] = 0.0
        self.stale_end[games] = np.maximum(self.stale_end[games], nodes + 1)
        return nodes

    def clear_stale(self, games: np.ndarray) -> None:
        """Clear every slot of the empty trees among ``games`` ([n] int) in one pass."""
        games = games[(self.num_nodes[games] == 0) & (self.stale_end[games] > 0)]
        if games.size == 0:
            return
        width = int(self.stale_end[games].max())
        self.children_index[games, :width] = NO_CHILD
        self.edge_visits[games, :width] = 0.0
        self.edge_q[games, :width] = 0.0
        self.stale_end[games] = 0

    # ------------------------------------------------------------------ flat views
    def node_ids(self, games: np.ndarray, nodes: np.ndarray) -> np.ndarray:
        """[n] intp, the flat index ``game * N + node`` of each (game, node) pair."""
        return games * self.capacity + nodes

    def rows(self, name: str) -> np.ndarray:
        """[B * N, A] view of an edge array, indexed by `node_ids` (faster than [g, node])."""
        array = getattr(self, name)
        return array.reshape(self.num_games * self.capacity, self.num_actions)

    # ------------------------------------------------------------------ whole trees
    def principal_variation(self, game: int, *, max_length: int = 32) -> list[int]:
        """The line the search expects in ``game``: the most visited edge from each node.

        From the root, follow the edge with the most visits (the lowest action among equals)
        while it leads to an expanded child, up to ``max_length`` actions.

        Returns:
            The actions, from the root's; empty for an empty or unvisited tree.
        """
        line: list[int] = []
        node = 0
        while len(line) < max_length and node < self.num_nodes[game]:
            visits = self.edge_visits[game, node]  # [A] float32
            action = int(np.argmax(visits))
            if visits[action] <= 0:
                break
            line.append(action)
            node = int(self.children_index[game, node, action])
            if node == NO_CHILD:
                break
        return line

    def reset(self, games: np.ndarray) -> None:
        """Empty the trees of ``games`` ([n] int)."""
        self.num_nodes[games] = 0

    def compact(self, games: np.ndarray, new_roots: np.ndarray) -> None:
        """Keep only the subtree of ``new_roots`` [n] in each of ``games`` [n], rooted at node 0.

        Statistics are kept as they are; nodes keep their relative order (parents first).
        """
        games = np.asarray(games, dtype=np.intp)
        if games.size == 0:
            return
        new_roots = np.asarray(new_roots, dtype=np.intp)
        used = int(self.num_nodes[games].max())
        rows = np.arange(len(games))[:, None]
        slots = np.arange(used)
        in_use = slots[None, :] < self.num_nodes[games][:, None]  # [n, used]
        parents = np.where(in_use, self.parents[games, :used], 0)
        parents = np.maximum(parents, 0)
        keep = slots[None, :] == new_roots[:, None]
        # Descendants join one generation per pass (the root, node 0, is never kept).
        while True:
            grown = keep | (keep[rows, parents] & in_use)
            if np.array_equal(grown, keep):
                break
            keep = grown
        kept = keep.sum(axis=1)
        new_index = np.cumsum(keep, axis=1) - 1  # [n, used], valid where keep
        width = int(kept.max())
        order = np.argsort(~keep, axis=1, kind="stable")[:, :width]  # kept nodes first
        gathered = {}
        for name in (*self._NODE_FIELDS, *self._EDGE_FIELDS):
            gathered[name] = getattr(self, name)[games[:, None], order]
        # Rows past a tree's kept count hold stale slots whose indices may point anywhere: clip
        # them into range (their values are discarded; `allocate` clears those slots later).
        children = gathered["children_index"]
        remapped = new_index[rows[:, :, None], np.clip(children, 0, used - 1)]
        gathered["children_index"] = np.where(children >= 0, remapped, NO_CHILD).astype(np.int32)
        parent_of = gathered["parents"]
        gathered["parents"] = np.where(
            parent_of >= 0, new_index[rows, np.clip(parent_of, 0, used - 1)], -1
        ).astype(np.int32)
        gathered["parents"][:, 0] = -1
        gathered["actions_from_parent"][:, 0] = -1
        # Slots past a tree's kept count receive stale copies; `allocate` clears them later.
        for name, array in gathered.items():
            getattr(self, name)[games, :width] = array
        self.num_nodes[games] = kept
