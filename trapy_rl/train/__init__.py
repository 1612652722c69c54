"""AlphaZero training: self-play, the replay window, the learner, checkpoints, the loop.

from trapy_rl.train import TrainConfig, load_network, train
cfg = TrainConfig().replace({"side": 10, "mcts.num_simulations": 64})   # frozen settings
result = train(cfg)
net, info = load_network(result.checkpoint)
"""

from trapy_rl.train.checkpoint import CheckpointError, load_checkpoint, load_network
from trapy_rl.train.learner import Learner
from trapy_rl.train.loop import TrainResult, train
from trapy_rl.train.replay import ReplayBuffer, Samples
from trapy_rl.train.selfplay import GameRecord, SelfPlay, SelfPlayResult
from trapy_rl.train.settings import TrainConfig

__all__ = [
    "CheckpointError",
    "GameRecord",
    "Learner",
    "ReplayBuffer",
    "Samples",
    "SelfPlay",
    "SelfPlayResult",
    "TrainConfig",
    "TrainResult",
    "load_checkpoint",
    "load_network",
    "train",
]
