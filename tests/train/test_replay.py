import numpy as np
import pytest

from trapy_rl.game import BatchGame, Board, encode_planes, mirror_planes, mirror_policy
from trapy_rl.train.replay import ReplayBuffer, Samples


def mirrored_batch(batch: BatchGame) -> BatchGame:
    """The same games with every move reflected, played from the start."""
    board = batch.board
    mirror = BatchGame(batch.num_games, board)
    for ply in range(int(batch.move_count.max())):
        live = batch.move_count > ply
        actions = np.where(live, board.mirror_actions[np.maximum(batch.history[:, ply], 0)], 0)
        mirror.step(actions, games=live)
    return mirror


@pytest.mark.parametrize("side", [3, 5, 10])
def test_mirrored_planes_equal_planes_of_the_mirrored_position(side, random_positions):
    board = Board(side)
    batch, _ = random_positions(board, 12, seed=side)
    direct = encode_planes(mirrored_batch(batch))
    np.testing.assert_array_equal(mirror_planes(encode_planes(batch), board), direct)
    # and the legal moves (a policy over them) mirror the same way
    np.testing.assert_array_equal(
        mirror_policy(batch.legal_mask(), board), mirrored_batch(batch).legal_mask()
    )


def held(buffer: ReplayBuffer) -> np.ndarray:
    """The values held, oldest first."""
    order = (buffer.cursor - buffer.size + np.arange(buffer.size)) % buffer.capacity
    return buffer.values[order]


def test_ring_buffer_keeps_the_newest_in_order(make_samples):
    board = Board(3)
    buffer = ReplayBuffer(board, capacity=10)
    samples = make_samples(board, 25, seed=0)
    samples.values[:] = np.arange(25)
    for start in range(0, 25, 7):
        part = (a[start : start + 7] for a in (samples.planes, samples.policies, samples.values))
        buffer.add(Samples(*part))
    assert len(buffer) == 10 and buffer.total_added == 25
    np.testing.assert_array_equal(held(buffer), np.arange(15, 25))


def test_adding_more_than_capacity_at_once_keeps_the_newest(make_samples):
    board = Board(3)
    buffer = ReplayBuffer(board, capacity=4)
    samples = make_samples(board, 9, seed=1)
    buffer.add(samples)
    samples.values[:] = np.arange(9)
    buffer = ReplayBuffer(board, capacity=4)
    buffer.add(samples)
    np.testing.assert_array_equal(held(buffer), np.arange(5, 9))
    assert buffer.total_added == 9


@pytest.mark.parametrize("mirror", ["none", "random", "both"])
def test_sampled_positions_are_held_positions_or_their_mirrors(mirror, make_samples):
    board = Board(4)
    samples = make_samples(board, 20, seed=2)
    buffer = ReplayBuffer(board, capacity=50)
    buffer.add(samples)
    drawn = buffer.sample(64, np.random.default_rng(0), mirror=mirror)
    assert len(drawn) == (128 if mirror == "both" else 64)
    flipped = samples.mirrored(board)
    keys = {
        p.tobytes(): (q, v) for p, q, v in zip(samples.planes, samples.policies, samples.values)
    }
    mirrored_keys = {
        p.tobytes(): (q, v) for p, q, v in zip(flipped.planes, flipped.policies, flipped.values)
    }
    seen_mirror = 0
    for planes, policy, value in zip(drawn.planes, drawn.policies, drawn.values):
        key = planes.tobytes()
        if key in keys and np.array_equal(keys[key][0], policy):
            assert keys[key][1] == value
        else:
            assert key in mirrored_keys and np.array_equal(mirrored_keys[key][0], policy)
            assert mirrored_keys[key][1] == value
            seen_mirror += 1
    if mirror == "none":
        assert seen_mirror == 0
    elif mirror == "both":
        assert seen_mirror >= 64
    else:
        assert 10 < seen_mirror < 54


