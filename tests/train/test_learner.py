import copy
import dataclasses

import numpy as np
import pytest
import torch
from tiny import TINY_NET

from trapy_rl.game import Board, encode_planes, mirror_planes, mirror_policy
from trapy_rl.nn import PolicyValueNet
from trapy_rl.train.learner import Learner, legal_mask_from_planes, value_targets
from trapy_rl.train.replay import Samples
from trapy_rl.train.settings import OptimSettings


@pytest.mark.parametrize("side", [3, 5, 10])
def test_legal_mask_from_planes_matches_the_engine(side, random_positions):
    board = Board(side)
    batch, _ = random_positions(board, 10, seed=side)
    planes = encode_planes(batch)
    legal = legal_mask_from_planes(torch.from_numpy(planes), board).numpy()
    np.testing.assert_array_equal(legal, batch.legal_mask())
    mirrored = legal_mask_from_planes(torch.from_numpy(mirror_planes(planes, board)), board)
    np.testing.assert_array_equal(mirrored.numpy(), mirror_policy(batch.legal_mask(), board))


def test_losses_match_a_slow_reference(make_samples):
    board = Board(4)
    torch.manual_seed(0)
    net = PolicyValueNet(TINY_NET)
    samples = make_samples(board, 6, seed=1)
    learner = Learner(net, board, settings=OptimSettings(policy_weight=0.7, value_weight=1.3))
    net.eval()
    with torch.no_grad():
        terms = learner.losses(samples)
        logits, values = net(torch.from_numpy(samples.planes))
    policy_terms, entropies = [], []
    for i in range(len(samples)):
        mask = legal_mask_from_planes(torch.from_numpy(samples.planes[i : i + 1]), board)[0]
        row = logits[i][mask].double()
        log_p = row - torch.logsumexp(row, 0)
        policy_terms.append(-(torch.from_numpy(samples.policies[i])[mask].double() * log_p).sum())
        entropies.append(-(log_p.exp() * log_p).sum())
    policy = torch.stack(policy_terms).mean().item()
    value = ((values.double() - torch.from_numpy(samples.values).double()) ** 2).mean().item()
    assert terms["policy"].item() == pytest.approx(policy, rel=1e-5)
    assert terms["value"].item() == pytest.approx(value, rel=1e-5)
    assert terms["total"].item() == pytest.approx(0.7 * policy + 1.3 * value, rel=1e-5)
    assert terms["entropy"].item() == pytest.approx(torch.stack(entropies).mean().item(), rel=1e-5)


@pytest.mark.parametrize("optimizer", ["adam", "sgd"])
def test_training_fits_a_fixed_batch(optimizer, make_samples):
    board = Board(4)
    torch.manual_seed(0)
    net = PolicyValueNet(TINY_NET)
    samples = make_samples(board, 32, seed=2)
    # SGD at 0.05 fits with two torch threads and diverges with one (the sums' order differs):
    # 0.02 fits with either, so the test does not depend on what ran before it.
    learner = Learner(
        net, board, settings=OptimSettings(name=optimizer, lr=0.01 if optimizer == "adam" else 0.02)
    )
    first = learner.train_step(samples)
    for _ in range(60):
        last = learner.train_step(samples)
    assert last["total"] < 0.7 * first["total"]
    assert learner.step == 61 and last["lr"] == learner.settings.lr
    assert set(first) == {"policy", "value", "total", "entropy", "lr"}


def test_learning_rate_schedules():
    net = PolicyValueNet(TINY_NET)
    cosine = Learner(
        net,
        Board(4),
        settings=OptimSettings(lr=0.1, lr_schedule="cosine", warmup_steps=10),
        total_steps=110,
    )
    assert cosine.learning_rate(0) == pytest.approx(0.01)
    assert cosine.learning_rate(9) == pytest.approx(0.1)
    assert cosine.learning_rate(10) == pytest.approx(0.1)
    assert cosine.learning_rate(60) == pytest.approx(0.05)
    assert cosine.learning_rate(110) == pytest.approx(0.0)
    assert cosine.learning_rate(500) == pytest.approx(0.0)
    constant = Learner(net, Board(4), settings=OptimSettings(lr=0.1, lr_schedule="constant"))
    assert constant.learning_rate(1000) == 0.1
    # A run bounded by its clock: the cosine follows the share of the run behind it.
    cosine.progress = 0.5
    assert cosine.learning_rate(60) == cosine.learning_rate(500) == pytest.approx(0.05)
    assert cosine.learning_rate(0) == pytest.approx(0.01)  # the warm-up still counts steps
    cosine.progress = 1.5
    assert cosine.learning_rate(60) == pytest.approx(0.0)
    constant.progress = 0.5
    assert constant.learning_rate(1000) == 0.1


