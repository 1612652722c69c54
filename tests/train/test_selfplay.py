import numpy as np
import pytest

from trapy_rl.game import BLUE, YELLOW, BatchGame, Board, GameState, encode_planes
from trapy_rl.game.planes import PLANE_NAMES
from trapy_rl.mcts import SearchSettings
from trapy_rl.nn import UniformEvaluator
from trapy_rl.train.selfplay import SelfPlay
from trapy_rl.train.settings import SelfPlaySettings

# Small boards: a fixed threshold from the first move, 8 sampled moves (not the side-10
# defaults; the calibration of the threshold is the training loop's, tested there).
SMALL_BOARD = {"resign_min_moves": 0, "resign_false_rate": 0.0, "temperature_moves": 8}


def make_selfplay(board, *, num_games=6, seed=0, evaluator=None, num_simulations=8, **options):
    """SelfPlay with a uniform evaluator and a small search; ``options``: SelfPlaySettings."""
    return SelfPlay(
        evaluator or UniformEvaluator(),
        board,
        search=SearchSettings(num_simulations=num_simulations),
        settings=SelfPlaySettings(num_games=num_games, **{**SMALL_BOARD, **options}),
        seed=seed,
    )


def play(board, *, moves=40, seed=0, **options):
    selfplay = make_selfplay(board, seed=seed, **options)
    return selfplay, selfplay.play(moves, seed=seed)


def test_samples_and_records_agree_with_the_reference_rules():
    board = Board(4)
    _, result = play(board)
    assert result.records, "some games must finish"
    offset = 0
    for record in result.records:
        assert not record.resigned
        state = GameState(board)
        for ply, action in enumerate(record.moves):
            planes = encode_planes(BatchGame.from_states([state]))[0]
            np.testing.assert_array_equal(result.samples.planes[offset + ply], planes)
            expected_z = 1.0 if state.to_move == record.winner else -1.0
            assert result.samples.values[offset + ply] == expected_z
            policy = result.samples.policies[offset + ply]
            assert policy.sum() == pytest.approx(1.0)
            assert (policy[~state.legal_mask()] == 0).all()
            state.play(action)
        assert state.winner == record.winner
        offset += len(record.moves)
    assert offset == len(result.samples)
    stats = result.stats
    assert stats.games == len(result.records) and stats.moves == 6 * 40
    assert stats.simulations == 6 * 40 * 8
    lengths = [len(r.moves) for r in result.records]
    assert stats.mean_game_length == pytest.approx(np.mean(lengths))


def test_continuing_after_a_state_round_trip_is_identical():
    board = Board(4)
    first, _ = play(board, moves=7, seed=3)
    second = make_selfplay(board, seed=99)
    second.load_state_dict(first.state_dict())
    np.testing.assert_array_equal(first.batch.stones, second.batch.stones)
    a, b = first.play(20, seed=5), second.play(20, seed=5)
    assert [r.moves for r in a.records] == [r.moves for r in b.records]
    for name in ("planes", "policies", "values", "root_values"):
        np.testing.assert_array_equal(getattr(a.samples, name), getattr(b.samples, name), name)


def test_games_saved_before_root_values_were_kept_take_their_outcomes_there():
    """A state without root values (an older checkpoint): the positions searched before it
    take their outcome as root value, the later ones their search's."""
    board = Board(4)
    first, _ = play(board, moves=7, seed=3)
    state = first.state_dict()
    older = make_selfplay(board, seed=99)
    older.load_state_dict({k: v for k, v in state.items() if k != "root_values"})
    a, b = first.play(20, seed=5).samples, older.play(20, seed=5).samples
    searched = a.root_values == b.root_values
    np.testing.assert_array_equal(b.root_values[~searched], b.values[~searched])
    assert 0 < (~searched).sum() < searched.sum() and (a.root_values != a.values).any()


