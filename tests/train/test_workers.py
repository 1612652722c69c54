"""Self-play in worker processes against the obviously-correct reference: the same players in
this process."""

from __future__ import annotations

import dataclasses

import numpy as np
import torch
from tiny import TINY_NET

from trapy_rl.game.board import Board
from trapy_rl.mcts.settings import SearchSettings
from trapy_rl.nn import NetEvaluator, PolicyValueNet
from trapy_rl.train.selfplay import SelfPlay, SelfPlayResult
from trapy_rl.train.settings import SelfPlaySettings
from trapy_rl.train.workers import ProcessSelfPlay

SEARCH = SearchSettings(num_simulations=8)
SETTINGS = SelfPlaySettings(
    num_games=7, num_workers=2, resign_min_moves=0, resign_false_rate=0.0, temperature_moves=4
)


def sample_arrays(result: SelfPlayResult) -> dict[str, np.ndarray]:
    samples = result.samples
    return {f.name: np.asarray(getattr(samples, f.name)) for f in dataclasses.fields(samples)}


def test_worker_processes_play_the_games_of_in_process_players_with_their_seeds():
    """Worker i plays ``[*seed, i]``'s share of the games: its samples and records equal, one for
    one, those of an in-process `SelfPlay` with that seed and share, across changes of weights
    (sent to the workers only when they changed) and of the resignation threshold."""
    board = Board(4)
    torch.manual_seed(0)
    net = PolicyValueNet(TINY_NET)
    workers = ProcessSelfPlay(net, board, search=SEARCH, settings=SETTINGS, seed=[3])
    shares = (4, 3)  # 7 games: the first worker takes the odd one
    local_nets = [PolicyValueNet(TINY_NET) for _ in shares]
    players = [
        SelfPlay(
            NetEvaluator(local_net),
            board,
            search=SEARCH,
            settings=dataclasses.replace(SETTINGS, num_games=share, num_workers=0),
            seed=[3, i],
        )
        for i, (share, local_net) in enumerate(zip(shares, local_nets))
    ]
    try:
        games = 0
        for call in range(4):
            for local_net in local_nets:
                local_net.load_state_dict(net.state_dict())
            ours = workers.play(9, seed=[call])
            theirs = [player.play(9, seed=[call, i]) for i, player in enumerate(players)]
            parts = [sample_arrays(t) for t in theirs]
            for name, values in sample_arrays(ours).items():
                expected = np.concatenate([part[name] for part in parts])
                assert np.array_equal(values, expected), (call, name)
            assert ours.records == [r for t in theirs for r in t.records]
            games += len(ours.records)
            with torch.no_grad():
                for parameter in net.parameters():
                    parameter.add_(0.3 * torch.randn_like(parameter))
            workers.weights_changed()
            if call == 1:  # resign from now on whenever behind at all
                workers.set_resign_threshold(0.0)
                for player in players:
                    player.set_resign_threshold(0.0)
        assert games > 4, "some games must finish for the records to be compared"
    finally:
        workers.close()