def test_optimizer_state_round_trip(make_samples):
    board = Board(4)
    samples = make_samples(board, 16, seed=3)
    torch.manual_seed(0)
    a = Learner(PolicyValueNet(TINY_NET), board)
    a.train_step(samples)
    torch.manual_seed(0)
    b = Learner(PolicyValueNet(TINY_NET), board)
    b.net.load_state_dict(a.net.state_dict())
    b.load_state_dict(copy.deepcopy(a.state_dict()))  # as if read from a file
    a.train_step(samples)
    b.train_step(samples)
    for x, y in zip(a.net.parameters(), b.net.parameters()):
        assert torch.equal(x, y)


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match=r"name must be one of"):
        OptimSettings(name="rmsprop")
    with pytest.raises(ValueError, match="lr_schedule"):
        OptimSettings(lr_schedule="step")
    for share in (-0.1, 1.5, float("nan")):
        with pytest.raises(ValueError, match=r"^optim\.value_q_share must be in \[0, 1\], got"):
            OptimSettings(value_q_share=share)
    assert isinstance(Samples.empty(Board(4)).planes, np.ndarray)


def test_positions_without_a_policy_target_train_the_value_only(make_samples):
    """Zero policy rows (cheap searches): the policy loss is the mean over the other rows, and
    the value loss still counts every row."""
    board = Board(4)
    torch.manual_seed(0)
    net = PolicyValueNet(TINY_NET).eval()
    samples = make_samples(board, 8, seed=3)
    learner = Learner(net, board)
    cheap = Samples(samples.planes, samples.policies.copy(), samples.values)
    cheap.policies[::2] = 0.0
    targeted = Samples(samples.planes[1::2], samples.policies[1::2], samples.values[1::2])
    with torch.no_grad():
        mixed, only = learner.losses(cheap), learner.losses(targeted)
        full = learner.losses(samples)
    assert mixed["policy"].item() == pytest.approx(only["policy"].item(), rel=1e-6)
    assert mixed["value"].item() == pytest.approx(full["value"].item(), rel=1e-6)
    none = Samples(samples.planes, np.zeros_like(samples.policies), samples.values)
    with torch.no_grad():
        assert learner.losses(none)["policy"].item() == 0.0


def test_the_ownership_loss_is_the_mean_squared_error_over_played_out_positions(make_samples):
    board = Board(4)
    torch.manual_seed(0)
    net = PolicyValueNet(dataclasses.replace(TINY_NET, ownership_head=True)).eval()
    samples = make_samples(board, 6, seed=4)
    rng = np.random.default_rng(0)
    samples.ownership = rng.integers(-1, 2, samples.ownership.shape).astype(np.int8)
    samples.owned = np.array([True, False, True, True, False, True])
    learner = Learner(net, board, settings=OptimSettings(ownership_weight=1.5))
    with torch.no_grad():
        terms = learner.losses(samples)
        _, _, predicted = net.forward_with_ownership(torch.from_numpy(samples.planes))
    rows = np.flatnonzero(samples.owned)
    expected = ((predicted.numpy()[rows] - samples.ownership[rows]) ** 2).mean()
    assert terms["ownership"].item() == pytest.approx(float(expected), rel=1e-5)
    rest = 1.0 * terms["policy"] + 1.0 * terms["value"]
    assert terms["total"].item() == pytest.approx((rest + 1.5 * terms["ownership"]).item())


@pytest.mark.parametrize("share", [0.0, 0.25, 1.0])
def test_the_value_target_mixes_the_outcome_and_the_searchs_root_value(share, make_samples):
    """The value loss is the squared error to (1 - s) z + s q, computed here position by
    position; s = 0 is the outcome alone, s = 1 the root value alone."""
    board = Board(4)
    torch.manual_seed(0)
    net = PolicyValueNet(TINY_NET).eval()
    samples = make_samples(board, 6, seed=5)
    samples.values[:] = [1, -1, 1, 1, -1, -1]
    samples.root_values = np.array([0.5, -0.25, -0.75, 1.0, 0.125, -1.0], np.float32)
    learner = Learner(net, board, settings=OptimSettings(value_q_share=share))
    with torch.no_grad():
        terms = learner.losses(samples)
        _, values = net(torch.from_numpy(samples.planes))
    by_hand = {  # (1 - s) z + s q of each position, written out
        0.0: [1, -1, 1, 1, -1, -1],
        0.25: [0.875, -0.8125, 0.5625, 1.0, -0.71875, -1.0],
        1.0: [0.5, -0.25, -0.75, 1.0, 0.125, -1.0],
    }[share]
    np.testing.assert_allclose(value_targets(samples, share), by_hand, rtol=0, atol=1e-7)
    expected = np.mean((values.double().numpy() - np.array(by_hand)) ** 2)
    assert terms["value"].item() == pytest.approx(expected, rel=1e-5)
