"""Virtual connections by H-search, and the virtual wins and must-play region they prove.

Compiled with numba (``cache=True``). This is the connection theory of Hex solvers
(Anshelevich's H-search; Hayward et al., *Solving 7x7 Hex*) carried over to Trap Y's
winning condition. Carriers are sets of empty cells held as one ``uint64`` bit mask, so it
serves boards of at most 64 cells (`MAX_CELLS`: sides 2 to 6).

**Endpoints.** For one player P: every empty cell, every group of P (named by its lowest
cell) and the five regions (``K + r``). The opponent's stones are walls. An empty endpoint is
read as if P held it, as in Hex: a connection from an empty cell ``x`` says what P gets
once P has played ``x``.

**Connections.** A *full* connection (a VC) between endpoints ``x`` and ``y`` with carrier
``C`` (empty cells, ``x`` and ``y`` not in it) means: P can join ``x`` and ``y`` by a chain
of P's stones inside ``C`` even if the opponent moves first, answering every opponent stone
in ``C`` inside ``C``. A *semi* connection with key ``z`` in ``C`` means P can do it when P
moves first: by playing ``z`` and then holding a full connection inside ``C - {z}``. Being
joined to region ``r`` means holding a stone on one of its cells.

The rules, each sound in any monotone game played on cells (an extra stone of P never hurts
P: P's strategy can treat it as empty and play anywhere when it would have played there):

1. **Base.** Two adjacent endpoints are fully connected with the empty carrier: an empty cell
   and a neighbouring empty cell or group of P; an empty cell on region ``r`` and ``r``; a
   group touching ``r`` and ``r``.
2. **AND.** Full connections ``(x, m, A)`` and ``(m, y, B)`` with ``A`` and ``B`` disjoint,
   ``x`` not in ``B``, ``y`` not in ``A`` and the midpoint ``m`` a cell (never a region):
   when ``m`` is a group of P, ``(x, y, A | B)`` is full (each intrusion is answered inside
   the carrier it hits, and ``m`` joins both chains); when ``m`` is empty, ``(x, y, A | B |
   {m})`` is semi with key ``m`` (P plays ``m``, making it a group).
3. **OR (bounded).** Semi connections ``(x, y, C_i)`` whose carriers have an empty
   intersection give the full ``(x, y, C_1 | ... | C_n)``: the opponent's stone misses some
   ``C_j``, and P plays its key. At most `OR_MAX` semis are combined, and each pair keeps at
   most `FULL_MAX` full and `SEMI_MAX` semi carriers (none a superset of another); with
   `ANCHORED`, AND builds no connection between two empty cells (only the base rule does,
   for neighbours): on side 4's first moves that took 3 times less time a position for twice
   the positions, 1.6 times less in all. Bounds lose connections, never soundness.

**Virtual wins.** Every winning set of regions holds one of five minimal ones, the triples
``{k, k+1, k+3}`` (`winning_triples` derives them from the win table). A *hub* is a group or
an empty cell of P with full connections to the three regions of a triple, carriers pairwise
disjoint:

- a group hub is a **virtual win**: answering every intrusion inside the carrier it hits, P
  ends with one group on all three regions;
- an empty hub ``h``, or a group hub with one of its three connections semi (key ``z``), is
  a **semi win**: P moving first plays ``h`` (or ``z``) and then holds a virtual win inside
  its carrier less the key;
- semi wins with an empty intersection of carriers are a virtual win (the OR rule again).

A virtual win is won by its owner whoever moves: followed to a full board, the owner's
strategy gives them a winning group, and a full board has exactly one winner (docs/rules.md),
so the opponent can never have completed one first (a winning group stays winning). In
particular the owner's opponent has no threat (a cell winning at once) while it stands.

**Must-play.** Let the opponent O of the player to move M hold semi wins with carriers
``C_1 .. C_n`` (M has no winning move at once). Then *every move of M outside
``C_1 & ... & C_n`` loses*: after M's stone on a cell outside ``C_j`` (which does not win,
so the game goes on), O plays ``C_j``'s key and holds a virtual win untouched by M's stone.
When the intersection is empty every move loses: that is O's virtual win by the OR rule.

Shapes: K cells (K <= 64), N = K + 5 endpoints.
"""

