"""What one position tells the solver before any search: wins at once, threats, must-play.

Compiled with numba (``cache=True``). The rules come from the engine's tables, never
re-derived: `Board.neighbors` (compacted, -1 last), `Board.region_masks` and
`Board.win_table`; what is written here is the fast bookkeeping of groups on them, which the
tests hold against `trapy_rl.game.state` and against `trapy_rl.solve.reference`.

A **threat** of a player is an empty cell where one stone of theirs makes a winning group. For
the player to move (the mover), in this order:

1. a threat of the mover wins at once;
2. two threats of the opponent lose (one stone blocks one cell, and stones never leave);
3. a virtual win (`trapy_rl.solve.connections`) of the mover wins, one of the opponent loses;
4. one threat of the opponent is the only move worth trying;
5. a move after which the mover has two threats wins (the opponent has none to answer with);
6. the opponent's moves that would make two threats must be answered now: the mover must
   play on such a move's cell or, when it makes exactly two threats, on one of them (a stone
   elsewhere leaves that move's two threats standing). The mover's candidates are the cells in
   every such set, and the mover's own threat-making moves (which the opponent must answer
   first); none left loses;
7. with ``deep`` and greedy connections, the same one move further: a move after which the
   mover has a virtual win wins; an opponent's move after which the opponent would have one
   must be answered on its cell or in that virtual win's carrier (anywhere else the opponent
   plays it and wins). H-search does this job with its semi wins and must-play region, and the
   greedy look-ahead beside it cost more than it saved (1.24 times the CPU on eight side-5
   first moves, docs/experiments/2026-12-06-solver-connection-theory.md), so it runs without
   H-search;
8. a **dead** cell, whose colour cannot change any group's regions (no empty neighbour, at
   most one adjacent group of each colour, whose regions already include the cell's), is never
   played: in a monotone game such a move is a pass;
9. a position equal to its mirror image tries one cell of each mirror pair.

Where the swap is legal (the second move) only 1, 8 and 9 apply: the swap takes the opponent's
stone over, so no placement is forced. On an empty board whose second move may swap, the
mover's wins one move on (5, 7) do not apply: the opponent would swap that stone.

**Proof sets** (boards of at most 64 cells, no swap, H-search's connections): with a won or
lost position the analysis gives the empty cells its verdict rests on, P, such that the
winner still wins with every other empty cell given to the loser: a threat's cell (1); both
threats (2); the carrier of a virtual win (3) or of the semi win that wins (H-search); the
move making two threats and the two threats (5). With moves left it gives the cells that
justify dropping the others: the opponent's threat (4); the opponent's moves making two
threats and those threats (6), and the union of the opponent's semi wins' carriers
(must-play), each only where it dropped a move. A loss for want of moves rests on the same
cells. Elsewhere it gives all cells
(nothing known). The search builds the proof sets of larger proofs from these
(`trapy_rl.solve.search`). Each is sound because a full board has exactly one winner, so a
stone never hurts its owner (docs/rules.md).

Shapes: K cells, A = K + 1 actions (action K is the swap).
"""

from __future__ import annotations

import numpy as np

from trapy_rl.game.compiled import njit
from trapy_rl.solve.connections import NUM_REGIONS, virtual_win
from trapy_rl.solve.hsearch import (
    MAX_CELLS,
    NONE,
    VIRTUAL_WIN,
    connection_wins,
    hsearch,
    new_vc_scratch,
    winning_triples,
)

__all__ = [
    "GREEDY",
    "HSEARCH",
    "INFO_SIZE",
    "SCRATCH_ROWS",
    "SWAP_LEGAL",
    "SWAP_NONE",
    "SWAP_RULE",
    "SYMMETRIC",
    "WIN_CELL",
    "analyse",
    "cell_set",
    "label_groups",
    "new_scratch",
]

# The swap states of a position: none; legal now (the position's only stone is the
# opponent's: the second move); offered after the first move (an empty board).
SWAP_NONE, SWAP_LEGAL, SWAP_RULE = 0, 1, 2

# info[]: the mover's proving move (a threat, or a move making two threats; -1 none); 1
# when the position equals its mirror image (one cell of each mirror pair was kept).
WIN_CELL, SYMMETRIC = 0, 1
INFO_SIZE = 2
# The rows of the [SCRATCH_ROWS, K] int32 scratch: labels, group masks and colours,
# flood-fill stack, group stamps, the mover's and the opponent's masks of each empty cell, the
# must-play marks, the mover's forcing moves.
LABELS, GREGS, GCOLS, STACK, MARKS, OWN, THEIRS, MUST, FORCE = range(9)
# And for the positions one move on: labels, group masks and colours, a virtual win's carrier.
LABELS2, GREGS2, GCOLS2, CARRIER = range(9, 13)
SCRATCH_ROWS = 13
# The [K] int64 scratch row: for each group, bit m set when one of its empty neighbours has
# mask m for the group's colour.
WIN, LOSS, OPEN = 1, -1, 0
# Step 3's connections: greedy two-cell carriers, or H-search.
GREEDY, HSEARCH = 0, 1
HSEARCH_STEPS = 1 << 14
"""The most connections one H-search combines (a time bound per position)."""
_ALL_CELLS = np.uint64(0xFFFFFFFFFFFFFFFF)
_ZERO = np.uint64(0)


