"""Regenerate the example pictures in docs/ (all from fixed seeds, so reruns give the same games).

    python scripts/render_examples.py               # writes docs/*.png
    python scripts/render_examples.py --out /tmp/x  # somewhere else

Pictures:
    board_empty.png      the empty Trap Y board with cell names and the five regions
    board_rules.png      the rules' board: the cells of each region tinted in its colour
                         (corner cells split between their two), indices of a few cells
    board_game.png       a finished random game: winning group outlined, last move ringed
    heatmap_example.png  per cell, the share of random full boards won by that cell's owner
    board_small.png      a finished random game on the side-4 board, with names
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from trapy_rl.game.batch import BatchGame
from trapy_rl.game.board import NUM_REGIONS, REGION_COLORS, REGION_NAMES, Board
from trapy_rl.game.draw import PALETTE, draw_board, save_board
from trapy_rl.game.geometry import cell_centers, hexagon_corners
from trapy_rl.game.sampling import random_legal_actions
from trapy_rl.game.state import PLAYER_NAMES, find_winner

ROOT = Path(__file__).resolve().parents[1]


def random_game(board: Board, seed: int) -> BatchGame:
    """One game of uniformly random legal moves (swap with probability 1/2), played out."""
    rng = np.random.default_rng(seed)
    game = BatchGame(1, board)
    while not game.is_over[0]:
        game.step(random_legal_actions(game.legal_mask(), rng))
    return game


def owner_wins_share(board: Board, num_boards: int, seed: int) -> np.ndarray:
    """[K] float: over random full boards, the share in which the cell's owner is the winner.

    Each board is a uniformly random order of all K cells, blue taking the even places and
    yellow the odd ones (a random playout without the swap). BatchGame plays the order until
    someone wins; the winner of the full board is the same, since a winning group stays winning
    and on a full board only one player has one (a few boards are checked by flood fill).
    """
    rng = np.random.default_rng(seed)
    k = board.num_cells
    orders = np.argsort(rng.random((num_boards, k)), axis=1)
    games = BatchGame(num_boards, board)
    for t in range(k):
        if games.is_over.all():
            break
        games.step(orders[:, t])
    full = np.empty((num_boards, k), dtype=np.int8)
    rows = np.arange(num_boards)[:, None]
    full[rows, orders] = np.where(np.arange(k) % 2 == 0, 1, 2).astype(np.int8)
    for i in range(min(num_boards, 50)):
        assert find_winner(full[i], board) == games.winner[i], "playout and full board disagree"
    return (full == games.winner[:, None]).mean(axis=0)


def save_rules_board(path: Path, board: Board) -> None:
    """The board of docs/rules.md: names, the cells each region touches tinted in its colour.

    A cell on two regions (the corners and the middle of the long edge) is cut in two halves
    down its middle, the left half for the region whose cells lie further left. A few cells
    carry their index above their name, ringed: the first and last of the bottom row, the
    first of the second row, the last cell.
    """
    from matplotlib.collections import PolyCollection
    from matplotlib.colors import to_rgba
    from matplotlib.patches import Patch

    indexed = {name: str(board.parse_action(name)) for name in ("a1", "s1", "a2", "j10")}
    fig = draw_board(
        np.zeros(board.num_cells, np.int8),
        board,
        show_names=True,
        marks=indexed,
        figwidth=9.0,
        title=f"Trap Y, side {board.side}: {board.num_cells} cells, five perimeter regions",
    )
    ax = fig.axes[0]
    corners = hexagon_corners(board)  # [K, 6, 2]; corners 2 and 5 are the top and bottom
    centre_x = cell_centers(board)[:, 0]
    region_x = [centre_x[board.cells_of_region(k)].mean() for k in range(NUM_REGIONS)]
    halves = {"left": [2, 3, 4, 5], "right": [5, 0, 1, 2]}
    polygons, colours = [], []
    for cell in range(board.num_cells):
        regions = [k for k in range(NUM_REGIONS) if board.region_masks[cell] >> k & 1]
        regions.sort(key=lambda k: region_x[k])
        parts = [list(range(6))] if len(regions) == 1 else [halves["left"], halves["right"]]
        for k, part in zip(regions, parts, strict=False):
            polygons.append(corners[cell, part])
            # A light tint, so the dark names stay readable.
            colours.append(0.55 * np.array(to_rgba(REGION_COLORS[k])) + 0.45)
    ax.add_collection(
        PolyCollection(
            polygons,
            facecolors=colours,
            edgecolors=PALETTE["cell_edge"],
            linewidths=0.6,
            zorder=2.5,
        )
    )
    handles = [
        Patch(color=REGION_COLORS[k], label=f"{k}: {REGION_NAMES[k]}") for k in range(NUM_REGIONS)
    ]
    ax.legend(handles=handles, loc="upper left", title="region (bit)", frameon=False, fontsize=9)
    fig.savefig(path, dpi=120)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs", help="output folder")
    parser.add_argument("--boards", type=int, default=2000, help="random boards for the heatmap")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    board = Board(10)

    save_board(
        args.out / "board_empty.png",
        np.zeros(board.num_cells, np.int8),
        board,
        show_names=True,
        title="Trap Y: 145 cells, five perimeter regions",
    )

    save_rules_board(args.out / "board_rules.png", board)

    for path, side, seed in (("board_game.png", 10, 7), ("board_small.png", 4, 3)):
        small = Board(side)
        game = random_game(small, seed)
        winner, moves = int(game.winner[0]), int(game.move_count[0])
        swapped = int(game.history[0, 1]) == small.swap_action
        save_board(
            args.out / path,
            game.stones[0],
            small,
            last_action=int(game.last_action[0]),
            winning_cells=game.winning_group(0),
            show_names=side <= 5,
            title=f"Random game, side {side}: {PLAYER_NAMES[winner]} wins on move {moves}"
            + (" (swap taken)" if swapped else ""),
        )

    share = owner_wins_share(board, args.boards, seed=0)
    save_board(
        args.out / "heatmap_example.png",
        np.zeros(board.num_cells, np.int8),
        board,
        values=share,
        center=0.5,
        contour_at=0.5,
        value_format="{:.2f}",
        colorbar_label=f"share of {args.boards} random full boards won by the cell's owner"
        f" (s.e. {0.5 / np.sqrt(args.boards):.3f})",
        title="How often the owner of a cell wins a random full board",
    )
    print(f"wrote 5 pictures to {args.out}; owner-wins share {share.min():.3f}..{share.max():.3f}")


if __name__ == "__main__":
    main()
