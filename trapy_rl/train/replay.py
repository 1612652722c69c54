"""The replay window: the most recent self-play positions in a numpy ring buffer.

Shapes: N slots, n a batch, C planes, H x W grid, A actions, K cells, P = ceil(C H W / 8).

Each position is (planes [C, H, W] float32 from `encode_planes`, the search's visit
distribution [A] float32, the outcome z in {-1, +1} for the player to move, the search's root
value q for the player to move, and the final stones [K] int8 with whether the game was
played to the end, for the ownership target).

The window the learner draws from holds the newest ``capacity`` positions, or with
``growth`` = beta > 0 a window that grows with the positions added so far, T (KataGo's
power law, Wu 2019, "Accelerating Self-Play Learning in Go", arXiv:1902.10565, section on
the replay buffer; `window_size`)::

    window(T) = T                                                    for T <= c
    window(T) = min(c * (1 + beta * ((T / c) ** alpha - 1) / alpha), max_capacity)   else

with c = ``capacity``, alpha = `GROWTH_EXPONENT` and beta in [0, 1]. Its slope is
beta (T / c) ** (alpha - 1) <= 1, so the window never holds more than the T positions played,
and a position that leaves it never comes back: the ring holds about a quarter more slots
than the window at most (`GROWTH_STEP`), grown by copying the held positions into larger
arrays, oldest first, and never more than ``max_capacity``.
Batches may be mirrored with `mirror_planes` / `mirror_policy`, the board's one symmetry:
``"random"`` mirrors each drawn sample with probability 1/2, ``"both"`` returns every drawn
sample and its mirror image (a batch of 2n), ``"none"`` leaves them alone.

The window holds each position's planes bit-packed (every plane is 0 or 1), a row of P bytes,
and unpacks the drawn rows: an eighth of the memory of float32 planes (`replay_bytes`), the
same numbers drawn. Its size is capped (`MAX_CAPACITY`), and a saved window is checked against
the sizes it declares before anything is unpacked from it (`ReplayBuffer.load_state_dict`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from trapy_rl.game.board import Board
from trapy_rl.game.planes import NUM_PLANES, mirror_planes, mirror_policy

__all__ = [
    "GROWTH_EXPONENT",
    "MAX_CAPACITY",
    "MIRROR_MODES",
    "ReplayBuffer",
    "Samples",
    "replay_bytes",
    "window_size",
]

MIRROR_MODES = ("none", "random", "both")
MAX_CAPACITY = 100_000_000  # positions: a bound before the window's bytes are counted
GROWTH_EXPONENT = 0.75  # alpha of the growing window (KataGo's, Wu 2019)
GROWTH_STEP = 1.25  # a growing ring's slots grow at least this much at once: few copies
_CHUNK = 8 * 4096  # positions unpacked at once from a saved window (a multiple of 8)


def _row_bits(board: Board) -> int:
    """C H W: the bits of one position's planes."""
    height, width = board.grid_shape
    return NUM_PLANES * height * width


