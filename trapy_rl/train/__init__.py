"""AlphaZero training: self-play, the replay window, the learner, checkpoints, the loop.

from trapy_rl.train import train, load_network
result = train(cfg)                 # cfg: trapy_rl.config.TrainConfig or a Hydra config
net, info = load_network(result.checkpoint)
"""

from trapy_rl.train.checkpoint import CheckpointError, load_checkpoint, load_network
from trapy_rl.train.learner import Learner
from trapy_rl.train.loop import TrainResult, train
from trapy_rl.train.replay import ReplayBuffer, Samples
from trapy_rl.train.selfplay import GameRecord, SelfPlay, SelfPlayResult

__all__ = [
    "CheckpointError",
    "GameRecord",
    "Learner",
    "ReplayBuffer",
    "Samples",
    "SelfPlay",
    "SelfPlayResult",
    "TrainResult",
    "load_checkpoint",
    "load_network",
    "train",
]