def test_a_state_for_another_board_is_refused():
    first, _ = play(Board(4), moves=3)
    other = make_selfplay(Board(5))
    with pytest.raises(ValueError, match="side-4 board does not fit"):
        other.load_state_dict(first.state_dict())


class BlueIsLost:
    """Every position is lost for blue: value -0.99 with blue to move, +0.99 with yellow."""

    def __call__(self, batch, games):
        logits, _ = UniformEvaluator()(batch, games)
        values = np.where(batch.to_move[games] == BLUE, -0.99, 0.99).astype(np.float32)
        return logits, values


def test_blue_resigns_when_its_value_is_below_the_threshold():
    board = Board(4)
    _, result = play(board, moves=1, evaluator=BlueIsLost(), resign_playout_fraction=0.0)
    assert len(result.records) == 6
    for record in result.records:
        assert record.resigned and record.winner == YELLOW and record.moves == []
    # the position blue resigned in is a training sample, lost for blue
    np.testing.assert_array_equal(result.samples.values, -np.ones(6, np.float32))
    assert result.stats.resign_rate == 1.0


def test_playout_games_measure_false_resignations():
    board = Board(4)
    _, result = play(
        board, moves=60, evaluator=BlueIsLost(), resign_playout_fraction=1.0, num_simulations=4
    )
    assert result.records
    for record in result.records:
        assert record.playout and not record.resigned and record.would_resign == BLUE
        assert record.false_resignation == (record.winner == BLUE)
    blue_wins = np.mean([r.winner == BLUE for r in result.records])
    assert result.stats.false_resign_rate == pytest.approx(blue_wins)


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match="num_games"):
        SelfPlaySettings(num_games=0)
    with pytest.raises(ValueError, match="resign_playout_fraction"):
        SelfPlaySettings(num_games=2, resign_playout_fraction=2.0)


def test_no_resignation_before_the_minimum_move():
    board = Board(4)
    _, result = play(
        board, moves=8, evaluator=BlueIsLost(), resign_playout_fraction=0.0, resign_min_moves=4
    )
    for record in result.records:
        assert record.resigned and len(record.moves) == 4  # blue to move at ply 4, resigns


def test_games_record_each_players_lowest_root_value():
    board = Board(4)
    _, result = play(board, moves=60, evaluator=BlueIsLost(), resign_playout_fraction=1.0)
    for record in result.records:
        blue, yellow = record.min_values
        assert blue == pytest.approx(-0.99, abs=0.02) and yellow > 0.0
        assert record.winner_min_value == record.min_values[record.winner - 1]


def test_a_collapsed_value_head_collapses_fixed_resignation_and_calibration_undoes_it():
    """BlueIsLost is a collapsed value head: it calls every position lost for blue, though
    uniform play wins about half of them. With today's fixed threshold every played game is
    a resignation at blue's first move; the calibrator sees blue win played-out games at
    -0.99, drops the threshold below that, and the games are played to the end again."""
    from trapy_rl.train.resign import ResignCalibrator

    board = Board(4)
    selfplay = make_selfplay(
        board, num_games=16, evaluator=BlueIsLost(), resign_playout_fraction=0.5, num_simulations=4
    )
    fixed = selfplay.play(40, seed=1).records
    resigned = [r for r in fixed if not r.playout]
    assert resigned and all(r.resigned and len(r.moves) == 0 for r in resigned)

    calibrator = ResignCalibrator(-0.9, false_rate=0.05, min_games=8)
    for iteration in range(4):
        result = selfplay.play(40, seed=2 + iteration)
        selfplay.set_resign_threshold(calibrator.update(result.records))
    assert calibrator.threshold < -0.98
    late = selfplay.play(40, seed=9).records
    assert late and np.mean([r.resigned for r in late]) <= 0.1
    assert np.mean([len(r.moves) for r in late]) > board.num_cells / 2