from __future__ import annotations

import numpy as np

from trapy_rl.game.compiled import njit
from trapy_rl.solve.connections import NUM_REGIONS

__all__ = [
    "ANCHORED",
    "FULL_MAX",
    "MAX_CELLS",
    "NONE",
    "OR_MAX",
    "SEMI_MAX",
    "SEMI_WIN",
    "VIRTUAL_WIN",
    "connection_wins",
    "hsearch",
    "new_vc_scratch",
    "winning_triples",
]

MAX_CELLS = 64
"""The largest board H-search serves: a carrier is one uint64."""
FULL_MAX = 6
"""Full carriers kept per pair of endpoints."""
SEMI_MAX = 12
"""Semi carriers kept per pair of endpoints."""
OR_MAX = 4
"""Semi connections combined by one OR (the new one and up to three others)."""
QUEUE_MAX = 1 << 14
"""New full connections waiting to be combined; more are dropped (fewer connections)."""
ANCHORED = True
"""AND joins a group or a region to something, never two empty cells (a time bound)."""
# What `connection_wins` finds for a player.
NONE, SEMI_WIN, VIRTUAL_WIN = 0, 1, 2
_ZERO = np.uint64(0)
_ALL = np.uint64(0xFFFFFFFFFFFFFFFF)


@njit()
def new_vc_scratch(k):
    """The scratch of `hsearch` for a board of ``k`` cells (see `hsearch` for the layout)."""
    n = k + NUM_REGIONS if k <= MAX_CELLS else 1  # larger boards never run H-search
    bits = np.zeros(max(k, 1), dtype=np.uint64)
    for x in range(min(k, MAX_CELLS)):
        bits[x] = np.uint64(1) << np.uint64(x)
    return (
        np.zeros((n, n, FULL_MAX), dtype=np.uint64),
        np.zeros((n, n, SEMI_MAX), dtype=np.uint64),
        np.zeros((n, n, SEMI_MAX), dtype=np.int32),
        np.zeros((2, n, n), dtype=np.int32),
        np.zeros((2, QUEUE_MAX), dtype=np.int32),
        np.zeros(QUEUE_MAX, dtype=np.uint64),
        np.zeros(max(k, 1), dtype=np.int32),
        bits,
        np.zeros((n, n), dtype=np.int32),
        np.zeros(n, dtype=np.int32),
    )


@njit()
def winning_triples(win):
    """[5] int32: the region masks of three regions that win while no two of them do."""
    out = np.zeros(5, dtype=np.int32)
    n = 0
    for m in range(32):
        count = 0
        for r in range(NUM_REGIONS):
            count += (m >> r) & 1
        if count == 3 and win[m] and n < 5:
            out[n] = m
            n += 1
    return out[:n]


@njit(inline="always")
def _add_full(full, counts, a, b, c):
    """Add full carrier ``c`` to pair (a, b) unless a subset is there; True when added."""
    n = counts[0, a, b]
    for i in range(n):
        if (full[a, b, i] & ~c) == _ZERO:
            return False
    j = 0
    for i in range(n):
        e = full[a, b, i]
        if (c & ~e) != _ZERO:  # keep the carriers that are not supersets of c
            full[a, b, j] = e
            j += 1
    if j == FULL_MAX:
        counts[0, a, b] = j
        for i in range(j):
            full[b, a, i] = full[a, b, i]
        counts[0, b, a] = j
        return False
    full[a, b, j] = c
    j += 1
    counts[0, a, b] = j
    for i in range(j):
        full[b, a, i] = full[a, b, i]
    counts[0, b, a] = j
    return True


