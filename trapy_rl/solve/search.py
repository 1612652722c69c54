"""The compiled searches: df-pn and win/loss alpha-beta over one board, from one root.

Compiled with numba (``cache=True``: the first use on a machine compiles for some seconds,
later runs load the cache). Both searches are iterative, one frame per depth: numba's cache
cannot hold recursive functions (numba issue #6061).

A position is ``stones`` (0 empty, 1 blue, 2 yellow), the player to move and a swap state:
`SWAP_NONE`; `SWAP_LEGAL` (the position's only stone is the opponent's and the swap is legal
now: the second move); `SWAP_RULE` (an empty board whose second move may swap). The swap turns
the opponent's lone stone into the mover's colour and passes the turn, so, seen from the
player to move, the position after a swap is the same stones without the swap: the table
finds it under the same key.

- **df-pn** (Nagai 2002) in negamax form: ``pn(n) = min dn(child)``, ``dn(n) = sum
  pn(child)``; it descends into the child of least dn with thresholds ``thpn(child) = thdn(n)
  - dn(n) + pn(child)`` and ``thdn(child) = min(thpn(n), ceil(dn2 * (1 + eps)) + 1)`` (dn2:
  the second least; the 1 + eps of Pawlewicz and Lew 2007) and returns once its numbers pass
  its own thresholds. A frame keeps its children's numbers, reads them from the table when it
  is entered and takes a child's from the child when it returns.
- **proof sets** (df-pn, boards of at most 64 cells, no swap): a proven node keeps the cells
  its proof rests on (`trapy_rl.solve.analysis` gives them for the positions it decides): a
  won node its winning child's set and that move; a lost node the union of its children's
  sets (and their mirror images where the node is its own), with the cells that justified
  the moves the analysis left out. When a child is proven lost for the mover with set P,
  every sibling placement outside P loses too: the stone there, compared with the child's,
  leaves one more cell empty (never better for the mover, whose stone could only help) and
  takes a cell the opponent's proof does not need. So once children are proven lost, the
  siblings outside the intersection of their sets are dropped unsearched (Hex solvers'
  pruning by proof sets; Henderson 2010).
- **alpha-beta** on win/loss values: the first child lost for its mover proves the node; the
  move that did so earns credit in a history table that orders later nodes.

Both take their moves from `trapy_rl.solve.analysis.analyse`, store every result in the table
of `trapy_rl.solve.table`, and mutate ``stones`` while they run, restoring it before they
return. Shapes: K cells, A = K + 1 actions (action K is the swap), D = K + 2 depths.
"""

from __future__ import annotations

import numpy as np

from trapy_rl.game.compiled import njit
from trapy_rl.solve.analysis import (
    INFO_SIZE,
    SWAP_LEGAL,
    SWAP_NONE,
    SWAP_RULE,
    SYMMETRIC,
    WIN_CELL,
    analyse,
    cell_set,
    new_scratch,
)
from trapy_rl.solve.table import INF, child_keys, mirror_set, position_keys, probe, save

__all__ = ["ALPHABETA", "DFPN", "SWAP_LEGAL", "SWAP_NONE", "SWAP_RULE", "solve_root"]

DFPN, ALPHABETA = 0, 1
# The stats vector of a search: [nodes, node budget, aborted, error].
NODES, BUDGET, ABORTED, ERROR = 0, 1, 2, 3
_UNKNOWN = np.uint64(0xFFFFFFFFFFFFFFFF)  # a proof set with every cell: nothing known


@njit()
def _play(stones, mover, swap, action):
    """Apply ``action`` (mutating ``stones``); returns the child's (mover, swap, undo cell)."""
    k = stones.shape[0]
    if action == k:
        x = 0
        while stones[x] == 0:  # the opponent's lone stone becomes the mover's
            x += 1
        stones[x] = mover
        return 3 - mover, SWAP_NONE, x
    stones[action] = mover
    return 3 - mover, SWAP_LEGAL if swap == SWAP_RULE else SWAP_NONE, action


@njit()
def _child_swap(swap, action, k):
    """The swap state after ``action``: offered after the first move, else gone."""
    if action != k and swap == SWAP_RULE:
        return SWAP_LEGAL
    return SWAP_NONE


@njit()
def _child_of(keys, action, k, mir, zob, out):
    """Keys of the child after ``action``: a placement, or the swap (the same view)."""
    if action == k:
        for i in range(8):
            out[i] = keys[i]
    else:
        child_keys(keys, action, mir[action], zob, out)


@njit()
def _pop(stones, depth, movers, played, undo):
    """Leave the frame at ``depth``: take back the move that led to it; the parent's depth."""
    if depth > 0:
        mover, action, cell = movers[depth - 1], played[depth - 1], undo[depth - 1]
        if action == stones.shape[0]:
            stones[cell] = 3 - mover  # the swapped stone is the opponent's again
        else:
            stones[cell] = 0
    return depth - 1