def replay_bytes(board: Board, capacity: int) -> int:
    """The bytes a `ReplayBuffer` of ``capacity`` slots on ``board`` holds: per position its
    packed planes, its policy (float32), value and root value (float32 each), final stones
    and played-out flag."""
    return capacity * (-(-_row_bits(board) // 8) + 4 * board.num_actions + 8 + board.num_cells + 1)


def window_size(total: int, *, capacity: int, growth: float, max_capacity: int) -> int:
    """The positions the learner draws from once ``total`` have been added: the newest
    ``total`` up to ``capacity`` (c), then KataGo's power law with beta = ``growth`` and alpha =
    `GROWTH_EXPONENT` (see the module docstring), rounded down, at most ``max_capacity``.
    ``growth`` 0 keeps the window at ``capacity``.

    >>> [window_size(t, capacity=100, growth=0.4, max_capacity=10**6) for t in (50, 100, 1600)]
    [50, 100, 473]
    """
    if total <= capacity or growth == 0:
        return min(total, capacity)
    ratio = (total / capacity) ** GROWTH_EXPONENT
    grown = capacity * (1.0 + growth * (ratio - 1.0) / GROWTH_EXPONENT)
    return min(int(grown), max_capacity)


@dataclass
class Samples:
    """Training positions, batch first.

    Attributes:
        planes: [n, C, H, W] float32.
        policies: [n, A] float32, the search's policy targets (each row sums to 1), or a row
            of zeros: no policy target (the value alone is trained there).
        values: [n] float32, the outcome for the player to move, -1 or +1.
        root_values: [n] float32, the search's root value q for the player to move (its mean
            value, in [-1, 1]), which the value target may mix in; None: the outcomes (no
            search value known: the mix is the outcome there).
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
    root_values: np.ndarray | None = None

    def __post_init__(self) -> None:
        n, k = len(self.values), self.policies.shape[1] - 1
        if self.root_values is None:
            self.root_values = np.asarray(self.values, np.float32).copy()
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
            np.concatenate([p.root_values for p in parts]),
        )

    def take(self, index: np.ndarray) -> Samples:
        """The positions ``index`` ([m] int or [n] bool), copied."""
        return Samples(
            self.planes[index],
            self.policies[index],
            self.values[index],
            self.ownership[index],
            self.owned[index],
            self.root_values[index],
        )

    def packed(self) -> dict[str, np.ndarray | tuple[int, ...]]:
        """Compact plain arrays, for sending to another process (`unpacked` restores them):
        the planes bit-packed (each is 0 or 1), policies in float16 (within 5e-4 of each
        value), values and ownership in int8, root values in float32 (exact). About 1/8 of the
        bytes of the planes alone.

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
            "root_values": self.root_values.astype(np.float32),
        }

    @classmethod
    def unpacked(cls, packed: Mapping[str, Any]) -> Samples:
        """The samples of `packed`."""
        root_values = packed.get("root_values")
        return cls(
            unpack_planes(packed["planes_bits"], packed["planes_shape"]),
            np.asarray(packed["policies"], np.float32),
            np.asarray(packed["values"], np.float32),
            np.asarray(packed["ownership"], np.int8),
            np.asarray(packed["owned"], bool),
            None if root_values is None else np.asarray(root_values, np.float32),
        )

    def mirrored(self, board: Board) -> Samples:
        """The same positions reflected by the board's mirror."""
        return Samples(
            mirror_planes(self.planes, board),
            mirror_policy(self.policies, board),
            self.values,
            self.ownership[..., board.mirror_cells],
            self.owned,
            self.root_values,
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
    """A ring buffer of the most recent positions; `sample` draws from the newest `window`.

    Args:
        board: the board of the positions.
        capacity: c, the window's size; with ``growth``, its size at first (`window_size`).
        growth: beta of the growing window, in [0, 1]; 0 keeps the window at ``capacity``.
        max_capacity: the most positions a growing window holds (at least ``capacity``;
            default ``capacity``); unused without ``growth``.

    Attributes:
        capacity: N, the ring's slots: ``capacity`` at first; with ``growth``, grown by
            copying the held positions (oldest first) into larger arrays when the window
            outgrows them, at least `GROWTH_STEP` times the slots at once and at most
            ``max_capacity``.
        size: the positions held, <= N; cursor: the slot of the next one; total_added: T, the
            positions ever added (the window's clock).

    Mutating methods: `add`, `load_state_dict`. `sample` only reads (and draws from ``rng``).
    """

    def __init__(
        self,
        board: Board,
        capacity: int,
        *,
        growth: float = 0.0,
        max_capacity: int | None = None,
    ):
        max_capacity = capacity if max_capacity is None or not growth else max_capacity
        for name, value in (("capacity", capacity), ("max_capacity", max_capacity)):
            if isinstance(value, bool) or not 1 <= value <= MAX_CAPACITY:
                raise ValueError(
                    f"replay {name} must be between 1 and {MAX_CAPACITY:,}, got {value}"
                )
        if not 0 <= growth <= 1:
            raise ValueError(f"replay growth must be in [0, 1], got {growth}")
        if max_capacity < capacity:
            raise ValueError(f"replay max_capacity={max_capacity} is below capacity={capacity}")
        self.board = board
        self.base_capacity = int(capacity)
        self.growth = float(growth)
        self.max_capacity = int(max_capacity)
        self._row_bits = _row_bits(board)
        self._allocate(self.base_capacity)
        self.size = 0  # positions held, <= capacity
        self.cursor = 0  # where the next position goes
        self.total_added = 0  # positions ever added

    def _allocate(self, slots: int) -> None:
        """Empty arrays of ``slots`` positions (what was held is dropped)."""
        board = self.board
        self.capacity = int(slots)
        self.bits = np.zeros((slots, -(-self._row_bits // 8)), np.uint8)  # [N, P] planes
        self.policies = np.zeros((slots, board.num_actions), np.float32)  # [N, A]
        self.values = np.zeros(slots, np.float32)  # [N] outcomes z
        self.root_values = np.zeros(slots, np.float32)  # [N] the searches' root values q
        self.ownership = np.zeros((slots, board.num_cells), np.int8)  # [N, K]
        self.owned = np.zeros(slots, bool)  # [N]

    def __len__(self) -> int:
        return self.size

    @property
    def window(self) -> int:
        """The newest positions `sample` draws from: `window_size` of the positions added so
        far, at most those held."""
        return min(self.size, self._window_size(self.total_added))

    def _window_size(self, total: int) -> int:
        return window_size(
            total, capacity=self.base_capacity, growth=self.growth, max_capacity=self.max_capacity
        )

    def _grow(self, window: int) -> None:
        """Enough slots for a window of ``window`` positions: the held positions copied into
        larger arrays, oldest first, one array at a time (so that only one is held twice)."""
        if window <= self.capacity:
            return
        slots = min(self.max_capacity, max(window, math.ceil(GROWTH_STEP * self.capacity)))
        order = (self.cursor - self.size + np.arange(self.size)) % self.capacity  # oldest first
        for name in _ARRAYS:
            old = getattr(self, name)
            new = np.zeros((slots, *old.shape[1:]), old.dtype)
            np.take(old, order, axis=0, out=new[: self.size])
            setattr(self, name, new)
            del old
        self.capacity, self.cursor = slots, self.size  # size < window <= slots

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
        if n and not np.isin(samples.planes, (0.0, 1.0)).all():
            raise ValueError("planes are not all 0 or 1; cannot pack them")
        self._grow(self._window_size(self.total_added + n))
        if n > self.capacity:  # only the newest fit
            samples = samples.take(np.arange(n - self.capacity, n))
            self.total_added += n - self.capacity
            n = self.capacity
        index = (self.cursor + np.arange(n)) % self.capacity
        self.bits[index] = np.packbits(samples.planes.reshape(n, self._row_bits) > 0, axis=1)
        self.policies[index] = samples.policies
        self.values[index] = samples.values
        self.root_values[index] = samples.root_values
        self.ownership[index] = samples.ownership
        self.owned[index] = samples.owned
        self.cursor = (self.cursor + n) % self.capacity
        self.size = min(self.size + n, self.capacity)
        self.total_added += n

    def sample(
        self, batch_size: int, rng: np.random.Generator, *, mirror: str = "random"
    ) -> Samples:
        """Draw ``batch_size`` positions uniformly with replacement from the newest `window`,
        mirrored per ``mirror``.

        Returns:
            Samples of batch_size positions (2 * batch_size for ``mirror="both"``).
        """
        if mirror not in MIRROR_MODES:
            raise ValueError(f"mirror must be one of {MIRROR_MODES}, got {mirror!r}")
        if self.size == 0:
            raise ValueError("cannot sample from an empty replay buffer")
        window = self.window
        if window == self.size:  # every held position, drawn by slot
            index = rng.integers(0, self.size, size=batch_size)
        else:  # the newest window, drawn by age (0 its oldest)
            age = rng.integers(0, window, size=batch_size)
            index = (self.cursor - window + age) % self.capacity
        drawn = Samples(
            self.planes(index),
            self.policies[index],
            self.values[index],
            self.ownership[index],
            self.owned[index],
            self.root_values[index],
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
        """The held positions in slot order with the cursor and the slots (``capacity``), as
        plain arrays and ints.

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
            "root_values": self.root_values[:size].copy(),
            "ownership": self.ownership[:size].copy(),
            "owned": self.owned[:size].copy(),
        }

    def load_state_dict(self, state: dict) -> None:
        """Restore from `state_dict`. A growing window takes the saved slots (within its
        ``capacity`` and ``max_capacity``). With the same slots the buffer is exactly as it was
        (so sampling and growing continue identically); with others, the newest positions are
        kept. Windows saved before root values were kept take the outcomes as theirs.

        Every size the state declares is checked against this buffer's board and against the
        arrays it holds before anything is unpacked (`check_state`).

        Raises:
            ValueError: naming the part of the state that does not fit.
        """
        size, cursor, capacity = self.check_state(state)
        if self.growth:
            slots = min(max(capacity, self.base_capacity), self.max_capacity)
            if slots != self.capacity:
                self._allocate(slots)
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
        root_values = state.get("root_values")  # older windows: none, the outcomes stand in
        source = state["values"] if root_values is None else root_values
        self.root_values[:kept] = np.asarray(source)[order]
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
            "root_values": (size,),
            "ownership": (size, cells),
            "owned": (size,),
        }
        for name, shape in shapes.items():
            value = state.get(name)
            if value is None and name in ("ownership", "owned", "root_values"):
                continue  # from before the ownership target or the root values
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


_ARRAYS = ("bits", "policies", "values", "root_values", "ownership", "owned")  # [N, ...] each
_STATE_KEYS = ("side", "capacity", "size", "cursor", "total_added", "planes_shape")
_STATE_KEYS += ("planes_bits", "policies", "values")