def test_the_calibrated_threshold_is_the_quantile_of_the_winners_lowest_values():
    from trapy_rl.train.resign import ResignCalibrator
    from trapy_rl.train.selfplay import GameRecord

    rng = np.random.default_rng(0)
    mins = rng.uniform(-1.0, 0.5, 400).astype(np.float32)
    records = [GameRecord([], 1, playout=True, min_values=(float(v), 1.0)) for v in mins]
    records += [GameRecord([], 2, playout=False, min_values=(1.0, -1.0))] * 50  # not played out
    calibrator = ResignCalibrator(-0.9, false_rate=0.05, min_games=100)
    assert calibrator.update(records[:50]) == -0.9  # too few played-out games yet
    threshold = calibrator.update(records[50:])
    assert np.mean(mins < threshold) <= 0.05 < np.mean(mins <= threshold) + 1 / len(mins)
    assert threshold == np.sort(mins)[int(np.floor(0.05 * (len(mins) - 1)))]
    ahead = ResignCalibrator(-0.9, false_rate=0.05, min_games=1)
    assert ahead.update([GameRecord([], 1, playout=True, min_values=(0.8, 1.0))]) == 0.0
    copy = ResignCalibrator(-0.5, false_rate=0.05)
    copy.load_state_dict(calibrator.state_dict())
    assert copy.threshold == threshold and len(copy.winner_mins) == 400


def test_collapse_warnings_name_what_collapsed():
    from trapy_rl.train.resign import collapse_warnings

    board = Board(10)
    healthy = {"selfplay/game_length": 80.0, "selfplay/resign_rate": 0.1, "loss/value": 0.4}
    assert collapse_warnings(healthy, board) == {}
    collapsed = {"selfplay/game_length": 7.0, "selfplay/resign_rate": 0.84, "loss/value": 0.02}
    warnings = collapse_warnings(collapsed, board)
    assert set(warnings) == {"game_length", "value_loss"}
    assert "7 moves on a board of 145 cells (84% resigned)" in warnings["game_length"]


def test_gumbel_self_play_trains_on_the_improved_policy_and_plays_the_searchs_choice():
    from trapy_rl.mcts import SearchSettings
    from trapy_rl.train.settings import SelfPlaySettings

    board = Board(3)
    selfplay = SelfPlay(
        UniformEvaluator(),
        board,
        search=SearchSettings(num_simulations=8, search="gumbel", max_considered=4),
        settings=SelfPlaySettings(num_games=4, resign_playout_fraction=0.0, **SMALL_BOARD),
        seed=0,
    )
    result = selfplay.play(30, seed=1)
    assert result.records
    for record in result.records:  # legal games to the end, by the reference rules
        state = GameState(board)
        for action in record.moves:
            state.play(action)
        assert state.winner == record.winner
    policies = result.samples.policies
    np.testing.assert_allclose(policies.sum(axis=1), 1.0, rtol=1e-5)
    # the improved policy is a softmax, positive on every legal action: not visit counts
    legal = policies > 0
    assert (legal.sum(axis=1) > 4).any()


def test_playout_cap_randomization_records_only_the_full_searches():
    board = Board(4)
    selfplay = make_selfplay(
        board, num_games=8, num_simulations=16, full_search_share=0.25, cheap_num_simulations=2
    )
    result = selfplay.play(60, seed=3)
    positions = sum(len(r.moves) + r.resigned for r in result.records)
    assert 0.1 < len(result.samples) / positions < 0.4  # about a quarter of the moves
    # every recorded position is a full search's: a policy target, no rows of zeros
    np.testing.assert_allclose(result.samples.policies.sum(axis=1), 1.0, rtol=1e-5)
    # simulations: 16 for a full search, 2 for a cheap one; 8 games x 60 moves in all
    sims = result.stats.simulations
    assert 8 * 60 * 2 < sims < 8 * 60 * 16 and result.stats.moves == 8 * 60
    with pytest.raises(ValueError, match="full_search_share"):
        SelfPlaySettings(full_search_share=0.0)