@njit(inline="always")
def _push(queue, qcar, state, a, b, c):
    """Queue a new full connection (dropped when the ring is full: fewer connections)."""
    head, tail = state[0], state[1]
    if tail - head >= QUEUE_MAX:
        return
    slot = tail % QUEUE_MAX
    queue[0, slot], queue[1, slot], qcar[slot] = a, b, c
    state[1] = tail + 1


@njit(inline="always")
def _full(vcs, state, a, b, c):
    full, counts, queue, qcar = vcs[0], vcs[3], vcs[4], vcs[5]
    fresh = counts[0, a, b] == 0
    if _add_full(full, counts, a, b, c):
        if fresh:  # a pair's first full carrier: each end lists the other (a list never shrinks)
            partners, degree = vcs[8], vcs[9]
            partners[a, degree[a]] = b
            degree[a] += 1
            partners[b, degree[b]] = a
            degree[b] += 1
        _push(queue, qcar, state, a, b, c)


@njit(inline="always")
def _semi(vcs, state, a, b, c, key):
    """Add semi carrier ``c`` (key ``key``) to pair (a, b), then try the OR rule with it."""
    full, semi, skey, counts = vcs[0], vcs[1], vcs[2], vcs[3]
    for i in range(counts[0, a, b]):
        if (full[a, b, i] & ~c) == _ZERO:
            return  # a full connection inside c: the semi adds nothing
    n = counts[1, a, b]
    for i in range(n):
        if (semi[a, b, i] & ~c) == _ZERO:
            return
    j = 0
    for i in range(n):
        e = semi[a, b, i]
        if (c & ~e) != _ZERO:
            semi[a, b, j], skey[a, b, j] = e, skey[a, b, i]
            j += 1
    if j == SEMI_MAX:
        counts[1, a, b] = j
        _mirror_semis(semi, skey, counts, a, b)
        return
    semi[a, b, j], skey[a, b, j] = c, key
    counts[1, a, b] = j + 1
    _mirror_semis(semi, skey, counts, a, b)
    # OR: the new semi with up to OR_MAX - 1 others, each one narrowing the intersection.
    for i1 in range(j):
        s1 = semi[a, b, i1]
        x1 = c & s1
        if x1 == _ZERO:
            _full(vcs, state, a, b, c | s1)
            continue
        if x1 == c or OR_MAX < 3:
            continue
        for i2 in range(i1 + 1, j):
            s2 = semi[a, b, i2]
            x2 = x1 & s2
            if x2 == _ZERO:
                _full(vcs, state, a, b, c | s1 | s2)
                continue
            if x2 == x1 or OR_MAX < 4:
                continue
            for i3 in range(i2 + 1, j):
                s3 = semi[a, b, i3]
                if (x2 & s3) == _ZERO:
                    _full(vcs, state, a, b, c | s1 | s2 | s3)


@njit(inline="always")
def _mirror_semis(semi, skey, counts, a, b):
    n = counts[1, a, b]
    for i in range(n):
        semi[b, a, i], skey[b, a, i] = semi[a, b, i], skey[a, b, i]
    counts[1, b, a] = n


