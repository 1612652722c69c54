"""Board geometry against docs/rules.md: sizes, names, neighbours, regions, win table, mirror."""

import itertools
import time

import numpy as np
import pytest

from trapy_rl.game import Board
from trapy_rl.game.board import HEX_DIRECTIONS, REGION_NAMES

SIDES = range(2, 13)

# The cells of each region, copied from docs/rules.md's table.
RULES_REGIONS = {
    "bottom-left": "a1 b1 c1 d1 e1 f1 g1 h1 i1 j1",
    "bottom-right": "j1 k1 l1 m1 n1 o1 p1 q1 r1 s1",
    "right": "s1 r2 q3 p4 o5 n6 m7 l8 k9 j10",
    "top": "a10 b10 c10 d10 e10 f10 g10 h10 i10 j10",
    "left": "a1 a2 a3 a4 a5 a6 a7 a8 a9 a10",
}


def test_trap_y_sizes():
    board = Board()
    assert board.side == 10
    assert (board.num_cells, board.num_actions, board.swap_action) == (145, 146, 145)
    assert board.grid_shape == (10, 19)
    assert board.coords.shape == (145, 2) and board.neighbors.shape == (145, 6)
    assert board.region_masks.shape == (145,) and board.region_masks.dtype == np.uint8
    assert board.win_table.shape == (32,) and board.win_table.dtype == bool


@pytest.mark.parametrize("side", SIDES)
def test_sizes_of_every_side(side):
    board = Board(side)
    assert board.num_cells == side * (3 * side - 1) // 2
    rows = np.bincount(board.coords[:, 1])
    assert rows.tolist() == list(range(2 * side - 1, side - 1, -1))
    for k in range(5):
        assert len(board.cells_of_region(k)) == side


def test_indices_and_names():
    board = Board()
    assert [board.cell_name(i) for i in (0, 18, 19, 144)] == ["a1", "s1", "a2", "j10"]
    assert board.names[:19] == tuple(f"{c}1" for c in "abcdefghijklmnopqrs")
    assert board.names[-10:] == tuple(f"{c}10" for c in "abcdefghij")
    assert len(set(board.names)) == 145
    # Row-major, bottom row first, left to right.
    order = np.lexsort((board.coords[:, 0], board.coords[:, 1]))
    assert order.tolist() == list(range(145))
    assert tuple(board.coords[0]) == (-9, 0) and tuple(board.coords[144]) == (0, 9)


@pytest.mark.parametrize("side", SIDES)
def test_parse_round_trip(side):
    board = Board(side)
    for i, name in enumerate(board.names):
        assert board.parse_action(name) == i
        assert board.parse_action(name.upper()) == i
        assert board.parse_action(i) == i
    assert board.parse_action("swap") == board.parse_action("SWAP") == board.swap_action
    assert board.action_name(board.swap_action) == "swap"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("k10", "not a cell"),
        ("t1", "not a cell"),
        ("a11", "not a cell"),
        ("a0", "not a cell"),
        ("", "not a move"),
        ("pass", "not a move"),
        ("1a", "not a move"),
        (146, "out of range"),
        (-1, "out of range"),
        (2.5, "not 2.5"),
    ],
)
def test_parse_errors_name_the_input(text, message):
    with pytest.raises(ValueError, match=message):
        Board().parse_action(text)


@pytest.mark.parametrize(
    "text",
    ["a" * 399_999 + "1", "a1" + "0" * 400_000, " " + "z" * 400_000 + "9 ", "x" * 400_000],
)
def test_huge_names_are_refused_at_once_in_one_short_line(text):
    """400,000 letters once took 13 s (the column number's big-integer arithmetic)."""
    start = time.perf_counter()
    with pytest.raises(ValueError, match="is not a") as error:
        Board().parse_action(text)
    assert time.perf_counter() - start < 1.0
    message = str(error.value)
    assert len(message) < 120 and "\n" not in message and "..." in message
    assert Board().max_name_length == len("a10")


def test_bad_sides():
    for side in (1, 0, -3, 2.0, "10", True):
        with pytest.raises(ValueError, match="side"):
            Board(side)
    assert Board(10) is Board() and Board(4) is not Board(5)