@pytest.mark.parametrize("capacity", [8, 5, 20])
def test_state_dict_round_trip(capacity, make_samples):
    board = Board(4)
    buffer = ReplayBuffer(board, capacity=8)
    samples = make_samples(board, 11, seed=3)
    samples.values[:] = np.arange(11)
    buffer.add(samples)
    other = ReplayBuffer(board, capacity=capacity)
    other.load_state_dict(buffer.state_dict())
    assert other.total_added == 11
    np.testing.assert_array_equal(held(other), np.arange(11)[-min(capacity, 8) :])
    if capacity == 8:  # the same slots: sampling continues identically
        a = buffer.sample(32, np.random.default_rng(5))
        b = other.sample(32, np.random.default_rng(5))
        for x, y in zip((a.planes, a.policies, a.values), (b.planes, b.policies, b.values)):
            np.testing.assert_array_equal(x, y)


def test_bad_input_is_named(make_samples):
    board = Board(4)
    with pytest.raises(ValueError, match="capacity"):
        ReplayBuffer(board, capacity=0)
    buffer = ReplayBuffer(board, capacity=8)
    with pytest.raises(ValueError, match="empty"):
        buffer.sample(4, np.random.default_rng(0))
    with pytest.raises(ValueError, match="side-4"):
        buffer.add(make_samples(Board(3), 2, seed=0))
    buffer.add(make_samples(board, 2, seed=0))
    with pytest.raises(ValueError, match="mirror"):
        buffer.sample(4, np.random.default_rng(0), mirror="flip")


def test_ownership_targets_mirror_with_the_stones_and_survive_a_round_trip(random_positions):
    """The ownership of a mirrored sample is the ownership of the mirrored position (its
    stones are the mirror's), and a checkpoint from before the target loads without one."""
    board = Board(4)
    batch, _ = random_positions(board, 6, seed=2)
    stones = batch.stones.astype(np.int8)
    ownership = np.where(stones == 1, 1, np.where(stones == 2, -1, 0)).astype(np.int8)
    samples = Samples(
        encode_planes(batch),
        batch.legal_mask() / batch.legal_mask().sum(axis=1, keepdims=True),
        np.ones(6, np.float32),
        ownership,
        np.array([True, False] * 3),
    )
    mirror = mirrored_batch(batch).stones
    expected = np.where(mirror == 1, 1, np.where(mirror == 2, -1, 0))
    np.testing.assert_array_equal(samples.mirrored(board).ownership, expected)

    buffer = ReplayBuffer(board, capacity=8)
    buffer.add(samples)
    drawn = buffer.sample(64, np.random.default_rng(0), mirror="random")
    for row in range(64):  # each draw is a held position or its mirror, ownership included
        i = int(
            np.flatnonzero(
                (samples.planes == drawn.planes[row]).all(axis=(1, 2, 3))
                | (samples.mirrored(board).planes == drawn.planes[row]).all(axis=(1, 2, 3))
            )[0]
        )
        plain = (samples.planes[i] == drawn.planes[row]).all()
        want = samples.ownership[i] if plain else samples.mirrored(board).ownership[i]
        np.testing.assert_array_equal(drawn.ownership[row], want)
        assert drawn.owned[row] == samples.owned[i]
    state = buffer.state_dict()
    again = ReplayBuffer(board, capacity=8)
    again.load_state_dict(state)
    np.testing.assert_array_equal(again.ownership, buffer.ownership)
    old = {k: v for k, v in state.items() if k not in ("ownership", "owned")}
    again.load_state_dict(old)
    assert not again.owned.any() and not again.ownership.any()


def reference_window(samples: Samples, capacity: int) -> tuple[np.ndarray, np.ndarray]:
    """(planes, values) the newest ``capacity`` of ``samples``, oldest first."""
    return samples.planes[-capacity:], samples.values[-capacity:]


@pytest.mark.parametrize(("added", "capacity", "reloaded"), [(11, 8, 8), (11, 8, 5), (6, 8, 3),
                                                             (30, 16, 40), (0, 4, 2)])  # fmt: skip