@pytest.mark.parametrize("forced_playouts", [0.0, 2.0])
def test_forced_playouts_make_the_full_searches_targets_the_pruned_counts(forced_playouts):
    """The first move's targets, against the same search run by hand: the visit counts
    normalised (today's rule) with forced_playouts 0, the pruned policy with k > 0."""
    from trapy_rl.mcts import MCTS

    board = Board(5)
    evaluator = UniformEvaluator()
    selfplay = make_selfplay(
        board, evaluator=evaluator, num_simulations=48, forced_playouts=forced_playouts
    )
    selfplay.play(1, seed=4)
    targets = selfplay.state_dict()["policies"][:, 0]  # [B, A]
    rng = np.random.default_rng(4)  # the call's generator: it seeds the search first
    search = MCTS(
        evaluator, board, num_games=6, settings=selfplay.search, seed=int(rng.integers(2**63))
    )
    result = search.search(BatchGame(6, board), add_noise=True, forced_playouts=forced_playouts)
    counts = result.visit_counts.astype(np.float32)
    plain = counts / counts.sum(axis=1, keepdims=True)
    if forced_playouts:
        np.testing.assert_array_equal(targets, result.pruned_policy)
        assert not np.array_equal(targets, plain)
    else:
        assert result.pruned_policy is None
        np.testing.assert_array_equal(targets, plain)


def test_forced_playouts_are_refused_with_the_gumbel_search_and_below_zero():
    with pytest.raises(ValueError, match=r"^selfplay\.forced_playouts must be finite and >= 0"):
        SelfPlaySettings(forced_playouts=-1.0)
    with pytest.raises(ValueError, match=r"^selfplay\.forced_playouts must be finite"):
        SelfPlaySettings(forced_playouts=float("nan"))
    with pytest.raises(ValueError, match="forced_playouts > 0 needs the puct search"):
        SelfPlay(
            UniformEvaluator(),
            Board(3),
            search=SearchSettings(search="gumbel"),
            settings=SelfPlaySettings(forced_playouts=2.0),
        )


class SwapBiasedEvaluator(UniformEvaluator):
    """A uniform prior but for the swap, whose logit is ``swap_logit`` (+20: the search
    always swaps; -20: it never does)."""

    def __init__(self, swap_logit: float):
        self.swap_logit = swap_logit

    def __call__(self, batch, games):
        logits, values = super().__call__(batch, games)
        swap = batch.board.swap_action
        logits[:, swap] = np.where(np.isfinite(logits[:, swap]), self.swap_logit, -np.inf)
        return logits, values


@pytest.mark.parametrize("swap_logit", [20.0, -20.0], ids=["always-swaps", "never-swaps"])
def test_swap_coins_play_both_branches_whatever_the_search_prefers(swap_logit):
    board = Board(3)
    swapped = {}
    for share in (0.0, 1.0):
        selfplay = make_selfplay(
            board,
            num_games=16,
            evaluator=SwapBiasedEvaluator(swap_logit),
            swap_coin_share=share,
            temperature_moves=1,  # the search's decision is its most visited action
        )
        result = selfplay.play(80, seed=5)
        for record in result.records:  # legal games to the end, by the reference rules
            state = GameState(board)
            for action in record.moves:
                state.play(action)
            assert state.winner == record.winner
        decisions = [r.moves[1] == board.swap_action for r in result.records]
        swapped[share] = (sum(decisions), len(decisions))
        # the decision's policy target is the search's own, coin or not
        second = result.samples.planes[:, PLANE_NAMES.index("swap_allowed")].max(axis=(1, 2)) > 0
        targets = result.samples.policies[second, board.swap_action]
        assert ((targets > 0.5) if swap_logit > 0 else (targets < 0.5)).all()
    wins, games = swapped[0.0]  # no coins: the search decides (its root noise aside)
    assert (wins / games > 0.9) if swap_logit > 0 else (wins / games < 0.1)
    wins, games = swapped[1.0]
    assert games >= 40 and 0.3 < wins / games < 0.7  # every decision a coin: about half
    with pytest.raises(ValueError, match="swap_coin_share"):
        SelfPlaySettings(swap_coin_share=1.5)


