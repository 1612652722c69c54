"""The replay window: the most recent N self-play positions in a numpy ring buffer.

Shapes: N capacity, n a batch, C planes, H x W grid, A actions, K cells, P = ceil(C H W / 8).

Each position is (planes [C, H, W] float32 from `encode_planes`, the search's visit
distribution [A] float32, the outcome z in {-1, +1} for the player to move, and the final
stones [K] int8 with whether the game was played to the end, for the ownership target).
Batches may be mirrored with `mirror_planes` / `mirror_policy`, the board's one symmetry:
``"random"`` mirrors each drawn sample with probability 1/2, ``"both"`` returns every drawn
sample and its mirror image (a batch of 2n), ``"none"`` leaves them alone.

The window holds each position's planes bit-packed (every plane is 0 or 1), a row of P bytes,
and unpacks the drawn rows: an eighth of the memory of float32 planes (`replay_bytes`), the
same numbers drawn. Its size is capped (`MAX_CAPACITY`), and a saved window is checked against
the sizes it declares before anything is unpacked from it (`ReplayBuffer.load_state_dict`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from trapy_rl.game.board import Board
from trapy_rl.game.planes import NUM_PLANES, mirror_planes, mirror_policy

__all__ = ["MAX_CAPACITY", "MIRROR_MODES", "ReplayBuffer", "Samples", "replay_bytes"]

MIRROR_MODES = ("none", "random", "both")
MAX_CAPACITY = 100_000_000  # positions: a bound before the window's bytes are counted
_CHUNK = 8 * 4096  # positions unpacked at once from a saved window (a multiple of 8)


def _row_bits(board: Board) -> int:
    """C H W: the bits of one position's planes."""
    height, width = board.grid_shape
    return NUM_PLANES * height * width