@njit()
def hsearch(stones, colour, nbr, reg, labels, vcs, max_steps):
    """Close ``colour``'s connections under the rules of the module docstring.

    Args:
        stones: [K] int8, 0 empty, 1 blue, 2 yellow (K <= `MAX_CELLS`).
        colour: the player P, 1 or 2.
        nbr: [K, 6] int32 neighbours, -1 last; reg: [K] int32 region masks.
        labels: [K] int32, each stone's group (`trapy_rl.solve.analysis.label_groups`).
        vcs: from `new_vc_scratch`: full carriers [N, N, FULL_MAX] uint64, semi carriers and
            keys [N, N, SEMI_MAX] uint64 / int32, counts [2, N, N] int32 (full, semi; both
            orders of a pair hold the same list), the queue [2, Q] int32 and [Q] uint64,
            endpoints [K] int32 (filled: each cell's endpoint, -1 for the opponent's stones),
            the cells' bits [K] uint64, and each endpoint's partners [N, N] int32 (the
            endpoints it has a full connection with, in the order found) and their count [N]
            int32.
        max_steps: the most queued connections combined (a time bound; fewer connections).

    Returns:
        The connections combined.
    """
    k = stones.shape[0]
    n = k + NUM_REGIONS
    counts, ends, bits = vcs[3], vcs[6], vcs[7]
    full = vcs[0]
    degree = vcs[9]
    for a in range(n):
        degree[a] = 0
        for b in range(n):
            counts[0, a, b] = 0
            counts[1, a, b] = 0
    # Endpoints: an empty cell is itself, a group of P its lowest cell.
    first = np.full(k, -1, dtype=np.int32)
    for x in range(k):
        s = stones[x]
        ends[x] = -1
        if s == 0:
            ends[x] = x
        elif s == colour:
            g = labels[x]
            if first[g] < 0:
                first[g] = x
            ends[x] = first[g]
    state = np.zeros(2, dtype=np.int64)
    for x in range(k):
        e = ends[x]
        if e < 0:
            continue
        for r in range(NUM_REGIONS):
            if (reg[x] >> r) & 1:
                _full(vcs, state, e, k + r, _ZERO)
        if stones[x] != 0:
            continue
        for j in range(6):
            y = nbr[x, j]
            if y < 0:
                break
            if ends[y] >= 0:
                _full(vcs, state, x, ends[y], _ZERO)
    steps = 0
    queue, qcar, partners = vcs[4], vcs[5], vcs[8]
    while state[0] < state[1] and steps < max_steps:
        slot = state[0] % QUEUE_MAX
        a, b, c = queue[0, slot], queue[1, slot], qcar[slot]
        state[0] += 1
        steps += 1
        for side in range(2):
            m = a if side == 0 else b
            o = b if side == 0 else a
            if m >= k:
                continue  # a region joins nothing
            empty_mid = stones[m] == 0
            o_empty = o < k and stones[o] == 0
            # Only the endpoints fully connected to m (most pairs have no connection).
            for p in range(degree[m]):
                y = partners[m, p]
                if y == o or (o >= k and y >= k):
                    continue
                if ANCHORED and o_empty and y < k and stones[y] == 0:
                    continue
                if y < k and (c & bits[y]) != _ZERO:
                    continue
                for i in range(counts[0, m, y]):
                    other = full[m, y, i]
                    if (c & other) != _ZERO:
                        continue
                    if o < k and (other & bits[o]) != _ZERO:
                        continue
                    if empty_mid:
                        _semi(vcs, state, o, y, c | other | bits[m], m)
                    else:
                        _full(vcs, state, o, y, c | other)
    return steps


@njit(inline="always")
def _popcount(c):
    """The cells in the set ``c`` (uint64)."""
    c = c - ((c >> np.uint64(1)) & np.uint64(0x5555555555555555))
    c = (c & np.uint64(0x3333333333333333)) + ((c >> np.uint64(2)) & np.uint64(0x3333333333333333))
    c = (c + (c >> np.uint64(4))) & np.uint64(0x0F0F0F0F0F0F0F0F)
    return np.int64((c * np.uint64(0x0101010101010101)) >> np.uint64(56))


@njit()
def _first_cell(c, bits):
    for x in range(bits.shape[0]):
        if (c & bits[x]) != _ZERO:
            return x
    return -1


