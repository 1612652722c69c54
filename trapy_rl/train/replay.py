"""The replay window: the most recent N self-play positions in a numpy ring buffer.

Shapes: N capacity, n a batch, C planes, H x W grid, A actions.

Each position is (planes [C, H, W] float32 from `encode_planes`, the search's visit
distribution [A] float32, the outcome z in {-1, +1} for the player to move, and the final
stones [K] int8 with whether the game was played to the end, for the ownership target).
Batches may be mirrored with `mirror_planes` / `mirror_policy`, the board's one symmetry:
``"random"`` mirrors each drawn sample with probability 1/2, ``"both"`` returns every drawn
sample and its mirror image (a batch of 2n), ``"none"`` leaves them alone.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from trapy_rl.game.board import Board
from trapy_rl.game.planes import NUM_PLANES, mirror_planes, mirror_policy

__all__ = ["MIRROR_MODES", "ReplayBuffer", "Samples"]

MIRROR_MODES = ("none", "random", "both")


@dataclass
class Samples:
    """Training positions, batch first.

    Attributes:
        planes: [n, C, H, W] float32.
        policies: [n, A] float32, the search's policy targets (each row sums to 1), or a row
            of zeros: no policy target (the value alone is trained there).
        values: [n] float32, the outcome for the player to move, -1 or +1.
        ownership: [n, K] int8, the final stones from the view of the player to move: +1
            theirs, -1 the opponent's, 0 empty at the end (the auxiliary ownership target);
            None: unknown (all zero, not a target).
        owned: [n] bool, the game was played to the end, so ``ownership`` is a target (a
            resigned game's final stones are not its outcome's); None: all False.
    """

    planes: np.ndarray
    policies: np.ndarray
    values: np.ndarray
    ownership: np.ndarray | None = None
    owned: np.ndarray | None = None

    def __post_init__(self) -> None:
        n, k = len(self.values), self.policies.shape[1] - 1
        if self.ownership is None:
            self.ownership = np.zeros((n, k), np.int8)
        if self.owned is None:
            self.owned = np.zeros(n, bool)

    def __len__(self) -> int:
        return len(self.values)

    @classmethod
    def empty(cls, board: Board) -> Samples:
        height, width = board.grid_shape
        return cls(
            np.zeros((0, NUM_PLANES, height, width), np.float32),
            np.zeros((0, board.num_actions), np.float32),
            np.zeros(0, np.float32),
        )

    @classmethod
    def concatenate(cls, parts: list[Samples], board: Board) -> Samples:
        if not parts:
            return cls.empty(board)
        return cls(
            np.concatenate([p.planes for p in parts]),
            np.concatenate([p.policies for p in parts]),
            np.concatenate([p.values for p in parts]),
            np.concatenate([p.ownership for p in parts]),
            np.concatenate([p.owned for p in parts]),
        )

    def take(self, index: np.ndarray) -> Samples:
        """The positions ``index`` ([m] int or [n] bool), copied."""
        return Samples(
            self.planes[index],
            self.policies[index],
            self.values[index],
            self.ownership[index],
            self.owned[index],
        )

    def packed(self) -> dict[str, np.ndarray | tuple[int, ...]]:
        """Compact plain arrays, for sending to another process (`unpacked` restores them):
        the planes bit-packed (each is 0 or 1), policies in float16 (within 5e-4 of each
        value), values and ownership in int8. About 1/8 of the bytes of the planes alone.

        Raises:
            ValueError: if a plane holds anything but 0 and 1.
        """
        return {
            "planes_shape": tuple(self.planes.shape),
            "planes_bits": pack_planes(self.planes),
            "policies": self.policies.astype(np.float16),
            "values": self.values.astype(np.int8),
            "ownership": self.ownership.astype(np.int8),
            "owned": self.owned.astype(bool),
        }

    @classmethod
    def unpacked(cls, packed: Mapping[str, Any]) -> Samples:
        """The samples of `packed`."""
        return cls(
            unpack_planes(packed["planes_bits"], packed["planes_shape"]),
            np.asarray(packed["policies"], np.float32),
            np.asarray(packed["values"], np.float32),
            np.asarray(packed["ownership"], np.int8),
            np.asarray(packed["owned"], bool),
        )

    def mirrored(self, board: Board) -> Samples:
        """The same positions reflected by the board's mirror."""
        return Samples(
            mirror_planes(self.planes, board),
            mirror_policy(self.policies, board),
            self.values,
            self.ownership[..., board.mirror_cells],
            self.owned,
        )


def pack_planes(planes: np.ndarray) -> np.ndarray:
    """[n, C, H, W] planes of 0s and 1s as a flat bit-packed uint8 array.

    Raises:
        ValueError: if a plane holds anything else.
    """
    if planes.size and not np.isin(planes, (0.0, 1.0)).all():
        raise ValueError("planes are not all 0 or 1; cannot pack them")
    return np.packbits(planes.astype(bool).reshape(-1))


def unpack_planes(bits: np.ndarray, shape: Sequence[int]) -> np.ndarray:
    """The float32 planes of shape ``shape`` that `pack_planes` packed into ``bits``."""
    shape = tuple(int(s) for s in shape)
    planes = np.unpackbits(np.asarray(bits, np.uint8), count=int(np.prod(shape)))
    return planes.reshape(shape).astype(np.float32)