def replay_bytes(board: Board, capacity: int) -> int:
    """The bytes a `ReplayBuffer` of ``capacity`` positions on ``board`` holds: per position
    its packed planes, its policy (float32), value, final stones and played-out flag."""
    return capacity * (-(-_row_bits(board) // 8) + 4 * board.num_actions + 4 + board.num_cells + 1)


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
    """The float32 planes of shape ``shape`` that `pack_planes` packed into ``bits``.

    Raises:
        ValueError: if ``shape`` is not 4 sizes >= 0 whose bits ``bits`` holds exactly (checked
            before anything is allocated).
    """
    shape = tuple(int(s) for s in shape)
    bits = np.asarray(bits)
    count = int(np.prod(shape, dtype=object)) if shape else 0
    if len(shape) != 4 or min(shape) < 0 or bits.dtype != np.uint8 or bits.ndim != 1:
        raise ValueError(f"planes of shape {shape} in {bits.dtype} bits of shape {bits.shape}")
    if bits.size != -(-count // 8):
        raise ValueError(
            f"planes of shape {shape} need {-(-count // 8):,} bytes, got {bits.size:,}"
        )
    planes = np.unpackbits(bits, count=count)
    return planes.reshape(shape).astype(np.float32)


class ReplayBuffer:
    """A ring buffer of the ``capacity`` most recent positions.

    Mutating methods: `add`, `load_state_dict`. `sample` only reads (and draws from ``rng``).
    """

    def __init__(self, board: Board, capacity: int):
        if isinstance(capacity, bool) or not 1 <= capacity <= MAX_CAPACITY:
            raise ValueError(
                f"replay capacity must be between 1 and {MAX_CAPACITY:,}, got {capacity}"
            )
        self.board = board
        self.capacity = int(capacity)
        self._row_bits = _row_bits(board)
        self.bits = np.zeros((capacity, -(-self._row_bits // 8)), np.uint8)  # [N, P] planes
        self.policies = np.zeros((capacity, board.num_actions), np.float32)  # [N, A]
        self.values = np.zeros(capacity, np.float32)  # [N]
        self.ownership = np.zeros((capacity, board.num_cells), np.int8)  # [N, K]
        self.owned = np.zeros(capacity, bool)  # [N]
        self.size = 0  # positions held, <= capacity
        self.cursor = 0  # where the next position goes
        self.total_added = 0  # positions ever added

    def __len__(self) -> int:
        return self.size

    @property
    def planes_shape(self) -> tuple[int, int, int]:
        """(C, H, W): the shape of one position's planes."""
        return (NUM_PLANES, *self.board.grid_shape)

    def planes(self, index: np.ndarray) -> np.ndarray:
        """[n, C, H, W] float32: the planes of the slots ``index`` ([n] int), unpacked."""
        flat = np.unpackbits(self.bits[index], axis=1, count=self._row_bits)
        return flat.reshape(len(flat), *self.planes_shape).astype(np.float32)

    def add(self, samples: Samples) -> None:
        """Append positions, overwriting the oldest once full.

        Raises:
            ValueError: for positions of another board, or planes not all 0 and 1.
        """
        n = len(samples)
        if samples.planes.shape[1:] != self.planes_shape:
            raise ValueError(
                f"planes of shape {samples.planes.shape[1:]} do not fit a replay buffer for "
                f"the side-{self.board.side} board {self.planes_shape}"
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
        if n and not np.isin(samples.planes, (0.0, 1.0)).all():
            raise ValueError("planes are not all 0 or 1; cannot pack them")
        index = (self.cursor + np.arange(n)) % self.capacity
        self.bits[index] = np.packbits(samples.planes.reshape(n, self._row_bits) > 0, axis=1)
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
            self.planes(index),
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

        The planes are stored as one bit-packed uint8 array (every plane is 0 or 1): the bits
        of ``planes_shape`` [size, C, H, W] in order, as `pack_planes` writes them.
        """
        size, step = self.size, self._chunk_rows()
        chunks = [  # each chunk a whole number of bytes: a multiple of 8 positions
            np.packbits(
                np.unpackbits(
                    self.bits[start : min(start + step, size)], axis=1, count=self._row_bits
                )
            )
            for start in range(0, size, step)
        ]
        return {
            "capacity": self.capacity,
            "side": self.board.side,
            "size": size,
            "cursor": self.cursor,
            "total_added": self.total_added,
            "planes_shape": [size, *self.planes_shape],
            "planes_bits": np.concatenate(chunks) if chunks else np.zeros(0, np.uint8),
            "policies": self.policies[:size].copy(),
            "values": self.values[:size].copy(),
            "ownership": self.ownership[:size].copy(),
            "owned": self.owned[:size].copy(),
        }

    def load_state_dict(self, state: dict) -> None:
        """Restore from `state_dict`. With the same capacity the buffer is exactly as it was
        (so sampling continues identically); with another, the newest positions are kept.

        Every size the state declares is checked against this buffer's board and against the
        arrays it holds before anything is unpacked (`check_state`).

        Raises:
            ValueError: naming the part of the state that does not fit.
        """
        size, cursor, capacity = self.check_state(state)
        kept = min(size, self.capacity)
        if capacity == self.capacity:
            order = np.arange(size)  # the same slots
        elif size < capacity:  # never full: slot order is age order
            order = np.arange(size - kept, size)
            cursor = kept % self.capacity
        else:  # full: the oldest sits at the cursor
            order = (cursor - kept + np.arange(kept)) % size
            cursor = kept % self.capacity
        destination = np.full(size, -1, np.int64)  # saved slot -> slot here (-1: dropped)
        destination[order] = np.arange(kept)
        bits, step = np.asarray(state["planes_bits"]), self._chunk_rows()
        for start in range(0, size, step):  # a multiple of 8 positions: whole bytes
            rows = min(step, size - start)
            first, count = start * self._row_bits // 8, rows * self._row_bits
            flat = np.unpackbits(bits[first : first + -(-count // 8)], count=count)
            packed = np.packbits(flat.reshape(rows, self._row_bits), axis=1)
            to = destination[start : start + rows]
            self.bits[to[to >= 0]] = packed[to >= 0]
        self.policies[:kept] = np.asarray(state["policies"])[order]
        self.values[:kept] = np.asarray(state["values"])[order]
        # Checkpoints written before the ownership target held none: no target there.
        ownership, owned = state.get("ownership"), state.get("owned")
        self.ownership[:kept] = 0 if ownership is None else np.asarray(ownership)[order]
        self.owned[:kept] = False if ownership is None else np.asarray(owned)[order]
        self.size, self.cursor = kept, cursor
        self.total_added = int(state["total_added"])

    def check_state(self, state: Any) -> tuple[int, int, int]:
        """(size, cursor, capacity) of a saved window, once every part of it is checked
        against this buffer's board and against the others, nothing allocated.

        Raises:
            ValueError: naming the part that does not fit.
        """
        if not isinstance(state, Mapping):
            raise ValueError(f"a replay window is a mapping, got {type(state).__name__}")
        missing = [key for key in _STATE_KEYS if key not in state]
        if missing:
            raise ValueError(f"lacks {', '.join(missing)}")
        side, capacity, size, cursor, total = (
            state[key] for key in ("side", "capacity", "size", "cursor", "total_added")
        )
        for name, value in (("side", side), ("capacity", capacity), ("size", size),
                            ("cursor", cursor), ("total_added", total)):  # fmt: skip
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ValueError(f"{name} must be an integer >= 0, got {value!r}")
        if side != self.board.side:
            raise ValueError(
                f"replay buffer of the side-{side} board does not fit the side-{self.board.side} "
                "board"
            )
        if not 1 <= capacity <= MAX_CAPACITY or size > capacity or total < size:
            raise ValueError(
                f"capacity {capacity}, size {size}, total_added {total}: need 1 <= capacity <= "
                f"{MAX_CAPACITY:,}, size <= capacity and size <= total_added"
            )
        if cursor >= max(capacity, 1) or (size < capacity and cursor != size % capacity):
            raise ValueError(f"cursor {cursor} is no slot of a window of {size} in {capacity}")
        if list(state["planes_shape"]) != [size, *self.planes_shape]:
            raise ValueError(
                f"planes_shape {list(state['planes_shape'])} is not [{size}, "
                f"{', '.join(map(str, self.planes_shape))}]"
            )
        cells, actions = self.board.num_cells, self.board.num_actions
        shapes = {
            "planes_bits": (-(-size * self._row_bits // 8),),
            "policies": (size, actions),
            "values": (size,),
            "ownership": (size, cells),
            "owned": (size,),
        }
        for name, shape in shapes.items():
            value = state.get(name)
            if value is None and name in ("ownership", "owned"):
                continue  # from before the ownership target
            if not hasattr(value, "shape") or tuple(value.shape) != shape:
                shown = tuple(value.shape) if hasattr(value, "shape") else type(value).__name__
                raise ValueError(f"{name} has shape {shown}, the window needs {shape}")
        if str(np.asarray(state["planes_bits"]).dtype) != "uint8":
            raise ValueError("planes_bits must be uint8")
        return size, cursor, capacity

    def _chunk_rows(self) -> int:
        """Positions unpacked at once to or from a saved window: about 16 MiB of 0s and 1s,
        a multiple of 8 so that each chunk's bits are whole bytes."""
        return max(8, (2**24 // self._row_bits) // 8 * 8)


_STATE_KEYS = ("side", "capacity", "size", "cursor", "total_added", "planes_shape")
_STATE_KEYS += ("planes_bits", "policies", "values")