def test_packed_window_round_trips_through_chunks_like_the_flat_format(
    added, capacity, reloaded, make_samples, monkeypatch
):
    """The window keeps planes bit-packed per position; a saved window is one flat bit stream
    (`pack_planes`), written and read in chunks of 8 positions here to cross every boundary."""
    from trapy_rl.train.replay import pack_planes

    board = Board(3)
    monkeypatch.setattr(ReplayBuffer, "_chunk_rows", lambda self: 8)
    samples = make_samples(board, max(added, 1), seed=7)
    samples.values[:] = np.arange(len(samples))
    buffer = ReplayBuffer(board, capacity=capacity)
    if added:
        buffer.add(samples.take(np.arange(added)))
    state = buffer.state_dict()
    order = (buffer.cursor - buffer.size + np.arange(buffer.size)) % capacity
    slot_planes = buffer.planes(np.arange(buffer.size))
    np.testing.assert_array_equal(state["planes_bits"], pack_planes(slot_planes))
    np.testing.assert_array_equal(buffer.planes(order), samples.planes[:added][-capacity:])
    other = ReplayBuffer(board, capacity=reloaded)
    other.load_state_dict(state)
    kept = min(buffer.size, reloaded)
    newest = (other.cursor - other.size + np.arange(other.size)) % reloaded
    np.testing.assert_array_equal(
        other.values[newest], samples.values[:added][-kept:] if kept else []
    )
    np.testing.assert_array_equal(other.planes(newest), samples.planes[:added][-kept:] if kept else
                                  other.planes(newest))  # fmt: skip


def test_replay_bytes_is_what_the_window_holds():
    from trapy_rl.train.replay import replay_bytes

    for side in (3, 10):
        buffer = ReplayBuffer(Board(side), capacity=100)
        held_bytes = sum(a.nbytes for a in vars(buffer).values() if isinstance(a, np.ndarray))
        assert replay_bytes(Board(side), 100) == held_bytes


def _hostile(state: dict, **changes) -> dict:
    return {**state, **changes}


def test_a_saved_window_is_checked_against_its_declared_sizes_before_unpacking(make_samples):
    """Shapes that claim more than the arrays hold (planes_shape of 252 billion bits over a
    few bytes) are refused naming the part, before anything is allocated from them."""
    import torch

    from trapy_rl.train.replay import unpack_planes

    board = Board(4)
    buffer = ReplayBuffer(board, capacity=8)
    buffer.add(make_samples(board, 6, seed=0))
    state = buffer.state_dict()
    bad = {
        "planes_shape": (_hostile(state, planes_shape=[10**9, 9, 4, 7]), "planes_shape"),
        "huge capacity": (_hostile(state, capacity=10**12), "capacity"),
        "size above capacity": (_hostile(state, size=9), "size"),
        "negative size": (_hostile(state, size=-1), "size must be an integer >= 0"),
        "cursor": (_hostile(state, cursor=7), "cursor"),
        "short bits": (_hostile(state, planes_bits=state["planes_bits"][:-1]), "planes_bits"),
        "policies": (_hostile(state, policies=torch.zeros(6, 3)), "policies"),
        "other side": (_hostile(state, side=5), "side-5"),
        "text": (_hostile(state, size="6"), "size"),
        "missing": ({k: v for k, v in state.items() if k != "values"}, "lacks values"),
    }
    for name, (hostile, message) in bad.items():
        with pytest.raises(ValueError, match=message):
            ReplayBuffer(board, capacity=8).load_state_dict(hostile)
            pytest.fail(name)
    with pytest.raises(ValueError, match="need 31,500,000,000 bytes"):
        unpack_planes(np.zeros(3, np.uint8), (10**9, 9, 4, 7))
    with pytest.raises(ValueError, match="capacity must be between 1 and"):
        ReplayBuffer(board, capacity=10**12)