@pytest.mark.parametrize("swap_logit", [20.0, -20.0], ids=["always-swaps", "never-swaps"])
def test_a_declined_swap_also_trains_the_position_after_the_swap(swap_logit):
    """Each game that declined the swap gains one sample after its own: the position after
    ``c, swap`` by the reference rules, with the decision's targets less the swap."""
    board = Board(4)
    kwargs = dict(num_games=8, evaluator=SwapBiasedEvaluator(swap_logit), temperature_moves=1)
    plain = make_selfplay(board, **kwargs).play(60, seed=3)
    more = make_selfplay(board, post_swap_samples=True, **kwargs).play(60, seed=3)
    assert [r.moves for r in more.records] == [r.moves for r in plain.records]  # same games
    swap, swap_plane = board.swap_action, PLANE_NAMES.index("swap_allowed")
    start = extra = 0  # the game's first sample in more; start - extra in plain
    for record in more.records:
        length = len(record.moves)
        ours, theirs = slice(start, start + length), slice(start - extra, start - extra + length)
        np.testing.assert_array_equal(more.samples.planes[ours], plain.samples.planes[theirs])
        np.testing.assert_array_equal(more.samples.values[ours], plain.samples.values[theirs])
        start += length
        if record.moves[1] == swap:
            continue
        extra += 1
        after_swap = GameState(board)
        after_swap.play(record.moves[0])
        after_swap.play(swap)
        planes = encode_planes(BatchGame.from_states([after_swap]))[0]
        np.testing.assert_array_equal(more.samples.planes[start], planes)
        decision = more.samples.policies[start - length + 1]
        expected = np.where(np.arange(board.num_actions) == swap, 0.0, decision)
        np.testing.assert_allclose(more.samples.policies[start], expected / expected.sum())
        assert more.samples.policies[start][~after_swap.legal_mask()].sum() == 0
        assert more.samples.values[start] == more.samples.values[start - length + 1]
        # no search of its own: its root value is its outcome (the decision's counts the swap)
        assert more.samples.root_values[start] == more.samples.values[start]
        np.testing.assert_array_equal(
            more.samples.root_values[ours], plain.samples.root_values[theirs]
        )
        # the decision and the position after the swap differ only in the swap plane
        differ = (more.samples.planes[start] != more.samples.planes[start - length + 1]).any(
            axis=(1, 2)
        )
        assert np.flatnonzero(differ).tolist() == [swap_plane]
        start += 1
    assert start == len(more.samples) == len(plain.samples) + extra
    assert (extra == 0) if swap_logit > 0 else (extra == len(more.records) > 0)


class CellBiasedEvaluator(UniformEvaluator):
    """A uniform prior but for cell 0, whose logit is +20: the search always plays there."""

    def __call__(self, batch, games):
        logits, values = super().__call__(batch, games)
        logits[:, 0] = np.where(np.isfinite(logits[:, 0]), 20.0, -np.inf)
        return logits, values