@njit()
def _dfpn(stones, mover, swap, eps, deep, connections, sets, tables, bias, table, work, stats):
    """df-pn from the root until its numbers pass infinite thresholds or the budget is spent;
    ``sets``: prune by proof sets (on boards of at most 64 cells)."""
    nbr, reg, win, mir, zob, wins_with = tables
    scratch, moves, forcing, infos, keys, proofs = work
    k = stones.shape[0]
    size = moves.shape[0]
    movers = np.empty(size, dtype=np.int64)
    swaps = np.empty(size, dtype=np.int64)
    thpns = np.empty(size, dtype=np.int64)
    thdns = np.empty(size, dtype=np.int64)
    starts = np.empty(size, dtype=np.int64)
    counts = np.empty(size, dtype=np.int64)
    chosen = np.empty(size, dtype=np.int64)
    played = np.empty(size, dtype=np.int64)
    undo = np.empty(size, dtype=np.int64)
    cpn = np.empty((size, k + 1), dtype=np.int64)
    cdn = np.empty((size, k + 1), dtype=np.int64)
    cps = np.empty((size, k + 1), dtype=np.uint64)  # the children's proof sets
    sets = sets and k <= 64
    movers[0], swaps[0], thpns[0], thdns[0] = mover, swap, INF, INF
    depth = 0
    enter = True
    rpn, rdn = np.int64(1), np.int64(1)  # the numbers a returning child hands up
    while depth >= 0:
        node_mover, node_swap = movers[depth], swaps[depth]
        if enter:
            enter = False
            stats[NODES] += 1
            starts[depth] = stats[NODES]
            status, count = analyse(
                stones, node_mover, node_swap, nbr, reg, win, mir, wins_with, scratch,
                moves[depth], forcing[depth], infos[depth], proofs[depth], deep, connections,
            )  # fmt: skip
            if status != 0 or count == 0:
                if status == 1:
                    rpn, rdn = np.int64(0), INF
                    best = infos[depth, WIN_CELL]
                elif status == -1:
                    rpn, rdn, best = INF, np.int64(0), -1
                else:
                    stats[ERROR] = 1  # no move and no winner: impossible without draws
                    return
                proof = proofs[depth, 0] if node_swap == SWAP_NONE else _UNKNOWN
                save(table, keys[depth], zob, mir, node_swap, rpn, rdn, 1, best, proof)
                depth = _pop(stones, depth, movers, played, undo)
                if depth >= 0:
                    cpn[depth, chosen[depth]], cdn[depth, chosen[depth]] = rpn, rdn
                    cps[depth, chosen[depth]] = proof
                continue
            counts[depth] = count
            child = keys[depth + 1]
            for i in range(count):
                action = moves[depth, i]
                _child_of(keys[depth], action, k, mir, zob, child)
                p, d, slot, ps = probe(table, child, zob, _child_swap(node_swap, action, k), mir)
                if slot < 0 and depth == 0:
                    d = bias[action]
                cpn[depth, i], cdn[depth, i], cps[depth, i] = p, d, ps
        if sets and node_swap == SWAP_NONE:
            _drop_siblings(moves[depth], counts[depth], cpn[depth], cdn[depth], cps[depth])
        # This frame's numbers from its children's.
        pn, dn = INF, np.int64(0)
        dn2, best_pn, best = INF, np.int64(1), -1
        for i in range(counts[depth]):
            p, d = cpn[depth, i], cdn[depth, i]
            if d < pn:
                dn2, pn, best, best_pn = pn, d, i, p
            elif d < dn2:
                dn2 = d
            if p >= INF:
                dn = INF
            elif dn < INF:
                dn = min(dn + p, INF - 1)
        if pn == 0:
            dn = INF
        if not (pn >= thpns[depth] or dn >= thdns[depth]) and stats[NODES] >= stats[BUDGET]:
            stats[ABORTED] = 1
        if pn >= thpns[depth] or dn >= thdns[depth] or stats[ABORTED] != 0:
            spent = stats[NODES] - starts[depth] + 1
            action = moves[depth, best]
            proof = _UNKNOWN
            if node_swap == SWAP_NONE and (pn == 0 or dn == 0):
                proof = _proof_set(
                    pn == 0, best, moves[depth], counts[depth], cps[depth], proofs[depth, 0],
                    infos[depth, SYMMETRIC] != 0, mir,
                )  # fmt: skip
            save(table, keys[depth], zob, mir, node_swap, pn, dn, spent, action, proof)
            depth = _pop(stones, depth, movers, played, undo)
            if depth >= 0:
                cpn[depth, chosen[depth]], cdn[depth, chosen[depth]] = pn, dn
                cps[depth, chosen[depth]] = proof
            continue
        # Descend into the child of least disproof number.
        action = moves[depth, best]
        thpns[depth + 1] = min(thdns[depth] - dn + best_pn, INF)
        thdns[depth + 1] = min(thpns[depth], np.int64(dn2 + dn2 * eps) + 1)
        chosen[depth] = best
        cmover, cswap, cell = _play(stones, node_mover, node_swap, action)
        played[depth], undo[depth] = action, cell
        _child_of(keys[depth], action, k, mir, zob, keys[depth + 1])
        movers[depth + 1], swaps[depth + 1] = cmover, cswap
        depth += 1
        enter = True