@njit()
def new_scratch(k):
    """The scratch arrays of `analyse` for a board of ``k`` cells."""
    return (
        np.empty((SCRATCH_ROWS, k), dtype=np.int32),
        np.empty((4, k), dtype=np.int32),
        np.empty((2, k, k), dtype=np.int32),
        np.empty((2, k, NUM_REGIONS), dtype=np.int32),
        np.empty(k, dtype=np.int64),
        new_vc_scratch(k),
    )


@njit()
def label_groups(stones, nbr, reg, labels, gregs, gcols, stack):
    """Label every group of both colours; returns the number of groups.

    Args:
        stones: [K] int8, 0 empty, 1 blue, 2 yellow.
        nbr: [K, 6] int32 neighbours, -1 last; reg: [K] int32 region masks.
        labels: [K] int32, filled: each stone's group, -1 for an empty cell.
        gregs: [K] int32, filled: ``gregs[label]`` is the group's region mask.
        gcols: [K] int32, filled: ``gcols[label]`` is the group's colour.
        stack: [K] int32 scratch.
    """
    k = stones.shape[0]
    for i in range(k):
        labels[i] = -1
    count = 0
    for start in range(k):
        colour = stones[start]
        if colour == 0 or labels[start] >= 0:
            continue
        labels[start] = count
        mask = reg[start]
        stack[0] = start
        top = 1
        while top > 0:
            top -= 1
            cell = stack[top]
            for j in range(6):
                y = nbr[cell, j]
                if y < 0:
                    break
                if labels[y] < 0 and stones[y] == colour:
                    labels[y] = count
                    mask |= reg[y]
                    stack[top] = y
                    top += 1
        gregs[count] = mask
        gcols[count] = colour
        count += 1
    return count


@njit()
def _threats_after(stones, colour, masks, y, stamp, nbr, win, labels, marks, found):
    """The threats of ``colour`` after a stone of theirs on ``y``, when they have none now.

    A cell becomes a threat when it touches the group that ``y`` makes (``y`` itself or a group
    next to it) and the regions of both win. ``masks`` [K] holds each empty cell's own mask
    for ``colour`` (its regions and those of the adjacent groups of ``colour``); ``marks`` are
    group stamps, ``stamp`` new. Returns the count, capped at 3, the first three in ``found``
    (a proof that a move which takes one of three threats still loses rests on all three).
    """
    for j in range(6):
        w = nbr[y, j]
        if w < 0:
            break
        if stones[w] == colour:
            marks[labels[w]] = stamp
    made = masks[y]
    count = 0
    for z in range(stones.shape[0]):
        if stones[z] != 0 or z == y or not win[masks[z] | made]:
            continue
        touches = False
        for j in range(6):
            w = nbr[z, j]
            if w < 0:
                break
            if w == y or (stones[w] == colour and marks[labels[w]] == stamp):
                touches = True
                break
        if touches:
            found[count] = z
            count += 1
            if count == 3:
                break
    return count