def test_random_openings_spread_the_first_stone_the_search_would_put_on_one_cell():
    board = Board(5)  # 35 cells
    for share, low, high in ((0.0, 0, 0), (0.5, 18, 46), (1.0, 55, 64)):
        selfplay = make_selfplay(
            board,
            num_games=64,
            evaluator=CellBiasedEvaluator(),
            random_opening_share=share,
            temperature_moves=0,  # the search's move is its most visited action: cell 0
        )
        result = selfplay.play(36, seed=7)  # side 5: every game ends within 36 moves
        assert len(result.records) >= 64
        first = np.array([record.moves[0] for record in result.records[:64]])
        moved = int((first != 0).sum())  # a drawn cell is 0 one time in 35
        assert low <= moved <= high, (share, moved)
        if share == 1.0:
            assert len(np.unique(first)) >= 20  # 64 draws of 35 cells: about 30 distinct
        # the first position's policy target is the search's own, drawn cell or not
        empty = encode_planes(BatchGame(1, board))[0]
        at_start = (result.samples.planes == empty).all(axis=(1, 2, 3))
        assert at_start.sum() == len(result.records)
        assert (result.samples.policies[at_start, 0] > 0.5).all()
    with pytest.raises(ValueError, match="random_opening_share"):
        SelfPlaySettings(random_opening_share=-0.1)


class TopCellEvaluator(UniformEvaluator):
    """A uniform prior but for the highest free cell, whose logit is +20: the search always
    plays there (the swap, the last action, stays at 0)."""

    def __call__(self, batch, games):
        logits, values = super().__call__(batch, games)
        cells = np.isfinite(logits[:, :-1])
        top = cells.shape[1] - 1 - cells[:, ::-1].argmax(axis=1)
        logits[np.arange(len(games)), top] = 20.0
        return logits, values


def searched_plies(board, moves):
    """The plies of a game whose move is `TopCellEvaluator`'s choice: the highest free cell."""
    state, plies = GameState(board), []
    for ply, action in enumerate(moves):
        if action == np.flatnonzero(state.legal_mask()[:-1]).max():
            plies.append(ply)
        state.play(action)
    return plies


@pytest.mark.parametrize(("longest", "run_share"), [(1, 1.0), (4, 1.0), (4, 0.5)])
def test_long_random_openings_draw_their_first_moves_then_the_search_plays(longest, run_share):
    """With ``random_opening_moves`` k, a random opening's drawn moves are its first 1 to k
    (in the share ``random_run_share`` of them, the first alone in the others); every later
    move is the search's. A drawn move is the search's own one time in 35 or so, so a game's
    drawn run shows as the moves before its last move off the search's choice."""
    board = Board(5)
    selfplay = make_selfplay(
        board,
        num_games=64,
        evaluator=TopCellEvaluator(),
        random_opening_share=1.0,
        random_opening_moves=longest,
        random_run_share=run_share,
        temperature_moves=0,
    )
    result = selfplay.play(36, seed=11)
    runs = []
    for record in result.records[:64]:
        off = sorted(set(range(len(record.moves))) - set(searched_plies(board, record.moves)))
        runs.append(off[-1] + 1 if off else 0)
    runs = np.array(runs)
    assert runs.max() <= longest
    for length in range(2, longest + 1):  # 16 games a length of 4 (8 at half): each is seen
        assert (runs == length).sum() >= 5 * run_share, (length, np.bincount(runs))
    assert (runs >= 1).mean() > 0.9  # ply 0 is drawn in every game
    if longest > 1:  # run on: 48 games of 64 at the full share, 24 at half
        low, high = (36, 56) if run_share == 1.0 else (12, 36)
        assert low <= (runs >= 2).sum() <= high, np.bincount(runs)


def test_a_state_round_trip_inside_long_random_openings_is_identical():
    board = Board(5)
    options = {"random_opening_share": 1.0, "random_opening_moves": 6}
    first = make_selfplay(board, seed=3, **options)
    first.play(3, seed=3)  # every game inside its drawn run or just past it
    second = make_selfplay(board, seed=99, **options)
    second.load_state_dict(first.state_dict())
    a, b = first.play(30, seed=5), second.play(30, seed=5)
    assert [r.moves for r in a.records] == [r.moves for r in b.records]
    with pytest.raises(ValueError, match="random_opening_moves"):
        SelfPlaySettings(random_opening_moves=0)
    with pytest.raises(ValueError, match="random_run_share"):
        SelfPlaySettings(random_run_share=1.5)


