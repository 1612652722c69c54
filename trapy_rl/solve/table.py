"""The solver's transposition table and the Zobrist keys of positions.

Compiled with numba (``cache=True``). A position's key is a pair of independent 64-bit Zobrist
keys, taken relative to the player to move (a stone is "the mover's" or "the opponent's", not
blue or yellow) and to the board's mirror: a position and its mirror image, or the same
stones seen from the other colour with the turn passed, share one entry. The first key picks a
bucket of `BUCKET` slots and both are checked, so two positions share an entry only if 128
random bits collide.

A slot holds the key, the proof and disproof numbers (pn, dn; `INF` for infinity), the work
(positions expanded under it; 0 marks an empty slot), the best move and, for a proven entry,
its proof set (the cells its proof rests on, a uint64 bit set; all ones when unknown), both in
the canonical frame (the frame of the smaller of the two mirror keys). Proven entries hold pn
0 (the mover wins) or dn 0 (the mover loses). A full bucket gives up its least work first,
proven entries counting four times their work.

Shapes: K cells, N slots (a power of two); keys [8] uint64 per position: (key1, key2) as seen
by the mover, then with the roles exchanged, then both again for the mirror image.
"""

from __future__ import annotations

import numpy as np

from trapy_rl.game.compiled import njit

__all__ = [
    "BUCKET",
    "INF",
    "canonical",
    "child_keys",
    "empty_table",
    "lookup",
    "mirror_set",
    "position_keys",
    "probe",
    "save",
    "swap_code",
]

INF = np.int64(0xFFFFFFFF)
"""Proof and disproof numbers saturate here (the table holds them as uint32)."""
BUCKET = 4
_ALL = np.uint64(0xFFFFFFFFFFFFFFFF)


def empty_table(bits: int) -> tuple[np.ndarray, ...]:
    """A table of ``2**bits`` slots: keys [N, 2] uint64, (pn, dn, work) [N, 3] uint32, best
    move [N] int16, proof sets [N] uint64."""
    size = 1 << bits
    return (
        np.zeros((size, 2), dtype=np.uint64),
        np.zeros((size, 3), dtype=np.uint32),
        np.full(size, -1, dtype=np.int16),
        np.full(size, _ALL, dtype=np.uint64),
    )


@njit()
def position_keys(stones, mover, swap, zob, mir, keys):
    """Fill ``keys`` [8] uint64 with the position's Zobrist keys, from scratch.

    ``zob`` is [4, K] uint64: rows 0, 1 are the first key's codes of a mover's and an
    opponent's stone, rows 2, 3 the second key's; row 0 column 0 xor row 1 column 0 also marks
    a swap state. ``keys`` holds (key1, key2) as seen by the mover, then as seen by the
    opponent (roles exchanged), then both again for the mirror image.
    """
    for i in range(8):
        keys[i] = np.uint64(0)
    for x in range(stones.shape[0]):
        s = stones[x]
        if s == 0:
            continue
        m = mir[x]
        own = 0 if s == mover else 1
        keys[0] ^= zob[own, x]
        keys[1] ^= zob[2 + own, x]
        keys[2] ^= zob[1 - own, x]
        keys[3] ^= zob[3 - own, x]
        keys[4] ^= zob[own, m]
        keys[5] ^= zob[2 + own, m]
        keys[6] ^= zob[1 - own, m]
        keys[7] ^= zob[3 - own, m]


@njit()
def swap_code(zob, swap):
    """The key code of a swap state (0 for none): a fixed mix of two stone codes."""
    if swap == 0:
        return np.uint64(0), np.uint64(0)
    a = zob[0, 0] ^ zob[3, 0] ^ np.uint64(swap)
    b = zob[1, 0] ^ zob[2, 0] ^ np.uint64(0x9E3779B97F4A7C15 * swap)
    return a, b


@njit()
def canonical(keys, zob, swap):
    """(key1, key2, mirrored): the smaller of the position's and its mirror image's keys."""
    a, b = swap_code(zob, swap)
    k1, k2 = keys[0] ^ a, keys[1] ^ b
    m1, m2 = keys[4] ^ a, keys[5] ^ b
    if m1 < k1 or (m1 == k1 and m2 < k2):
        return m1, m2, True
    return k1, k2, False


@njit()
def child_keys(keys, x, mx, zob, out):
    """The keys of the position after the mover places a stone on ``x`` (mirror ``mx``)."""
    # The child's mover is this node's opponent: its own view is this node's exchanged view.
    out[0] = keys[2] ^ zob[1, x]
    out[1] = keys[3] ^ zob[3, x]
    out[2] = keys[0] ^ zob[0, x]
    out[3] = keys[1] ^ zob[2, x]
    out[4] = keys[6] ^ zob[1, mx]
    out[5] = keys[7] ^ zob[3, mx]
    out[6] = keys[4] ^ zob[0, mx]
    out[7] = keys[5] ^ zob[2, mx]