@njit()
def analyse(
    stones, mover, swap, nbr, reg, win, mir, wins_with, scratch, moves, forcing, info, proof,
    deep, connections=GREEDY,
):  # fmt: skip
    """Analyse a position without a winner (see the module docstring).

    Args:
        stones: [K] int8, 0 empty, 1 blue, 2 yellow; not modified.
        mover: the player to move, 1 or 2.
        swap: the swap state, `SWAP_NONE`, `SWAP_LEGAL` (the swap is then put first among the
            moves) or `SWAP_RULE`.
        nbr, reg, win, mir: the board's neighbours [K, 6] int32, region masks [K] int32,
            win table [32] bool and mirrored actions [A] int32.
        wins_with: [32] int64, bit m of ``wins_with[a]`` set when ``win[a | m]``.
        scratch: from `new_scratch`.
        moves: [A] int32, filled with the moves worth trying (the swap is action K).
        forcing: [A] int8, filled: 1 where the move makes a threat for the mover.
        info: [INFO_SIZE] int64, filled: the proving move of a won position; whether the
            position is its own mirror image.
        proof: [1] uint64, filled: the proof set of a won or lost position, or the cells that
            justify the moves left out of an open one (module docstring); all ones when none
            is known.
        deep: also look for virtual wins one move on (a move of the mover that makes one
            wins; the opponent's that would must be answered in their carrier).
        connections: `GREEDY` (step 3 by `trapy_rl.solve.connections`) or `HSEARCH` (step 3
            by `trapy_rl.solve.hsearch` on boards of at most 64 cells, after step 5: the
            mover's semi win wins, the opponent's virtual win loses, and the mover's moves
            are kept to the intersection of the opponent's semi wins' carriers; greedy on
            larger boards).

    Returns:
        (status, count): status 1 won (the proving move in ``info``), -1 lost, else 0 with
        ``count`` moves.
    """
    k = stones.shape[0]
    opponent = 3 - mover
    rows, vc_rows, bridges, edges, near, vcs = scratch
    # H-search only without the swap: on an empty board whose second move may swap, the
    # mover's semi win would be swapped away.
    use_hsearch = connections == HSEARCH and k <= MAX_CELLS and swap == SWAP_NONE
    labels, gregs, gcols, marks = rows[LABELS], rows[GREGS], rows[GCOLS], rows[MARKS]
    own_masks, their_masks, must, force = rows[OWN], rows[THEIRS], rows[MUST], rows[FORCE]
    groups = label_groups(stones, nbr, reg, labels, gregs, gcols, rows[STACK])
    for g in range(groups):
        marks[g] = -1
        near[g] = 0
    info[WIN_CELL] = -1
    symmetric = True
    for x in range(k):
        if stones[x] != stones[mir[x]]:
            symmetric = False
            break
    info[SYMMETRIC] = 1 if symmetric else 0
    # Proof sets where H-search gives carriers; elsewhere all cells (nothing known).
    sets = use_hsearch
    proof[0] = _ZERO if sets else _ALL_CELLS
    # One pass over the empty cells: each player's mask there, threats, dead cells.
    threats, threat, threat2 = 0, -1, -1
    live = 0  # candidate cells are gathered in ``moves`` first
    for x in range(k):
        if stones[x] != 0:
            continue
        own, theirs = reg[x], reg[x]
        open_neighbour = False
        own_group, their_group = -1, -1
        own_many, their_many = False, False
        for j in range(6):
            y = nbr[x, j]
            if y < 0:
                break
            s = stones[y]
            if s == 0:
                open_neighbour = True
                continue
            g = labels[y]
            if s == mover:
                own |= gregs[g]
                if own_group < 0:
                    own_group = g
                elif own_group != g:
                    own_many = True
            else:
                theirs |= gregs[g]
                if their_group < 0:
                    their_group = g
                elif their_group != g:
                    their_many = True
        if win[own]:
            info[WIN_CELL] = x
            if sets:
                proof[0] = cell_set(x)
            return WIN, 0
        own_masks[x], their_masks[x] = own, theirs
        for j in range(6):
            y = nbr[x, j]
            if y < 0:
                break
            if stones[y] != 0:
                near[labels[y]] |= np.int64(1) << (own if stones[y] == mover else theirs)
        if win[theirs]:
            threats += 1
            threat2 = threat
            threat = x
        dead = not open_neighbour and not own_many and not their_many
        if dead and own_group >= 0:
            dead = (reg[x] & ~gregs[own_group]) == 0
        if dead and their_group >= 0:
            dead = (reg[x] & ~gregs[their_group]) == 0
        if not dead:
            moves[live] = x
            live += 1
    if swap == SWAP_LEGAL:
        # The swap first: its child is this position without the swap, needed anyway.
        count = _compact(moves, live, symmetric, mir)
        for i in range(count, 0, -1):
            moves[i] = moves[i - 1]
            forcing[i] = 0
        moves[0], forcing[0] = k, 0
        return OPEN, count + 1
    if threats >= 2:
        if sets:
            proof[0] = cell_set(threat) | cell_set(threat2)
        return LOSS, 0
    carrier = rows[CARRIER]
    if not use_hsearch:
        won, cell = virtual_win(
            stones, mover, nbr, reg, win, labels, gregs, gcols, groups, vc_rows, bridges,
            edges, carrier,
        )  # fmt: skip
        if won:
            info[WIN_CELL] = cell
            return WIN, 0
        lost, _ = virtual_win(
            stones, opponent, nbr, reg, win, labels, gregs, gcols, groups, vc_rows, bridges,
            edges, carrier,
        )  # fmt: skip
        if lost:
            return LOSS, 0
    if threats == 1:
        moves[0], forcing[0] = threat, 0
        if sets:
            proof[0] = cell_set(threat)
        return OPEN, 1
    # Neither player has a threat. The mover's moves: two threats win, one forces. Most moves
    # make no threat, which `_hopeful` tells cheaply.
    found = np.empty(3, dtype=np.int64)
    stamp = 0
    for i in range(live):
        y = moves[i]
        force[y] = 0
        if not _hopeful(stones, mover, own_masks, y, nbr, labels, near, wins_with):
            continue
        n = _threats_after(stones, mover, own_masks, y, stamp, nbr, win, labels, marks, found)
        stamp += 1
        if n >= 2 and swap == SWAP_NONE:
            info[WIN_CELL] = y
            if sets:
                proof[0] = cell_set(y) | cell_set(found[0]) | cell_set(found[1])
            return WIN, 0
        force[y] = 1 if n == 1 else 0
    # H-search: the mover's semi win wins; the opponent's virtual win loses, its semi wins
    # confine the mover to the intersection of their carriers (`trapy_rl.solve.hsearch`).
    hmust, hcells = _ALL_CELLS, _ZERO
    if use_hsearch:
        triples = winning_triples(win)
        hsearch(stones, mover, nbr, reg, labels, vcs, HSEARCH_STEPS)
        status, cell, _, rests_on = connection_wins(stones, mover, triples, vcs, True)
        if status != NONE:
            info[WIN_CELL] = cell
            proof[0] = rests_on
            return WIN, 0
        hsearch(stones, opponent, nbr, reg, labels, vcs, HSEARCH_STEPS)
        status, _, hmust, hcells = connection_wins(stones, opponent, triples, vcs, False)
        if status == VIRTUAL_WIN:
            proof[0] = hcells
            return LOSS, 0
    # The opponent's moves that would make two threats: the cells that answer all of them.
    restricted = False
    rcells = _ZERO  # those moves and their threats
    for i in range(live):
        x = moves[i]
        must[x] = 1
    for i in range(live):
        y = moves[i]
        if not _hopeful(stones, opponent, their_masks, y, nbr, labels, near, wins_with):
            continue
        n = _threats_after(stones, opponent, their_masks, y, stamp, nbr, win, labels, marks, found)
        stamp += 1
        if n < 2:
            continue
        restricted = True
        rcells |= cell_set(y) | cell_set(found[0]) | cell_set(found[1])
        if n > 2:  # a stone on one of three threats leaves two
            rcells |= cell_set(found[2])
        for j in range(live):
            x = moves[j]
            if x != y and not (n == 2 and (x == found[0] or x == found[1])):
                must[x] = 0
    if deep and not use_hsearch:
        labels2, gregs2, gcols2 = rows[LABELS2], rows[GREGS2], rows[GCOLS2]
        for side in range(2):
            colour = mover if side == 0 else opponent
            if side == 0 and swap != SWAP_NONE:
                continue
            for i in range(live):
                y = moves[i]
                stones[y] = colour
                groups2 = label_groups(stones, nbr, reg, labels2, gregs2, gcols2, rows[STACK])
                won, _ = virtual_win(
                    stones, colour, nbr, reg, win, labels2, gregs2, gcols2, groups2,
                    vc_rows, bridges, edges, carrier,
                )  # fmt: skip
                stones[y] = 0
                if not won:
                    continue
                if side == 0:
                    info[WIN_CELL] = y
                    return WIN, 0
                restricted = True  # (greedy connections: no proof sets)
                for j in range(live):
                    x = moves[j]
                    if x != y and carrier[x] == 0:
                        must[x] = 0
    # The moves left; a proof set takes only the cells of the rules that left one out.
    count = 0
    for i in range(live):
        x = moves[i]
        if restricted and must[x] == 0 and force[x] == 0:
            if sets:
                proof[0] |= rcells
            continue
        if use_hsearch and (hmust >> np.uint64(x)) & np.uint64(1) == 0:
            proof[0] |= hcells
            continue
        if symmetric and mir[x] < x:
            continue
        moves[count] = x
        forcing[count] = force[x]
        count += 1
    if count == 0:
        return LOSS, 0
    return OPEN, count


@njit(inline="always")
def cell_set(x):
    """The one-cell set {x} (uint64)."""
    return np.uint64(1) << np.uint64(x)


@njit()
def _hopeful(stones, colour, masks, y, nbr, labels, near, wins_with):
    """Whether a stone of ``colour`` on ``y`` may make a threat: whether the mask of the group
    it makes wins with the mask of one of the cells next to that group (``y`` among them, whose
    own mask does not win). A quick necessary condition for `_threats_after`."""
    masks_near = np.int64(0)
    for j in range(6):
        w = nbr[y, j]
        if w < 0:
            break
        if stones[w] == 0:
            masks_near |= np.int64(1) << masks[w]
        elif stones[w] == colour:
            masks_near |= near[labels[w]]
    return (wins_with[masks[y]] & masks_near) != 0


@njit()
def _compact(moves, live, symmetric, mir):
    """Keep one cell of each mirror pair among ``moves[:live]`` when ``symmetric``."""
    count = 0
    for i in range(live):
        x = moves[i]
        if not (symmetric and mir[x] < x):
            moves[count] = x
            count += 1
    return count