# ---------------------------------------------------------------- the growing window
@pytest.mark.parametrize(
    ("total", "growth", "max_capacity", "window"),
    [
        (0, 0.4, 10**6, 0),
        (60, 0.4, 10**6, 60),  # up to c: every position
        (100, 0.4, 10**6, 100),
        (1_600, 0.0, 10**6, 100),  # no growth: c
        # c (1 + beta ((T / c) ** 0.75 - 1) / 0.75), with (T / c) ** 0.75 = 8 and 27:
        (1_600, 0.4, 10**6, 473),  # 100 (1 + 0.4 * 7 / 0.75) = 473.33
        (8_100, 0.4, 10**6, 1_486),  # 100 (1 + 0.4 * 26 / 0.75) = 1486.67
        (8_100, 0.4, 1_000, 1_000),  # capped
        (8_100, 0.75, 10**6, 2_700),  # beta = alpha: c (T / c) ** 0.75 = 100 * 27
        (1_600, 0.75, 10**6, 800),
    ],
)  # fmt: skip
def test_the_window_follows_katagos_power_law(total, growth, max_capacity, window):
    from trapy_rl.train.replay import window_size

    assert window_size(total, capacity=100, growth=growth, max_capacity=max_capacity) == window


def test_a_position_that_leaves_the_growing_window_never_comes_back():
    """The window's oldest position, T - window(T), never moves back as T grows (for every
    growth up to 1): what the ring may drop for good."""
    from trapy_rl.train.replay import window_size

    totals = np.arange(0, 200_000, 7)
    for growth in (0.1, 0.4, 1.0):
        windows = np.array(
            [window_size(int(t), capacity=500, growth=growth, max_capacity=10**6) for t in totals]
        )
        assert (np.diff(totals - windows) >= 0).all() and (windows <= totals).all()
        assert (np.diff(windows) >= 0).all() and windows[-1] > 500


def newest_ids(buffer: ReplayBuffer) -> np.ndarray:
    """The values (position ids here) of the window the buffer samples from, oldest first."""
    return held(buffer)[buffer.size - buffer.window :]


def test_a_growing_window_samples_its_newest_positions_alone_and_stays_within_its_cap(
    make_samples,
):
    """Against a list of every position added: after each add the buffer draws exactly from
    the newest window(T) (every one of them drawn, none older), holds them in order, and its
    arrays never pass max_capacity slots."""
    from trapy_rl.train.replay import replay_bytes, window_size

    board = Board(3)
    settings = {"capacity": 10, "growth": 0.4, "max_capacity": 40}
    buffer = ReplayBuffer(board, **settings)
    pool = make_samples(board, 60, seed=4)
    added: list[int] = []  # every position's id, in order
    rng = np.random.default_rng(0)
    slots, behind = [], []  # the ring's slots, and positions held behind the window
    for chunk in (3, 9, 1, 14, 25, 40, 7, 60, 60, 120):
        part = pool.take(rng.integers(0, len(pool), size=chunk))
        part.values = np.arange(len(added), len(added) + chunk, dtype=np.float32)
        part.root_values = -part.values
        buffer.add(part)
        added += list(range(len(added), len(added) + chunk))
        window = window_size(len(added), capacity=10, growth=0.4, max_capacity=40)
        assert buffer.window == window and buffer.total_added == len(added)
        np.testing.assert_array_equal(newest_ids(buffer), added[-window:])
        drawn = buffer.sample(4000, rng, mirror="none")
        assert set(drawn.values.tolist()) == set(added[-window:])
        np.testing.assert_array_equal(drawn.root_values, -drawn.values)
        assert window <= buffer.capacity <= 40
        held_bytes = sum(a.nbytes for a in vars(buffer).values() if isinstance(a, np.ndarray))
        assert held_bytes <= replay_bytes(board, 40)
        slots.append(buffer.capacity)
        behind.append(buffer.size - window)
    assert slots[0] == 10 and slots[-1] == 40 and len(set(slots)) > 2  # grown in steps
    assert max(behind) > 0 and behind[-1] == 0  # the window full size at the cap