@njit()
def mirror_set(cells, mir):
    """The mirror image of the bit set ``cells`` (uint64) under ``mir`` [A] int32; all ones
    stay all ones (unknown)."""
    if cells == _ALL:
        return cells
    out = np.uint64(0)
    for x in range(min(mir.shape[0] - 1, 64)):
        if (cells >> np.uint64(x)) & np.uint64(1):
            out |= np.uint64(1) << np.uint64(mir[x])
    return out


@njit()
def _find(table, k1, k2):
    """The slot holding (k1, k2), or -1."""
    tt_keys, tt_data = table[0], table[1]
    mask = tt_keys.shape[0] - 1
    base = np.int64(k1 & np.uint64(mask)) & ~(BUCKET - 1)
    for i in range(BUCKET):
        slot = base + i
        if tt_data[slot, 2] != 0 and tt_keys[slot, 0] == k1 and tt_keys[slot, 1] == k2:
            return slot
    return -1


@njit()
def _store(table, k1, k2, pn, dn, work, best, proof):
    """Write an entry, over the same key, an empty slot or the slot of least work."""
    tt_keys, tt_data, tt_best, tt_proof = table
    mask = tt_keys.shape[0] - 1
    base = np.int64(k1 & np.uint64(mask)) & ~(BUCKET - 1)
    victim = -1
    least = np.int64(1) << 62
    for i in range(BUCKET):
        slot = base + i
        if tt_data[slot, 2] != 0 and tt_keys[slot, 0] == k1 and tt_keys[slot, 1] == k2:
            victim = slot
            work += np.int64(tt_data[slot, 2])
            break
        w = np.int64(tt_data[slot, 2])
        # A proven entry weighs more than any unproven one of the same work.
        if tt_data[slot, 0] == 0 or tt_data[slot, 1] == 0:
            w = w * 4 + 3
        if w < least:
            least = w
            victim = slot
    tt_keys[victim, 0] = k1
    tt_keys[victim, 1] = k2
    tt_data[victim, 0] = np.uint32(min(pn, INF))
    tt_data[victim, 1] = np.uint32(min(dn, INF))
    tt_data[victim, 2] = np.uint32(max(1, min(work, INF)))
    tt_best[victim] = best
    tt_proof[victim] = proof if (pn == 0 or dn == 0) else _ALL


@njit()
def save(table, keys, zob, mir, swap, pn, dn, work, best, proof=_ALL):
    """Store a node's numbers under its canonical key; ``best`` and ``proof`` (a proven
    node's proof set, all ones when unknown) in the canonical frame."""
    k1, k2, mirrored = canonical(keys, zob, swap)
    if mirrored:
        if 0 <= best < mir.shape[0]:
            best = mir[best]
        proof = mirror_set(proof, mir)
    _store(table, k1, k2, pn, dn, work, best, proof)


@njit()
def probe(table, keys, zob, swap, mir):
    """(pn, dn, slot, proof) of a node from the table, the proof set in the node's own frame;
    (1, 1, -1, all ones) when it is not there."""
    k1, k2, mirrored = canonical(keys, zob, swap)
    slot = _find(table, k1, k2)
    if slot < 0:
        return np.int64(1), np.int64(1), -1, _ALL
    data = table[1]
    pn, dn = np.int64(data[slot, 0]), np.int64(data[slot, 1])
    proof = table[3][slot]
    if mirrored and (pn == 0 or dn == 0):
        proof = mirror_set(proof, mir)
    return pn, dn, slot, proof


@njit()
def lookup(stones, mover, swap, mir, zob, table):
    """(pn, dn, work, best action, proof set) of a position from the table; work 0 when absent.

    ``best`` and the proof set are in the position's own frame (``best`` a winning action where
    pn is 0, -1 when none; the proof set all ones when unknown).
    """
    keys = np.empty(8, dtype=np.uint64)
    position_keys(stones, mover, swap, zob, mir, keys)
    k1, k2, mirrored = canonical(keys, zob, swap)
    slot = _find(table, k1, k2)
    if slot < 0:
        return np.int64(1), np.int64(1), np.int64(0), np.int64(-1), _ALL
    data, best, proof = table[1][slot], np.int64(table[2][slot]), table[3][slot]
    if mirrored:
        if best >= 0:
            best = np.int64(mir[best])
        proof = mirror_set(proof, mir)
    return np.int64(data[0]), np.int64(data[1]), np.int64(data[2]), best, proof