class ReplayBuffer:
    """A ring buffer of the ``capacity`` most recent positions.

    Mutating methods: `add`, `load_state_dict`. `sample` only reads (and draws from ``rng``).
    """

    def __init__(self, board: Board, capacity: int):
        if capacity < 1:
            raise ValueError(f"replay capacity must be >= 1, got {capacity}")
        self.board = board
        self.capacity = int(capacity)
        height, width = board.grid_shape
        self.planes = np.zeros((capacity, NUM_PLANES, height, width), np.float32)  # [N,C,H,W]
        self.policies = np.zeros((capacity, board.num_actions), np.float32)  # [N, A]
        self.values = np.zeros(capacity, np.float32)  # [N]
        self.ownership = np.zeros((capacity, board.num_cells), np.int8)  # [N, K]
        self.owned = np.zeros(capacity, bool)  # [N]
        self.size = 0  # positions held, <= capacity
        self.cursor = 0  # where the next position goes
        self.total_added = 0  # positions ever added

    def __len__(self) -> int:
        return self.size

    def add(self, samples: Samples) -> None:
        """Append positions, overwriting the oldest once full."""
        n = len(samples)
        if samples.planes.shape[1:] != self.planes.shape[1:]:
            raise ValueError(
                f"planes of shape {samples.planes.shape[1:]} do not fit a replay buffer for "
                f"the side-{self.board.side} board {self.planes.shape[1:]}"
            )
        if samples.policies.shape[1:] != self.policies.shape[1:]:
            raise ValueError(
                f"policies of shape {samples.policies.shape[1:]} do not fit "
                f"{self.policies.shape[1:]}"
            )
        if n > self.capacity:  # only the newest fit
            samples = samples.take(np.arange(n - self.capacity, n))
            self.total_added += n - self.capacity
            n = self.capacity
        index = (self.cursor + np.arange(n)) % self.capacity
        self.planes[index] = samples.planes
        self.policies[index] = samples.policies
        self.values[index] = samples.values
        self.ownership[index] = samples.ownership
        self.owned[index] = samples.owned
        self.cursor = (self.cursor + n) % self.capacity
        self.size = min(self.size + n, self.capacity)
        self.total_added += n

    def sample(
        self, batch_size: int, rng: np.random.Generator, *, mirror: str = "random"
    ) -> Samples:
        """Draw ``batch_size`` positions uniformly with replacement, mirrored per ``mirror``.

        Returns:
            Samples of batch_size positions (2 * batch_size for ``mirror="both"``).
        """
        if mirror not in MIRROR_MODES:
            raise ValueError(f"mirror must be one of {MIRROR_MODES}, got {mirror!r}")
        if self.size == 0:
            raise ValueError("cannot sample from an empty replay buffer")
        index = rng.integers(0, self.size, size=batch_size)
        drawn = Samples(
            self.planes[index],
            self.policies[index],
            self.values[index],
            self.ownership[index],
            self.owned[index],
        )
        if mirror == "both":
            return Samples.concatenate([drawn, drawn.mirrored(self.board)], self.board)
        if mirror == "random":
            flip = rng.random(batch_size) < 0.5
            if flip.any():
                drawn.planes[flip] = mirror_planes(drawn.planes[flip], self.board)
                drawn.policies[flip] = mirror_policy(drawn.policies[flip], self.board)
                drawn.ownership[flip] = drawn.ownership[flip][:, self.board.mirror_cells]
        return drawn

    # ------------------------------------------------------------------ checkpoints
    def state_dict(self) -> dict:
        """The held positions in slot order with the cursor, as plain arrays and ints.

        The planes are stored as a bit-packed uint8 array: every plane is 0 or 1.
        """
        planes = self.planes[: self.size]
        return {
            "capacity": self.capacity,
            "side": self.board.side,
            "size": self.size,
            "cursor": self.cursor,
            "total_added": self.total_added,
            "planes_shape": list(planes.shape),
            "planes_bits": pack_planes(planes),
            "policies": self.policies[: self.size].copy(),
            "values": self.values[: self.size].copy(),
            "ownership": self.ownership[: self.size].copy(),
            "owned": self.owned[: self.size].copy(),
        }

    def load_state_dict(self, state: dict) -> None:
        """Restore from `state_dict`. With the same capacity the buffer is exactly as it was
        (so sampling continues identically); with another, the newest positions are kept."""
        if int(state["side"]) != self.board.side:
            raise ValueError(
                f"replay buffer of the side-{state['side']} board does not fit the "
                f"side-{self.board.side} board"
            )
        planes = unpack_planes(state["planes_bits"], state["planes_shape"])
        policies, values = np.asarray(state["policies"]), np.asarray(state["values"])
        size, cursor = int(state["size"]), int(state["cursor"])
        # Checkpoints written before the ownership target held none: no target there.
        ownership = state.get("ownership")
        held = Samples(
            planes,
            policies,
            values,
            None if ownership is None else np.asarray(ownership).astype(np.int8),
            None if ownership is None else np.asarray(state["owned"]).astype(bool),
        )
        if int(state["capacity"]) == self.capacity:
            self.planes[:size], self.policies[:size], self.values[:size] = planes, policies, values
            self.ownership[:size], self.owned[:size] = held.ownership, held.owned
            self.size, self.cursor = size, cursor
        else:
            order = (cursor - size + np.arange(size)) % size if size else np.zeros(0, int)
            if size < int(state["capacity"]):
                order = np.arange(size)
            self.size = self.cursor = 0
            self.add(held.take(order))
        self.total_added = int(state["total_added"])