def test_a_growing_window_round_trips_and_goes_on_as_if_never_saved(make_samples):
    """A window saved mid-growth and loaded into a new buffer of the same settings has the
    same slots, draws the same positions and grows the same way after; an older state
    (without root values) takes the outcomes as its root values."""
    board = Board(3)
    settings = {"capacity": 8, "growth": 0.5, "max_capacity": 100}
    samples = make_samples(board, 50, seed=6)
    samples.values[:] = np.arange(50)
    samples.root_values = samples.values / 100
    buffer = ReplayBuffer(board, **settings)
    for start in range(0, 24, 6):
        buffer.add(samples.take(np.arange(start, start + 6)))
    # grown to 17 slots, wrapped round, 3 positions held that the window of 14 left behind
    assert (buffer.capacity, buffer.size, buffer.window, buffer.cursor) == (17, 17, 14, 2)
    state = buffer.state_dict()
    again = ReplayBuffer(board, **settings)
    again.load_state_dict(state)
    for start in (24, 34):
        a, b = (x.sample(64, np.random.default_rng(start)) for x in (buffer, again))
        for name in ("planes", "policies", "values", "root_values", "ownership", "owned"):
            np.testing.assert_array_equal(getattr(a, name), getattr(b, name), name)
        for x in (buffer, again):
            x.add(samples.take(np.arange(start, start + 10)))
        assert (buffer.capacity, buffer.cursor, buffer.window) == (
            again.capacity, again.cursor, again.window
        )  # fmt: skip
    for name, value in buffer.state_dict().items():
        np.testing.assert_array_equal(np.asarray(value), np.asarray(again.state_dict()[name]))

    fixed = ReplayBuffer(board, capacity=8)  # the same state in a fixed window: the newest 8
    fixed.load_state_dict(state)
    np.testing.assert_array_equal(held(fixed), np.arange(16, 24))
    old = {key: value for key, value in state.items() if key != "root_values"}
    fixed.load_state_dict(old)
    np.testing.assert_array_equal(fixed.root_values, fixed.values)


def test_root_values_travel_with_their_positions(make_samples):
    """Root values are kept through the window, mirrors, packing and the flat saved format."""
    board = Board(4)
    samples = make_samples(board, 5, seed=8)
    assert np.array_equal(samples.root_values, samples.values)  # none given: the outcomes
    samples.root_values = np.array([0.1, -0.2, 0.3, -0.4, 0.5], np.float32)
    np.testing.assert_array_equal(samples.mirrored(board).root_values, samples.root_values)
    np.testing.assert_array_equal(Samples.unpacked(samples.packed()).root_values,
                                  samples.root_values)  # fmt: skip
    old = {k: v for k, v in samples.packed().items() if k != "root_values"}
    np.testing.assert_array_equal(Samples.unpacked(old).root_values, samples.values)
    both = Samples.concatenate([samples, samples.take(np.array([4, 0]))], board)
    np.testing.assert_array_equal(both.root_values[-2:], samples.root_values[[4, 0]])
    buffer = ReplayBuffer(board, capacity=5)
    buffer.add(samples)
    np.testing.assert_array_equal(buffer.state_dict()["root_values"], samples.root_values)
    drawn = buffer.sample(200, np.random.default_rng(1), mirror="both")
    mirrored = samples.mirrored(board).policies
    for policy, root_value in zip(drawn.policies, drawn.root_values):  # found by its policy
        found = (samples.policies == policy).all(axis=1) | (mirrored == policy).all(axis=1)
        assert root_value == samples.root_values[np.flatnonzero(found)[0]]
    bad = {**buffer.state_dict(), "root_values": np.zeros(4, np.float32)}
    with pytest.raises(ValueError, match=r"root_values has shape \(4,\), the window needs \(5,\)"):
        ReplayBuffer(board, capacity=5).load_state_dict(bad)


def test_bad_growth_settings_are_named():
    board = Board(3)
    for growth in (-0.1, 1.5, float("nan")):
        with pytest.raises(ValueError, match=r"replay growth must be in \[0, 1\], got"):
            ReplayBuffer(board, 10, growth=growth, max_capacity=20)
    with pytest.raises(ValueError, match=r"replay max_capacity=5 is below capacity=10"):
        ReplayBuffer(board, 10, growth=0.4, max_capacity=5)
    assert ReplayBuffer(board, 10, max_capacity=5).max_capacity == 10  # no growth: unused