@pytest.mark.parametrize("side", SIDES)
def test_neighbours_are_the_six_axial_directions(side):
    board = Board(side)
    cell_of = {tuple(c): i for i, c in enumerate(board.coords.tolist())}
    for i, (q, r) in enumerate(board.coords.tolist()):
        expected = {
            cell_of[(q + dq, r + dr)] for dq, dr in HEX_DIRECTIONS if (q + dq, r + dr) in cell_of
        }
        row = board.neighbors[i]
        assert set(row[row >= 0].tolist()) == expected
        assert (row[: len(expected)] >= 0).all() and (row[len(expected) :] == -1).all()
        assert board.num_neighbors[i] == len(expected)
        for j in expected:  # the relation is symmetric
            assert i in board.neighbors[j]


def test_neighbour_counts_of_trap_y():
    board = Board()
    by_name = dict(zip(board.names, board.num_neighbors.tolist()))
    assert by_name["a1"] == 2 and by_name["s1"] == 2  # bottom corners
    assert by_name["a10"] == 3 and by_name["j10"] == 3  # top corners
    assert by_name["j1"] == 4 and by_name["a5"] == 4 and by_name["e10"] == 4 and by_name["n6"] == 4
    assert by_name["j5"] == 6
    assert np.bincount(board.num_neighbors).tolist() == [0, 0, 2, 2, 41, 0, 100]


def test_regions_match_rules_table():
    board = Board()
    for k, region in enumerate(REGION_NAMES):
        names = {board.names[c] for c in board.cells_of_region(k)}
        assert names == set(RULES_REGIONS[region].split()), region
    two = {board.names[c] for c in np.flatnonzero(np.bitwise_count(board.region_masks) == 2)}
    assert two == {"a1", "s1", "j10", "a10", "j1"}
    assert np.bitwise_count(board.region_masks).max() == 2


def test_win_table_classifies_all_32_masks():
    table = Board().win_table
    winning_triples = {frozenset({k, (k + 1) % 5, (k + 3) % 5}) for k in range(5)}
    consecutive = {frozenset({k, (k + 1) % 5, (k + 2) % 5}) for k in range(5)}
    assert len(winning_triples) == 5 and len(consecutive) == 5
    for mask in range(32):
        members = frozenset(k for k in range(5) if mask >> k & 1)
        if len(members) >= 4:
            assert table[mask]
        elif len(members) == 3:
            assert table[mask] == (members in winning_triples)
            assert (members in winning_triples) != (members in consecutive)
        else:
            assert not table[mask]
        if table[mask]:  # every winning set holds bottom-left or bottom-right
            assert members & {0, 1}
    assert table.sum() == 5 + 5 + 1


@pytest.mark.parametrize("side", SIDES)
def test_mirror(side):
    board = Board(side)
    m = board.mirror_cells.astype(int)
    assert sorted(m.tolist()) == list(range(board.num_cells))
    assert (m[m] == np.arange(board.num_cells)).all()
    q, r = board.coords[:, 0], board.coords[:, 1]
    assert (board.coords[m, 0] == -q - r).all() and (board.coords[m, 1] == r).all()
    # Neighbours map to neighbours.
    for i, j in itertools.product(range(board.num_cells), range(6)):
        n = board.neighbors[i, j]
        if n >= 0:
            assert m[n] in board.neighbors[m[i]]
    # Regions: bottom-left <-> bottom-right, left <-> right, top kept.
    swap_bits = {0: 1, 1: 0, 2: 4, 3: 3, 4: 2}

    def mirror_mask(mask):
        return sum(1 << swap_bits[k] for k in range(5) if mask >> k & 1)

    assert all(
        board.region_masks[m[i]] == mirror_mask(board.region_masks[i])
        for i in range(board.num_cells)
    )
    assert all(board.win_table[mirror_mask(x)] == board.win_table[x] for x in range(32))
    assert board.mirror_actions[board.swap_action] == board.swap_action


def test_mirror_names():
    board = Board()
    pairs = {"a1": "s1", "j1": "j1", "a10": "j10", "a2": "r2", "i2": "j2"}
    for a, b in pairs.items():
        assert board.names[board.mirror_cells[board.parse_action(a)]] == b


def test_boards_are_read_only_and_pickle_to_the_singleton():
    import pickle

    board = Board(6)
    with pytest.raises(ValueError):
        board.neighbors[0, 0] = 3
    assert pickle.loads(pickle.dumps(board)) is board
