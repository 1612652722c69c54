"""Virtual wins: a player who wins whatever the opponent does, found from two-cell carriers.

Compiled with numba (``cache=True``). Two kinds of *virtual connection* are found, each with a
carrier of two empty cells of which the player needs only one (an intrusion in one is answered
in the other):

- a **bridge**: two groups of the player with two common empty neighbours;
- an **edge template**: a group with two empty neighbours that both touch a region the group
  does not touch yet.

Connections are taken greedily, each only if its carrier shares no cell with the carriers
taken before; a set of groups joined this way whose regions (with the templates' regions) win
is a **virtual win**. Its owner wins whoever moves: answering every intrusion in the other cell
of its pair, the owner's groups end up connected and winning, and since a full board has exactly
one winner (RULES.md), the opponent cannot win first (a winning group stays winning). So a
virtual win of the player to move is a win, one of the opponent is a loss, and the player with
a virtual win has no threat against it. Greedy assembly misses some virtual wins; it never
claims a false one.

Shapes: K cells, G <= K groups (labels from `trapy_rl.solve.analysis.label_groups`).
"""

from __future__ import annotations

import numpy as np

from trapy_rl.game.compiled import njit

__all__ = ["NUM_REGIONS", "virtual_win"]

NUM_REGIONS = 5


@njit()
def _find(parent, g):
    while parent[g] != g:
        parent[g] = parent[parent[g]]
        g = parent[g]
    return g


@njit()
def _record(cells, i, j, e):
    """Note ``e`` as a carrier cell of ``cells[:, i, j]`` (the first two are kept)."""
    if cells[0, i, j] < 0:
        cells[0, i, j] = e
    elif cells[1, i, j] < 0:
        cells[1, i, j] = e


@njit()
def virtual_win(
    stones, colour, nbr, reg, win, labels, gregs, gcols, groups, rows, bridges, edges, carrier
):
    """Whether ``colour`` has a virtual win; returns (won, a cell of one of its carriers).

    Args:
        stones: [K] int8, 0 empty, 1 blue, 2 yellow.
        colour: the player, 1 or 2.
        nbr: [K, 6] int32 neighbours, -1 last; reg: [K] int32 region masks; win: [32] bool.
        labels, gregs, gcols: [K] int32, each stone's group, each group's region mask and
            colour; groups: their number G.
        rows: [4, K] int32 scratch; bridges: [2, K, K] int32 and edges: [2, K, NUM_REGIONS]
            int32 scratch for the carriers found.
        carrier: [K] int32, filled when won: 1 on the cells of the winning pairs, else 0.

    Returns:
        (True, cell) where ``cell`` is in a carrier of the virtual win (playing it keeps the
        win), else (False, -1).
    """
    parent, masks, used, first = rows[0], rows[1], rows[2], rows[3]
    for g in range(groups):
        parent[g], masks[g], first[g] = g, gregs[g], -1
        for h in range(groups):
            bridges[0, g, h], bridges[1, g, h] = -1, -1
        for r in range(NUM_REGIONS):
            edges[0, g, r], edges[1, g, r] = -1, -1
    adjacent = np.empty(6, dtype=np.int64)
    for e in range(stones.shape[0]):
        used[e] = 0
        if stones[e] != 0:
            continue
        n = 0
        for j in range(6):
            y = nbr[e, j]
            if y < 0:
                break
            if stones[y] != colour:
                continue
            g = labels[y]
            seen = False
            for i in range(n):
                seen = seen or adjacent[i] == g
            if not seen:
                adjacent[n] = g
                n += 1
        for i in range(n):
            g = adjacent[i]
            for r in range(NUM_REGIONS):
                if (reg[e] >> r) & 1 and not (gregs[g] >> r) & 1:
                    _record(edges, g, r, e)
            for j in range(i + 1, n):
                h = adjacent[j]
                _record(bridges, min(g, h), max(g, h), e)
    for g in range(groups):
        if gcols[g] != colour:
            continue
        for h in range(g + 1, groups):
            a, b = bridges[0, g, h], bridges[1, g, h]
            if b < 0 or used[a] or used[b]:
                continue
            root_g, root_h = _find(parent, g), _find(parent, h)
            if root_g == root_h:
                continue
            parent[root_h] = root_g
            masks[root_g] |= masks[root_h]
            if first[root_g] < 0:
                first[root_g] = first[root_h] if first[root_h] >= 0 else a
            used[a], used[b] = g + 1, g + 1
    for g in range(groups):
        if gcols[g] != colour:
            continue
        for r in range(NUM_REGIONS):
            a, b = edges[0, g, r], edges[1, g, r]
            if b < 0 or used[a] or used[b]:
                continue
            root = _find(parent, g)
            if (masks[root] >> r) & 1:
                continue
            masks[root] |= 1 << r
            if first[root] < 0:
                first[root] = a
            used[a], used[b] = g + 1, g + 1
    for g in range(groups):
        if gcols[g] == colour and parent[g] == g and win[masks[g]] and first[g] >= 0:
            for e in range(stones.shape[0]):
                carrier[e] = 1 if used[e] > 0 and _find(parent, used[e] - 1) == g else 0
            return True, np.int64(first[g])
    return False, np.int64(-1)
