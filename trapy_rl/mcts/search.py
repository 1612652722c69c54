"""Batched PUCT search: the trees of many games descended, evaluated and backed up together.

Legend: B games (the size of the batch the search serves), n games searched in one call
(``games``), N tree nodes per game, A actions.

One simulation step does, for all n games at once:

1. *select*: descend every tree from its root with `select_puct`, one depth level per
   vectorized pass, until an action whose child is not expanded yet (a new leaf) or a known
   terminal node;
2. *replay*: copy the n root positions and replay each game's path of actions with
   `BatchGame.step`, one depth level per call (no position is stored in the tree);
3. *evaluate*: one evaluator call for every new leaf whose game is not over; a leaf where the
   game is over is scored exactly, -1 for the player to move there (the mover just won);
4. *expand and back up*: add the new leaves to the trees and add the leaf value along each
   path, its sign flipping every ply (the player to move alternates every move, the swap too).

The root of a tree is evaluated once, when the tree is empty; it counts as the root's first
visit. `MCTS.advance` keeps the subtree of the move played, so its statistics carry over.
First-play urgency and the PUCT formula are described in `trapy_rl.mcts.policies`.

Two implementations of the step share the tree. By default (``compiled=True``) the compiled
kernels of `trapy_rl.mcts.kernels` walk the trees and each game sends
``settings.leaves_per_game(B)`` leaves to one evaluator call (leaf parallelism, the pending
descents counted as ``settings.virtual`` says: by default 16 for a search of one game, 1 for
more); the paths are replayed by
`trapy_rl.game.kernels.play_paths`. With ``compiled=False`` the numpy step above runs, one leaf
per game: the plain reference the kernels are tested against (with one leaf per game both
build the same trees, bit for bit), as `trapy_rl.mcts.reference` is for the whole search.

>>> from trapy_rl.game import BatchGame, Board
>>> from trapy_rl.mcts import SearchSettings, select_actions
>>> def uniform(batch, games):
...     legal = batch.legal_mask()[games]
...     return np.where(legal, 0.0, -np.inf).astype(np.float32), np.zeros(len(games), np.float32)
>>> board = Board(4)
>>> batch = BatchGame(2, board)
>>> mcts = MCTS(uniform, board, num_games=2, settings=SearchSettings(num_simulations=16), seed=0)
>>> result = mcts.search(batch, add_noise=True)
>>> result.visit_counts.shape, result.visit_counts.sum(axis=1).tolist()
((2, 23), [16, 16])
>>> actions = select_actions(result.visit_counts, 1.0, np.random.default_rng(0))
>>> _ = batch.step(actions); mcts.advance(actions)  # the played children become the roots
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import numpy as np

from trapy_rl.game.batch import BatchGame
from trapy_rl.game.board import Board
from trapy_rl.game.kernels import play_paths
from trapy_rl.mcts.gumbel import GumbelRoot
from trapy_rl.mcts.kernels import descend, expand_and_backup
from trapy_rl.mcts.policies import (
    add_dirichlet_noise,
    mask_logits,
    normalize_logits,
    select_puct,
)
from trapy_rl.mcts.pruning import check_forced_playouts, forced_children, prune_policy_target
from trapy_rl.mcts.settings import SearchSettings
from trapy_rl.mcts.tree import NO_CHILD, Tree

__all__ = ["MCTS", "Evaluator", "SearchResult"]


class Evaluator(Protocol):
    """Anything that scores positions: a network, a uniform prior, a test oracle.

    Called as ``evaluator(batch, games)`` with ``games`` [n] int indices into ``batch``; returns
    ``(logits [n, A] float32, values [n] float32)``: illegal actions may be -inf (the search
    masks them anyway) and values in [-1, 1] are for the player to move in each game.
    """

    def __call__(self, batch: BatchGame, games: np.ndarray) -> tuple[np.ndarray, np.ndarray]: ...


@dataclass
class SearchResult:
    """What one search returns for the n games searched, in the order of ``games``.

    Attributes:
        games: [n] intp, the games searched.
        visit_counts: [n, A] int32, the root's children's visit counts (reused visits included).
        root_values: [n] float32, the root's mean value for the player to move.
        q_values: [n, A] float32, each root child's mean value for the player to move at the
            root; 0 where the child has no visits.
        priors: [n, A] float32, the evaluator's prior at the root (without noise).
        improved_policy: gumbel search only: [n, A] float32, the policy target
            ``softmax(logits + sigma(completed q))`` (`trapy_rl.mcts.gumbel`); else None.
        selected_actions: gumbel search only: [n] int64, the action to play (the best
            remaining one of sequential halving); else None.
        pruned_policy: a search with forced playouts only: [n, A] float32, the policy target
            after policy target pruning (`trapy_rl.mcts.pruning`); else None.
    """

    games: np.ndarray
    visit_counts: np.ndarray
    root_values: np.ndarray
    q_values: np.ndarray
    priors: np.ndarray
    improved_policy: np.ndarray | None = None
    selected_actions: np.ndarray | None = None
    pruned_policy: np.ndarray | None = None


class MCTS:
    """PUCT search over the games of one batch, with subtree reuse.

    Args:
        evaluator: see `Evaluator`.
        board: the board of the games.
        num_games: B, the size of the batches `search` receives.
        settings: simulations per `search` call (unless the call says otherwise), c_puct,
            first-play urgency and the root noise of ``add_noise=True`` (default
            ``SearchSettings()``).
        capacity: initial nodes per tree (default ``num_simulations + 1``); trees grow as needed.
        seed: seed of the generator used for the root noise.
        compiled: run the compiled step (`trapy_rl.mcts.kernels`, several leaves per game
            and evaluator call as ``settings.leaves`` says); False runs the numpy reference
            step, one leaf per game (``leaves`` must then be 0 or 1).

    Attributes:
        leaves: the leaves each game sends to one evaluator call
            (`SearchSettings.leaves_per_game` of B).
    """

    def __init__(
        self,
        evaluator: Evaluator,
        board: Board,
        *,
        num_games: int,
        settings: SearchSettings | None = None,
        capacity: int | None = None,
        seed: int | None = None,
        compiled: bool = True,
    ):
        if not callable(evaluator):
            raise TypeError(f"evaluator must be callable, got {type(evaluator).__name__}")
        settings = SearchSettings() if settings is None else settings
        if not isinstance(settings, SearchSettings):
            raise TypeError(f"settings must be a SearchSettings, got {type(settings).__name__}")
        if not compiled and settings.leaves > 1:
            raise ValueError(
                f"leaves={settings.leaves}: the numpy search (compiled=False) evaluates one "
                "leaf per game a step"
            )
        self.evaluator = evaluator
        self.board = board
        self.num_games = int(num_games)
        self.settings = settings
        self.compiled = bool(compiled)
        self.leaves = settings.leaves_per_game(num_games) if compiled else 1
        self.rng = np.random.default_rng(seed)
        self.tree = Tree(num_games, board.num_actions, capacity or settings.num_simulations + 1)
        # The position each tree's root stands for: its move count and history.
        self._root_move_count = np.zeros(num_games, dtype=np.int16)
        self._root_history = np.full((num_games, board.num_cells + 1), -1, dtype=np.int16)

    # ------------------------------------------------------------------ tree management
    def reset(self, games: np.ndarray | None = None) -> None:
        """Forget the trees of ``games`` ([n] int or [B] bool; default all)."""
        self.tree.reset(self._game_indices(games))

    def advance(self, actions: np.ndarray) -> None:
        """Move every root to the child of the action played, keeping that child's subtree.

        Args:
            actions: [B] int, the action played in each game; -1 leaves that game's tree as it
                is. A game whose tree lacks the child (or where the move ended the game) gets
                an empty tree.
        """
        actions = np.asarray(actions)
        if actions.shape != (self.num_games,):
            raise ValueError(f"actions must have shape ({self.num_games},), got {actions.shape}")
        if ((actions < -1) | (actions >= self.board.num_actions)).any():
            raise ValueError(f"actions must be in -1..{self.board.num_actions - 1}")
        moved = np.flatnonzero(actions >= 0)
        acts = actions[moved].astype(np.intp)
        full = self._root_move_count[moved] >= self._root_history.shape[1]
        if full.any():
            raise ValueError(f"games {moved[full][:10].tolist()} have no moves left to advance")
        self._root_history[moved, self._root_move_count[moved]] = acts
        self._root_move_count[moved] += 1
        tree = self.tree
        live = tree.num_nodes[moved] > 0
        moved, acts = moved[live], acts[live]
        children = tree.children_index[moved, 0, acts]
        reusable = children != NO_CHILD
        reusable[reusable] = ~tree.terminal[moved[reusable], children[reusable]]
        tree.reset(moved[~reusable])
        tree.compact(moved[reusable], children[reusable])

    # ------------------------------------------------------------------ search
    def search(
        self,
        batch: BatchGame,
        *,
        games: np.ndarray | None = None,
        add_noise: bool = False,
        num_simulations: int | None = None,
        forced_playouts: float = 0.0,
    ) -> SearchResult:
        """Run ``num_simulations`` new simulations in each of ``games`` (default all).

        Args:
            batch: the current positions of the B games; not modified.
            games: [n] int or [B] bool, the games to search (all must be in play).
            add_noise: self-play's exploration: Dirichlet noise in the root priors (puct), or
                Gumbel noise on the root logits (gumbel; without it the search is
                deterministic and plays its best action).
            num_simulations: overrides the default of this search.
            forced_playouts: self-play's k of KataGo's forced playouts at the root, whose
                result then holds the pruned policy target (`trapy_rl.mcts.pruning`); 0 (the
                default): none. The puct search only.

        A gumbel search starts every root afresh (its schedule counts this search's visits).
        """
        if batch.board is not self.board:
            raise ValueError(f"batch is on {batch.board}, the search on {self.board}")
        if batch.num_games != self.num_games:
            raise ValueError(f"batch has {batch.num_games} games, the search {self.num_games}")
        sims = self.settings.num_simulations if num_simulations is None else int(num_simulations)
        if sims < 0:
            raise ValueError(f"num_simulations must be >= 0, got {sims}")
        forced = check_forced_playouts(forced_playouts)
        use_gumbel = self.settings.search == "gumbel"
        if forced and use_gumbel:
            raise ValueError(
                "forced_playouts is for the puct search: the gumbel search's policy target is "
                "its improved policy, not its visit counts"
            )
        gs = self._game_indices(games)
        over = batch.winner[gs] != 0
        if over.any():
            raise ValueError(f"games {gs[over][:10].tolist()} are over; there is nothing to search")
        roots = batch.take(gs)
        self._check_roots(gs, roots)
        tree = self.tree
        if use_gumbel:
            tree.reset(gs)
        fresh = tree.num_nodes[gs] == 0
        self._root_move_count[gs] = roots.move_count
        self._root_history[gs] = roots.history
        tree.grow(int(tree.num_nodes[gs].max(initial=0)) + sims + 1)
        if fresh.any():
            tree.clear_stale(gs[fresh])
            self._expand_roots(gs, roots, np.flatnonzero(fresh))
        self._settle_priors(tree.node_ids(gs, 0))
        clean_priors = tree.priors[gs, 0].copy()  # [n, A] float32, -inf at illegal actions
        root = None
        if use_gumbel:
            root = GumbelRoot(
                tree, self.settings, self.rng, gs, clean_priors, sims, add_noise=add_noise
            )
        elif add_noise:
            legal = clean_priors > -np.inf
            noisy = add_dirichlet_noise(
                np.maximum(clean_priors, 0.0),
                legal,
                self.rng,
                dirichlet_alpha=self.settings.dirichlet_alpha,
                dirichlet_fraction=self.settings.dirichlet_fraction,
            )
            tree.priors[gs, 0] = np.where(legal, noisy, -np.inf)
        search_priors = tree.priors[gs, 0].copy() if forced else None  # [n, A], noise included
        try:
            if self.compiled:
                self._simulate_compiled(gs, roots, sims, root, forced)
            else:
                scratch = roots.copy()
                for i in range(sims):
                    root_actions = None if root is None else root.actions(i)
                    self._simulate(gs, roots, scratch, root_actions, forced)
        finally:
            tree.priors[gs, 0] = clean_priors
        result = self._result(gs, clean_priors)
        if root is not None:
            result.improved_policy, result.selected_actions = root.finish()
        if forced:
            result.pruned_policy = prune_policy_target(
                search_priors,
                tree.edge_visits[gs, 0],
                tree.edge_q[gs, 0],
                tree.node_visits[gs, 0],
                c_puct=self.settings.c_puct,
                forced_playouts=forced,
            )
        return result

    def _simulate(
        self,
        gs: np.ndarray,
        roots: BatchGame,
        scratch: BatchGame,
        root_actions: np.ndarray | None = None,
        forced_playouts: float = 0.0,
    ) -> None:
        """One simulation in each game of ``gs``: select, replay, evaluate, expand, back up.

        Nodes are addressed by flat ids ``game * N + node`` into [B * N, A] views of the tree.
        ``root_actions`` ([n] int), when given, are the actions taken at the roots (gumbel);
        with ``forced_playouts`` > 0 a root child below its forced playouts comes first.
        """
        tree = self.tree
        n, num_actions = len(gs), tree.num_actions
        priors, edge_visits = tree.rows("priors"), tree.rows("edge_visits")
        edge_q, children = tree.rows("edge_q"), tree.children_index.reshape(-1)
        node_visits, node_sums = tree.node_visits.reshape(-1), tree.node_value_sums.reshape(-1)
        terminal = tree.terminal.reshape(-1)
        base = gs * tree.capacity  # [n] flat id of each root
        # --- select: one depth level per pass over the games still descending.
        path_ids = [base]  # path_ids[d][i]: flat id of game i's node at depth d
        path_actions = []  # path_actions[d][i]: the action taken there, -1 past the path's end
        active, current = np.arange(n), base
        leaf_parent = np.zeros(n, dtype=np.intp)
        leaf_action = np.full(n, -1, dtype=np.intp)  # -1: the path ends at a terminal node
        while active.size:
            self._settle_priors(current)
            if root_actions is not None and not path_actions:  # the root level
                actions = root_actions.astype(np.intp)
            else:
                actions = select_puct(
                    np.take(priors, current, axis=0),
                    np.take(edge_visits, current, axis=0),
                    np.take(edge_q, current, axis=0),
                    node_visits[current],
                    node_sums[current],
                    c_puct=self.settings.c_puct,
                    fpu_reduction=self.settings.fpu_reduction,
                )
                if forced_playouts and not path_actions:  # the root level: every game
                    forced = forced_children(
                        np.take(priors, current, axis=0),
                        np.take(edge_visits, current, axis=0),
                        forced_playouts=forced_playouts,
                    )
                    under = forced.any(axis=1)
                    actions[under] = forced[under].argmax(axis=1)  # the lowest such action
            level = np.full(n, -1, dtype=np.intp)
            level[active] = actions
            path_actions.append(level)
            child = children[current * num_actions + actions]
            new = child < 0
            leaf_parent[active[new]] = current[new]
            leaf_action[active[new]] = actions[new]
            active, child = active[~new], child[~new]
            child_ids = base[active] + child
            ids = np.full(n, -1, dtype=np.intp)
            ids[active] = child_ids
            path_ids.append(ids)
            go_on = ~terminal[child_ids]
            active, current = active[go_on], child_ids[go_on]
        depth = np.zeros(n, dtype=np.intp)
        for d, level in enumerate(path_actions):
            depth[level >= 0] = d + 1
        expanding = np.flatnonzero(leaf_action >= 0)

        # --- replay the paths of the games with a new leaf; the others stay frozen.
        scratch.copy_from(roots)
        frozen = leaf_action < 0
        scratch.winner[frozen] = 1  # a game "over" ignores its action in `step`
        ended = np.zeros(n, dtype=bool)
        if expanding.size:
            for level in path_actions:
                stop = (level < 0) & ~frozen
                frozen |= stop
                scratch.winner[stop] = 1
                ended |= scratch.step(np.maximum(level, 0))
        # --- evaluate the new leaves in play, all in one call; the others are exact.
        values = np.full(n, -1.0)  # a terminal leaf: the player to move there has lost
        evaluate = expanding[~ended[expanding]]
        if evaluate.size:
            scratch.winner[evaluate] = 0
            logits, leaf_values = self.evaluator(scratch, evaluate)
            legal = scratch.legal_mask()[evaluate]
            leaf_logits = mask_logits(np.asarray(logits), legal)  # normalized when selected
            values[evaluate] = self._checked_values(leaf_values, evaluate.size)
        # --- expand: the new leaves join their trees.
        if expanding.size:
            g = gs[expanding]
            new_nodes = tree.allocate(g)
            new_ids = tree.node_ids(g, new_nodes)
            parent_ids, acts = leaf_parent[expanding], leaf_action[expanding]
            children[parent_ids * num_actions + acts] = new_nodes
            tree.parents.reshape(-1)[new_ids] = parent_ids - g * tree.capacity
            tree.actions_from_parent.reshape(-1)[new_ids] = acts
            is_end = ended[expanding]
            terminal[new_ids] = is_end
            tree.pending.reshape(-1)[new_ids] = ~is_end
            priors[new_ids[is_end]] = -np.inf
            if evaluate.size:
                priors[new_ids[~is_end]] = leaf_logits
            for d in range(1, len(path_ids)):
                here = depth[expanding] == d
                path_ids[d][expanding[here]] = new_ids[here]
        self._backup(path_ids, path_actions, depth, values)

    def _simulate_compiled(
        self,
        gs: np.ndarray,
        roots: BatchGame,
        sims: int,
        root: GumbelRoot | None,
        forced_playouts: float = 0.0,
    ) -> None:
        """``sims`` simulations in each game of ``gs`` by the compiled steps, each game
        sending up to `leaves` new leaves to each evaluator call (forced playouts at the
        roots where ``forced_playouts`` > 0)."""
        done = np.zeros(len(gs), dtype=np.intp)  # simulations made in each game
        try:
            while (done < sims).any():
                counts = np.minimum(sims - done, self.leaves)  # 0 for the games finished
                step = np.flatnonzero(counts > 0)
                root_actions = None
                if root is not None:
                    root_actions = root.batch_actions(done[step], counts[step], games=step)
                made = self._step_compiled(
                    gs[step], roots, step, counts[step], root_actions, forced_playouts
                )
                done[step] += made
        except BaseException:
            # A failed step leaves claimed edges and virtual visits behind: drop those trees.
            self.tree.virtual_visits[gs] = 0
            self.tree.reset(gs)
            raise

    def _step_compiled(
        self,
        gs: np.ndarray,
        roots: BatchGame,
        rows: np.ndarray,
        counts: np.ndarray,
        root_actions: np.ndarray | None,
        forced_playouts: float = 0.0,
    ) -> np.ndarray:
        """One step in the games ``gs`` ([n]; ``rows`` their rows in ``roots``): descend
        ``counts`` times in each, evaluate the new leaves in one call, expand and back up.

        Returns:
            [n] intp, the simulations made in each game (>= 1).
        """
        tree = self.tree
        settings = self.settings
        descents = descend(
            tree,
            gs,
            counts,
            c_puct=settings.c_puct,
            fpu_reduction=settings.fpu_reduction,
            virtual=settings.virtual,
            root_actions=root_actions,
            forced_playouts=forced_playouts,
        )
        m = descents.count
        values = np.full(m, -1.0)  # a terminal leaf: the player to move there has lost
        ended = np.zeros(m, dtype=bool)
        leaf_priors = np.zeros((m, tree.num_actions), dtype=np.float32)
        expanding = np.flatnonzero(descents.new)
        if expanding.size:
            # Replay the new leaves' paths from copies of their roots; evaluate those in play.
            leaves = roots.take(rows[descents.game[expanding]])
            ended[expanding] = play_paths(
                leaves, descents.actions[expanding], descents.depth[expanding]
            )
            live = np.flatnonzero(~ended[expanding])
            if live.size:
                logits, leaf_values = self.evaluator(leaves, live)
                legal = leaves.legal_mask()[live]
                masked = mask_logits(np.asarray(logits), legal)
                evaluated = expanding[live]
                leaf_priors[evaluated] = normalize_logits(masked, illegal_value=-np.inf)
                values[evaluated] = self._checked_values(leaf_values, live.size)
        expand_and_backup(tree, gs, descents, ended, leaf_priors, values)
        return descents.made

    def _backup(
        self,
        path_ids: list[np.ndarray],
        path_actions: list[np.ndarray],
        depth: np.ndarray,
        values: np.ndarray,
    ) -> None:
        """Add each leaf's value along its path; it flips sign at every ply up to the root."""
        tree = self.tree
        num_actions = tree.num_actions
        node_visits, node_sums = tree.node_visits.reshape(-1), tree.node_value_sums.reshape(-1)
        edge_visits, edge_sums = tree.edge_visits.reshape(-1), tree.edge_value_sums.reshape(-1)
        edge_q = tree.edge_q.reshape(-1)
        # The value at depth d for the player to move there: leaf value * (-1) ** (depth - d).
        at_even_depths = np.where(depth % 2 == 0, values, -values)
        for d in range(len(path_ids) - 1, -1, -1):
            on_path = np.flatnonzero(depth >= d)
            ids = path_ids[d][on_path]
            value = at_even_depths[on_path] if d % 2 == 0 else -at_even_depths[on_path]
            node_visits[ids] += 1
            node_sums[ids] += value
            if d < len(path_actions):
                below = depth[on_path] > d
                edges = ids[below] * num_actions + path_actions[d][on_path[below]]
                visits = edge_visits[edges] + 1
                # Slots are not cleared on allocation: a first visit overwrites the sum.
                sums = np.where(visits == 1, value[below], edge_sums[edges] + value[below])
                edge_visits[edges] = visits
                edge_sums[edges] = sums
                edge_q[edges] = sums / visits

    # ------------------------------------------------------------------ helpers
    def _expand_roots(self, gs: np.ndarray, roots: BatchGame, fresh: np.ndarray) -> None:
        tree = self.tree
        g = gs[fresh]
        logits, values = self.evaluator(roots, fresh)
        legal = roots.legal_mask()[fresh]
        masked = mask_logits(np.asarray(logits), legal)
        values = self._checked_values(values, fresh.size)
        tree.reset(g)
        nodes = tree.allocate(g)
        tree.parents[g, nodes] = -1
        tree.actions_from_parent[g, nodes] = -1
        tree.terminal[g, nodes] = False
        tree.pending[g, nodes] = True
        tree.priors[g, nodes] = masked
        tree.node_visits[g, nodes] = 1
        tree.node_value_sums[g, nodes] = values

    def _settle_priors(self, ids: np.ndarray) -> None:
        """Turn the pending logits of the nodes ``ids`` ([n] flat ids) into priors."""
        pending = self.tree.pending.reshape(-1)
        ids = ids[pending[ids]]
        if ids.size:
            priors = self.tree.rows("priors")
            priors[ids] = normalize_logits(priors[ids], illegal_value=-np.inf)
            pending[ids] = False

    def _checked_values(self, values: np.ndarray, n: int) -> np.ndarray:
        values = np.asarray(values, dtype=np.float64)
        if values.shape != (n,):
            raise ValueError(f"evaluator returned values of shape {values.shape}, expected ({n},)")
        if not (np.abs(values) <= 1.0).all():
            raise ValueError("evaluator values must be finite and in [-1, 1]")
        return values

    def _check_roots(self, gs: np.ndarray, roots: BatchGame) -> None:
        """A kept tree must stand for the position in the batch (else: advance or reset)."""
        kept = np.flatnonzero(self.tree.num_nodes[gs] > 0)
        if kept.size == 0:
            return
        same = self._root_move_count[gs[kept]] == roots.move_count[kept]
        same &= (self._root_history[gs[kept]] == roots.history[kept]).all(axis=1)
        if not same.all():
            bad = gs[kept[~same]][:10].tolist()
            raise ValueError(
                f"the search trees of games {bad} are not at the batch's positions; "
                "call advance(actions) after each move, or reset(games) for new positions"
            )

    def _result(self, gs: np.ndarray, priors: np.ndarray) -> SearchResult:
        tree = self.tree
        root_values = tree.node_value_sums[gs, 0] / tree.node_visits[gs, 0]
        return SearchResult(
            games=gs,
            visit_counts=tree.edge_visits[gs, 0].astype(np.int32),
            root_values=root_values.astype(np.float32),
            q_values=tree.edge_q[gs, 0].astype(np.float32),
            priors=np.maximum(priors, 0.0).astype(np.float32),
        )

    def _game_indices(self, games: np.ndarray | None) -> np.ndarray:
        if games is None:
            return np.arange(self.num_games)
        games = np.asarray(games)
        if games.dtype == bool:
            if games.shape != (self.num_games,):
                raise ValueError(f"a bool games mask must have shape ({self.num_games},)")
            return np.flatnonzero(games)
        if games.ndim != 1 or not np.issubdtype(games.dtype, np.integer):
            raise ValueError(f"games must be a 1-d array of indices, got {games!r}")
        if ((games < 0) | (games >= self.num_games)).any():
            raise ValueError(f"games must be in 0..{self.num_games - 1}")
        if len(np.unique(games)) != len(games):
            raise ValueError("games must not repeat")
        return games.astype(np.intp)