def test_ownership_targets_are_the_final_stones_of_games_played_out():
    """Each position's target is the game's final stones from its mover's view, checked
    against the reference rules; resigned games' positions are not targets."""
    board = Board(3)
    _, result = play(board, moves=40, resign_playout_fraction=1.0)
    samples, start = result.samples, 0
    for record in result.records:
        final = GameState.from_moves(record.moves, board).stones
        state = GameState(board)
        for offset, action in enumerate(record.moves):
            mover = state.to_move
            expected = np.where(final == mover, 1, np.where(final == 0, 0, -1))
            np.testing.assert_array_equal(samples.ownership[start + offset], expected)
            state.play(action)
        assert samples.owned[start : start + len(record.moves)].all()
        start += len(record.moves)
    assert start == len(samples)
    _, resigned = play(board, moves=1, evaluator=BlueIsLost(), resign_playout_fraction=0.0)
    assert not resigned.samples.owned.any()


def winning_moves(state: GameState) -> list[int]:
    return [a for a in state.legal_actions() if state.copy().play(a).winner]


def one_move_from_a_win(board: Board, mover: int, seed: int) -> GameState:
    """A position of a random game in which ``mover``, to move, can win at once."""
    rng = np.random.default_rng(seed)
    while True:
        state = GameState(board)
        while not state.is_over:
            if state.to_move == mover and state.move_count >= 2 and winning_moves(state):
                return state
            state.play(int(rng.choice(state.legal_actions())))


class WinningMovesOnly:
    """Prior only on the moves that win at once (the others legal with prior 0), and the value
    ``value`` for the player to move: a search of S simulations from a position with a winning
    move spends them all there, so the root's mean value is (value + S) / (S + 1)."""

    def __init__(self, value: float):
        self.value = value

    def __call__(self, batch, games):
        logits = np.full((len(games), batch.board.num_actions), -np.inf, np.float32)
        for row, g in enumerate(games):
            for action in np.flatnonzero(batch.legal_mask()[g]):
                trial = batch.take([g])
                trial.step(np.array([action]))
                logits[row, action] = 0.0 if trial.winner[0] else np.finfo(np.float32).min
        return logits, np.full(len(games), self.value, np.float32)


@pytest.mark.parametrize("search", ["puct", "gumbel"])
def test_each_position_keeps_its_searchs_root_value_for_the_player_to_move(search):
    """Blue to move in one game, yellow in the other, each one move from a win, the net's
    value -0.5 for the mover: the recorded q is the root's mean value (-0.5 + 8) / 9 for the
    mover, whichever colour, and z is +1."""
    board = Board(4)
    states = [one_move_from_a_win(board, BLUE, 0), one_move_from_a_win(board, YELLOW, 1)]
    settings = SearchSettings(
        num_simulations=8, search=search, dirichlet_fraction=0.0, max_considered=1
    )
    selfplay = SelfPlay(
        WinningMovesOnly(-0.5),
        board,
        search=settings,
        settings=SelfPlaySettings(num_games=2, resign_playout_fraction=0.0, **SMALL_BOARD),
    )
    longest = max(state.move_count for state in states)
    history = np.zeros((2, longest), np.int16)
    for row, state in enumerate(states):
        history[row, : state.move_count] = state.history
    saved = selfplay.state_dict() | {
        "history": history,
        "move_count": np.array([state.move_count for state in states]),
        "policies": np.zeros((2, longest, board.num_actions), np.float32),  # not recorded
        "root_values": np.zeros((2, longest), np.float32),
    }
    selfplay.load_state_dict(saved)
    result = selfplay.play(1, seed=0)
    assert [r.winner for r in result.records] == [BLUE, YELLOW]
    assert len(result.samples) == 2  # the positions one move from the win alone
    np.testing.assert_array_equal(result.samples.values, [1.0, 1.0])
    np.testing.assert_allclose(result.samples.root_values, (-0.5 + 8) / 9, rtol=1e-6)
