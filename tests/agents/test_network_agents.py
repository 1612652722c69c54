"""Network agents: built from checkpoints by spec, legal moves, policy choices, clear errors."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from tiny import write_tiny_checkpoint, write_tiny_run_checkpoint

from trapy_rl.agents import NetworkMCTSAgent, NetworkPolicyAgent, RandomAgent, parse_agent
from trapy_rl.agents.network import checkpoint_file
from trapy_rl.agents.search import SearchAgent
from trapy_rl.eval import play_match
from trapy_rl.eval.arena import play_games
from trapy_rl.game import BatchGame, Board
from trapy_rl.game.sampling import random_legal_actions
from trapy_rl.mcts import SearchSettings
from trapy_rl.train.checkpoint import CheckpointError

pytestmark = pytest.mark.usefixtures("one_torch_thread")


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory):
    return write_tiny_checkpoint(tmp_path_factory.mktemp("ckpt") / "net.pt", side=3)


def random_positions(board: Board, n: int, seed: int) -> BatchGame:
    """n unfinished games after a few random moves (some with the swap legal)."""
    rng = np.random.default_rng(seed)
    batch = BatchGame(n, board)
    for move in range(4):
        games = np.flatnonzero((batch.winner == 0) & (np.arange(n) % 4 > move - 1))
        batch.step(random_legal_actions(batch.legal_mask(), rng), games=games)
    return batch


@pytest.mark.parametrize(
    "spec",
    [
        "net:{path}",
        "net:{path},temperature=1",
        "mcts:{path}:8",
        "mcts:{path}:8,c_puct=2,device=cpu",
    ],
)
def test_network_agents_play_legal_moves(checkpoint, spec: str) -> None:
    board = Board(3)
    agent = parse_agent(spec.format(path=checkpoint), board=board, seed=0)
    assert agent.name == spec.format(path=checkpoint)
    assert agent.checkpoint_path == checkpoint
    batch = random_positions(board, 12, seed=1)
    games = np.flatnonzero(batch.winner == 0)
    actions = agent.act(batch, games)
    assert actions.dtype == np.int64 and actions.shape == games.shape
    assert batch.legal_mask()[games, actions].all()
    result = play_match(agent, RandomAgent(seed=2), num_games=6, board=board)
    assert result.games == 6


def test_run_folder_and_latest(tmp_path) -> None:
    board = Board(3)
    folder = tmp_path / "run" / "checkpoints"
    write_tiny_run_checkpoint(tmp_path / "run", 1, side=3)
    agent = parse_agent(f"mcts:{tmp_path / 'run'}:4", board=board)
    assert isinstance(agent, NetworkMCTSAgent) and agent.settings.num_simulations == 4
    assert agent.checkpoint_path == folder / "latest.pt"
    assert checkpoint_file(f"net:{tmp_path / 'run'}") == folder / "latest.pt"
    assert checkpoint_file("uct:10") is None


def test_greedy_policy_plays_the_highest_legal_logit() -> None:
    board = Board(3)
    batch = random_positions(board, 10, seed=3)
    games = np.flatnonzero(batch.winner == 0)
    rng = np.random.default_rng(4)
    raw = rng.normal(size=(batch.num_games, board.num_actions)).astype(np.float32)

    def evaluator(b, g):
        logits = np.where(b.legal_mask()[g], raw[g], -np.inf).astype(np.float32)
        return logits, np.zeros(len(g), dtype=np.float32)

    actions = NetworkPolicyAgent(evaluator).act(batch, games)
    for game, action in zip(games, actions):  # the slow way: one game at a time
        legal = np.flatnonzero(batch.legal_mask()[game])
        assert action == legal[np.argmax(raw[game, legal])]


def test_sampling_follows_the_softmax() -> None:
    board = Board(3)
    batch = BatchGame(1, board)
    logits = np.full(board.num_actions, -np.inf, dtype=np.float32)
    logits[[0, 1, 2]] = np.log([0.5, 0.3, 0.2])

    def evaluator(b, g):
        return np.repeat(logits[None], len(g), axis=0), np.zeros(len(g), dtype=np.float32)

    agent = NetworkPolicyAgent(evaluator, temperature=1.0, seed=5)
    counts = np.bincount(
        np.concatenate([agent.act(batch, np.zeros(1, dtype=np.intp)) for _ in range(3000)]),
        minlength=board.num_actions,
    )
    assert counts[3:].sum() == 0
    np.testing.assert_allclose(counts[:3] / 3000, [0.5, 0.3, 0.2], atol=0.04)
    # Temperature 2 flattens: probabilities proportional to sqrt(p).
    agent = NetworkPolicyAgent(evaluator, temperature=2.0, seed=6)
    counts = np.bincount(
        np.concatenate([agent.act(batch, np.zeros(1, dtype=np.intp)) for _ in range(3000)]),
        minlength=board.num_actions,
    )
    expected = np.sqrt([0.5, 0.3, 0.2]) / np.sqrt([0.5, 0.3, 0.2]).sum()
    np.testing.assert_allclose(counts[:3] / 3000, expected, atol=0.04)


def test_missing_and_corrupt_files_name_the_file(tmp_path) -> None:
    board = Board(3)
    missing = tmp_path / "nothing.pt"
    with pytest.raises(CheckpointError, match=r"nothing\.pt"):
        parse_agent(f"net:{missing}", board=board)
    corrupt = tmp_path / "corrupt.pt"
    corrupt.write_bytes(b"not a checkpoint at all")
    with pytest.raises(CheckpointError, match=r"corrupt\.pt"):
        parse_agent(f"mcts:{corrupt}:10", board=board)
    assert issubclass(CheckpointError, ValueError)


def test_other_side_is_an_error(checkpoint) -> None:
    with pytest.raises(CheckpointError, match=r"side-3 board.*side 4"):
        parse_agent(f"mcts:{checkpoint}:10", board=Board(4))


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("net:{path},c_puct=2", "unknown option 'c_puct'"),
        ("mcts:{path}:10,temperature=1", "unknown option 'temperature'"),
        ("net:{path},temperature=-1", "temperature must be"),
        ("net:{path},temperature=hot", "temperature='hot' is not a valid float"),
        ("mcts:{path}:0", "simulations must be >= 1"),
        ("mcts:{path}:10,bf16=maybe", "bf16='maybe'"),
        ("mcts:{path}:10,device=tpu", "device must be"),
        ("net", "expected 'net:PATH'"),
        ("mcts", "expected 'mcts:PATH:SIMULATIONS'"),
    ],
)
def test_bad_specs_name_the_problem(checkpoint, spec: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_agent(spec.format(path=checkpoint), board=Board(3))


def test_loaded_nets_are_shared_until_the_file_changes(tmp_path) -> None:
    board = Board(3)
    path = write_tiny_checkpoint(tmp_path / "net.pt", side=3, seed=0)
    first = parse_agent(f"net:{path},device=cpu", board=board)
    second = parse_agent(f"mcts:{path}:2,device=cpu", board=board)
    assert first.evaluator is second.evaluator
    write_tiny_checkpoint(path, side=3, seed=1)
    third = parse_agent(f"net:{path},device=cpu", board=board)
    assert third.evaluator is not first.evaluator
    weights = [next(a.evaluator.net.parameters()) for a in (first, third)]
    assert not torch.equal(*weights)


def test_noise_makes_games_from_one_position_vary_and_a_seed_repeats_them(checkpoint) -> None:
    """``noise=true``: self-play's root noise, so many games from one opening differ; the
    same seed plays the same games, and without noise the agent plays one game."""
    board = Board(3)

    def games(spec: str, seed: int) -> set[tuple[int, ...]]:
        batch = BatchGame(24, board)
        batch.step(np.full(24, 5))
        agent = parse_agent(spec, board=board, seed=seed)
        play_games(batch, agent, agent, a_is_blue=np.zeros(24, dtype=bool))
        return {tuple(row) for row in batch.history}

    for search in ("puct", "gumbel"):
        noisy = f"mcts:{checkpoint}:16,search={search},noise=true"
        assert parse_agent(noisy, board=board).noise
        assert len(games(noisy, seed=0)) > 4
        assert games(noisy, seed=0) == games(noisy, seed=0)
    assert len(games(f"mcts:{checkpoint}:16,search=gumbel", seed=0)) == 1
    with pytest.raises(ValueError, match="noise='maybe' is not a valid bool"):
        parse_agent(f"mcts:{checkpoint}:16,noise=maybe", board=board)


def test_temperature_moves_draw_the_first_moves_of_a_game(checkpoint) -> None:
    """``temperature_moves=K``: moves before the game's K-th are drawn from the visits, as
    in self-play; later ones are the most visited. With priors that leave no ties, a game
    from one position then varies only in its first K moves."""
    board = Board(4)

    def evaluator(batch: BatchGame, games: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        legal = batch.legal_mask()[games]
        ranks = np.arange(legal.shape[1], dtype=np.float32)
        logits = np.where(legal, -1.0 * ranks, -np.inf).astype(np.float32)
        return logits, np.zeros(len(games), dtype=np.float32)

    def histories(temperature_moves: int, seed: int) -> np.ndarray:
        batch = BatchGame(48, board)
        batch.step(np.full(48, 5))
        agent = SearchAgent(
            evaluator,
            settings=SearchSettings(num_simulations=16),
            seed=seed,
            name="prior",
            temperature_moves=temperature_moves,
        )
        play_games(batch, agent, agent, a_is_blue=np.zeros(48, dtype=bool))
        return batch.history

    assert len({tuple(row) for row in histories(0, seed=0)}) == 1
    drawn = histories(3, seed=0)
    # Moves 1 and 2 (after the stone on 5) are drawn; from move 3 on the game is a function
    # of its position, so games that agree on their first three moves agree on all.
    assert len({tuple(row[:3]) for row in drawn}) > 4
    by_opening: dict[tuple[int, ...], tuple[int, ...]] = {}
    for row in drawn:
        assert by_opening.setdefault(tuple(row[:3]), tuple(row)) == tuple(row)
    np.testing.assert_array_equal(drawn, histories(3, seed=0))

    agent = parse_agent("uct:8,temperature_moves=2,noise=true", board=board)
    assert (agent.temperature_moves, agent.noise) == (2, True)
    assert (
        parse_agent(f"mcts:{checkpoint}:4,temperature_moves=12", board=Board(3)).temperature_moves
        == 12
    )
    with pytest.raises(ValueError, match="temperature_moves must be >= 0, got -1"):
        parse_agent(f"mcts:{checkpoint}:16,temperature_moves=-1", board=Board(3))


def test_a_checkpoint_path_of_any_spelling_travels_in_a_spec(tmp_path) -> None:
    from trapy_rl.agents.network import checkpoint_spec

    path = write_tiny_checkpoint(tmp_path / "run, 'one':2" / "net.pt", side=3)
    spec = checkpoint_spec(path, num_simulations=4, device="cpu")
    agent = parse_agent(spec, board=Board(3), seed=0)
    assert checkpoint_file(spec) == path
    assert play_match(agent, RandomAgent(seed=1), num_games=2, board=Board(3)).games == 2