@njit()
def _drop_siblings(moves, count, cpn, cdn, cps):
    """Mark lost the children outside the proof set of any child proven lost for the mover
    (module docstring), with the union of those sets as their own (a superset of a proof set
    is one too). Children's numbers are from their own mover's side: pn 0 is lost for ours."""
    inter, union = _UNKNOWN, np.uint64(0)
    for i in range(count):
        if cpn[i] == 0:
            inter &= cps[i]
            union |= cps[i]
    if inter == _UNKNOWN:
        return
    for i in range(count):
        x = moves[i]
        if cpn[i] != 0 and x < 64 and (inter >> np.uint64(x)) & np.uint64(1) == 0:
            cpn[i], cdn[i], cps[i] = 0, INF, union


@njit()
def _proof_set(won, best, moves, count, cps, dropped, symmetric, mir):
    """The proof set of a node proven ``won`` (by its child ``best``) or lost (by every child;
    ``dropped`` the analysis's cells for the moves it left out, and the children's mirror
    images where the node is its own, which left out one cell of each pair)."""
    if won:
        if cps[best] == _UNKNOWN:
            return _UNKNOWN
        return cps[best] | cell_set(moves[best])
    proof = dropped
    for i in range(count):
        proof |= cps[i]
        if symmetric:
            proof |= mirror_set(cps[i], mir)
    return proof


@njit()
def _alphabeta(stones, mover, swap, deep, connections, tables, bias, history, table, work, stats):
    """Win/loss alpha-beta from the root: 1 win, 0 loss, -1 budget spent (or error)."""
    mir, zob = tables[3], tables[4]
    moves, keys = work[1], work[4]
    k = stones.shape[0]
    size = moves.shape[0]
    movers = np.empty(size, dtype=np.int64)
    swaps = np.empty(size, dtype=np.int64)
    starts = np.empty(size, dtype=np.int64)
    counts = np.empty(size, dtype=np.int64)
    nexts = np.empty(size, dtype=np.int64)
    played = np.empty(size, dtype=np.int64)
    undo = np.empty(size, dtype=np.int64)
    movers[0], swaps[0] = mover, swap
    depth = 0
    value = -2  # the value a frame hands to its parent; -2 while a frame is entered
    while True:
        node_mover, node_swap = movers[depth], swaps[depth]
        if value == -2:
            value, count = _enter(
                stones, node_mover, node_swap, depth, deep, connections, tables, bias, history,
                table, work, stats,
            )  # fmt: skip
            if value == -2:
                starts[depth] = stats[NODES]
                counts[depth] = count
                nexts[depth] = 0
        else:
            # The child after ``played[depth]`` returned ``value`` for its mover.
            if value == -1:
                while depth > 0:
                    depth = _pop(stones, depth, movers, played, undo)
                return -1
            action = played[depth]
            spent = stats[NODES] - starts[depth] + 1
            if value == 0:
                if action < k:
                    history[action] += 1 + (k - depth)
                save(table, keys[depth], zob, mir, node_swap, 0, INF, spent, action, _UNKNOWN)
                value = 1
            elif nexts[depth] == counts[depth]:
                save(table, keys[depth], zob, mir, node_swap, INF, 0, spent, -1, _UNKNOWN)
                value = 0
            else:
                value = -2
        if value != -2:
            if depth == 0:
                return value
            depth = _pop(stones, depth, movers, played, undo)
            continue
        action = moves[depth, nexts[depth]]
        nexts[depth] += 1
        cmover, cswap, cell = _play(stones, node_mover, node_swap, action)
        played[depth], undo[depth] = action, cell
        _child_of(keys[depth], action, k, mir, zob, keys[depth + 1])
        movers[depth + 1], swaps[depth + 1] = cmover, cswap
        depth += 1