@njit()
def connection_wins(stones, colour, triples, vcs, first_semi):
    """Virtual and semi wins of ``colour`` from the connections `hsearch` left in ``vcs``.

    Args:
        stones: [K] int8; colour: the player whose connections ``vcs`` holds.
        triples: [T] int32 region masks from `winning_triples`.
        vcs: `hsearch`'s scratch after a call for ``colour``.
        first_semi: the player to move needs only one win: the one resting on the fewest
            cells is returned (the smallest proof set), as a semi win or a virtual one.

    Returns:
        (status, key, carrier, union): `VIRTUAL_WIN` with a cell to play (in its carrier); or
        `SEMI_WIN` with the key of one semi win and the intersection of all their carriers
        (uint64; every one includes its key); or `NONE` (key -1, carrier all ones). ``union``
        (uint64) holds every cell the claim rests on: the virtual win's carrier, or the union
        of the semi wins' carriers found (with ``first_semi``, the first one's); 0 for `NONE`.
    """
    k = stones.shape[0]
    full, semi, skey, counts, ends, bits = vcs[0], vcs[1], vcs[2], vcs[3], vcs[6], vcs[7]
    inter, union = _ALL, _ZERO
    found, key = 0, -1
    best_status, best_key, best_cells, fewest = NONE, -1, _ALL, 65
    for h in range(k):
        if ends[h] != h:
            continue  # the opponent's stone, or a stone of a group named by another cell
        empty_hub = stones[h] == 0
        for t in range(triples.shape[0]):
            rs = np.empty(3, dtype=np.int64)
            j = 0
            for r in range(NUM_REGIONS):
                if (triples[t] >> r) & 1:
                    rs[j] = k + r
                    j += 1
            e0, e1, e2 = rs[0], rs[1], rs[2]
            for i0 in range(counts[0, h, e0]):
                c0 = full[h, e0, i0]
                for i1 in range(counts[0, h, e1]):
                    c1 = full[h, e1, i1]
                    if (c0 & c1) != _ZERO:
                        continue
                    for i2 in range(counts[0, h, e2]):
                        c2 = full[h, e2, i2]
                        if ((c0 | c1) & c2) != _ZERO:
                            continue
                        carrier = c0 | c1 | c2
                        if not empty_hub:
                            if not first_semi:
                                return VIRTUAL_WIN, _first_cell(carrier, bits), carrier, carrier
                            size = _popcount(carrier)
                            if size < fewest:
                                fewest = size
                                best_status, best_cells = VIRTUAL_WIN, carrier
                                best_key = _first_cell(carrier, bits)
                            continue
                        found += 1
                        inter &= carrier | bits[h]
                        union |= carrier | bits[h]
                        if key < 0:
                            key = h
                        size = _popcount(carrier | bits[h]) if first_semi else fewest
                        if size < fewest:
                            fewest = size
                            best_status, best_key, best_cells = SEMI_WIN, h, carrier | bits[h]
            if empty_hub:
                continue
            # A group hub with one semi connection and two full ones.
            for which in range(3):
                es = e0 if which == 0 else (e1 if which == 1 else e2)
                ea = e1 if which == 0 else e0
                eb = e2 if which != 2 else e1
                for i0 in range(counts[1, h, es]):
                    c0 = semi[h, es, i0]
                    for i1 in range(counts[0, h, ea]):
                        c1 = full[h, ea, i1]
                        if (c0 & c1) != _ZERO:
                            continue
                        for i2 in range(counts[0, h, eb]):
                            c2 = full[h, eb, i2]
                            if ((c0 | c1) & c2) != _ZERO:
                                continue
                            found += 1
                            inter &= c0 | c1 | c2
                            union |= c0 | c1 | c2
                            if key < 0:
                                key = skey[h, es, i0]
                            size = _popcount(c0 | c1 | c2) if first_semi else fewest
                            if size < fewest:
                                fewest = size
                                best_status, best_key = SEMI_WIN, skey[h, es, i0]
                                best_cells = c0 | c1 | c2
    if first_semi:
        return best_status, best_key, best_cells, best_cells if best_status != NONE else _ZERO
    if found == 0:
        return NONE, -1, _ALL, _ZERO
    if inter == _ZERO:
        return VIRTUAL_WIN, key, inter, union
    return SEMI_WIN, key, inter, union