@njit()
def _enter(
    stones, mover, swap, depth, deep, connections, tables, bias, history, table, work, stats
):
    """Enter an alpha-beta frame: (its value, 0) with the value 1, 0 or -1 (budget spent),
    or (-2, the number of its moves), ordered in ``moves[depth]``."""
    nbr, reg, win, mir, zob, wins_with = tables
    scratch, moves, forcing, infos, keys, proofs = work
    k = stones.shape[0]
    pn, dn, _, _ = probe(table, keys[depth], zob, swap, mir)
    if pn == 0:
        return 1, 0
    if dn == 0:
        return 0, 0
    stats[NODES] += 1
    if stats[NODES] >= stats[BUDGET]:
        stats[ABORTED] = 1
        return -1, 0
    status, count = analyse(
        stones, mover, swap, nbr, reg, win, mir, wins_with, scratch,
        moves[depth], forcing[depth], infos[depth], proofs[depth], deep, connections,
    )  # fmt: skip
    if status == 1:
        cell = infos[depth, WIN_CELL]
        save(table, keys[depth], zob, mir, swap, 0, INF, 1, cell, _UNKNOWN)
        return 1, 0
    if status == -1:
        save(table, keys[depth], zob, mir, swap, INF, 0, 1, -1, _UNKNOWN)
        return 0, 0
    if count == 0:
        stats[ERROR] = 1  # no move and no winner: impossible without draws
        return -1, 0
    # Order: the swap stays first; then forcing moves; then by the root's bias or history.
    row, flags = moves[depth], forcing[depth]
    first = 1 if row[0] == k else 0
    for i in range(first + 1, count):
        action, flag = row[i], flags[i]
        score = _score(action, flag, depth, bias, history)
        j = i
        while j > first and _score(row[j - 1], flags[j - 1], depth, bias, history) < score:
            row[j], flags[j] = row[j - 1], flags[j - 1]
            j -= 1
        row[j], flags[j] = action, flag
    return -2, count


@njit()
def _score(action, flag, depth, bias, history):
    """Alpha-beta's move order: forcing moves first, then the root's bias or the history."""
    base = -bias[action] if depth == 0 else history[action]
    return base + (np.int64(1) << 40) * flag


@njit()
def solve_root(
    stones, mover, swap, method, eps, deep, connections, sets, tables, bias, history, table,
    stats,
):  # fmt: skip
    """Search a position without a winner until it is proven or the node budget is spent.

    Args:
        stones: [K] int8 (restored before returning); mover 1 or 2; swap `SWAP_NONE`,
            `SWAP_LEGAL` or `SWAP_RULE`; method `DFPN` or `ALPHABETA`; eps df-pn's 1 + eps;
            deep and connections: `trapy_rl.solve.analysis.analyse`'s; sets: df-pn prunes
            by proof sets (module docstring).
        tables: the board's (neighbours [K, 6] int32 with -1 last, region masks [K] int32,
            win table [32] bool, mirrored actions [A] int32) and the Zobrist codes [4, K]
            uint64 (see `trapy_rl.solve.table.position_keys`).
        bias: [A] int64, the initial disproof number of each root child not yet in the table
            (df-pn) or the order of the root's moves, low first (alpha-beta).
        history: [A] int64, alpha-beta's history table (kept between calls).
        table: (keys [N, 2] uint64, data [N, 3] uint32 (pn, dn, work), best [N] int16, proof
            sets [N] uint64), the transposition table, kept between calls
            (`trapy_rl.solve.table.empty_table`).
        stats: [4] int64: nodes so far (incremented), node budget (the search stops once the
            count reaches it), aborted flag, error flag (both set here).

    Returns:
        1 when the mover wins, 0 when it loses, -1 when the budget ran out first (or, with
        the error flag set, the search met a position with no move and no winner).
    """
    mir, zob = tables[3], tables[4]
    k = stones.shape[0]
    size = k + 2
    work = (
        new_scratch(k),
        np.empty((size, k + 1), dtype=np.int32),
        np.empty((size, k + 1), dtype=np.int8),
        np.empty((size, INFO_SIZE), dtype=np.int64),
        np.empty((size, 8), dtype=np.uint64),
        np.empty((size, 1), dtype=np.uint64),
    )
    position_keys(stones, mover, swap, zob, mir, work[4][0])
    stats[ABORTED] = 0
    stats[ERROR] = 0
    if method == ALPHABETA:
        # The value itself: the root's entry could be replaced before a probe.
        return _alphabeta(
            stones, mover, swap, deep, connections, tables, bias, history, table, work, stats
        )
    while True:
        pn, dn, _, _ = probe(table, work[4][0], zob, swap, mir)
        if pn == 0:
            return 1
        if dn == 0:
            return 0
        if stats[ABORTED] != 0 or stats[ERROR] != 0 or stats[NODES] >= stats[BUDGET]:
            return -1
        _dfpn(stones, mover, swap, eps, deep, connections, sets, tables, bias, table, work, stats)
