import dataclasses
import random
import shutil

import numpy as np
import pytest
import torch
from tiny import TINY_NET

from trapy_rl.nn import PolicyValueNet
from trapy_rl.train.checkpoint import (
    CheckpointError,
    check_compatible,
    find_checkpoint,
    get_rng_state,
    load_checkpoint,
    load_network,
    save_checkpoint,
    set_rng_state,
    write_run_checkpoint,
)


def net_payload(side: int = 4, **net_changes) -> tuple[PolicyValueNet, dict]:
    torch.manual_seed(0)
    net = PolicyValueNet(dataclasses.replace(TINY_NET, **net_changes))
    optimizer = torch.optim.AdamW(net.parameters(), lr=1e-3)
    loss = sum(p.sum() for p in net.parameters())
    loss.backward()
    optimizer.step()
    payload = {
        "side": side,
        "model": {"config": net.config.to_dict(), "state": net.state_dict()},
        "learner": {"optimizer": optimizer.state_dict(), "step": 1},
        "counters": {"iteration": 7, "positions": 10, "games": 1, "samples_owed": 0.5},
        "rng": get_rng_state(),
        "replay": None,
        "extra": {"array": np.arange(5, dtype=np.int16), "scalar": np.float32(2.5)},
        "config": {"side": side, "nested": {"a": [1, 2]}},
    }
    return net, payload


def test_round_trip_of_weights_optimizer_counters_and_arrays(tmp_path):
    net, payload = net_payload()
    path = save_checkpoint(tmp_path / "a.pt", payload)
    loaded = load_checkpoint(path)
    for key, value in net.state_dict().items():
        assert torch.equal(loaded["model"]["state"][key], value)
    saved_opt = payload["learner"]["optimizer"]["state"]
    for index, state in loaded["learner"]["optimizer"]["state"].items():
        assert torch.equal(state["exp_avg"], saved_opt[index]["exp_avg"])
    assert loaded["counters"] == payload["counters"]
    np.testing.assert_array_equal(np.asarray(loaded["extra"]["array"]), np.arange(5))
    assert loaded["extra"]["scalar"] == 2.5
    assert loaded["config"] == payload["config"]
    assert not list(tmp_path.glob(".*tmp"))  # no temporary file left behind


def draws() -> tuple[float, float, float]:
    """One number from each global generator."""
    return random.random(), np.random.random(), torch.rand(1).item()  # noqa: NPY002


def test_rng_states_round_trip():
    random.seed(1)
    np.random.seed(2)  # noqa: NPY002 (the global state is what is saved)
    torch.manual_seed(3)
    state = get_rng_state()
    expected = draws()
    random.seed(9)
    np.random.seed(9)  # noqa: NPY002 (the global state is what is saved)
    torch.manual_seed(9)
    set_rng_state(state)
    assert draws() == expected


def test_rng_states_survive_a_file(tmp_path):
    np.random.seed(5)  # noqa: NPY002 (the global state is what is saved)
    torch.manual_seed(6)
    random.seed(7)
    save_checkpoint(tmp_path / "r.pt", {"side": 4, "model": {}, "rng": get_rng_state()})
    expected = draws()
    set_rng_state(load_checkpoint(tmp_path / "r.pt")["rng"])
    assert draws() == expected


def test_load_network(tmp_path):
    net, payload = net_payload()
    write_run_checkpoint(tmp_path / "checkpoints", 7, payload)
    loaded, info = load_network(tmp_path)  # a run folder finds checkpoints/latest.pt
    assert (
        info["side"] == 4
        and info["iteration"] == 7
        and info["model_config"] == net.config.to_dict()
    )
    planes = torch.rand(2, 9, 4, 7)
    net.eval()
    with torch.no_grad():
        for a, b in zip(net(planes), loaded(planes)):
            assert torch.equal(a, b)


def test_numbered_checkpoints_latest_and_keep(tmp_path):
    _, payload = net_payload()
    folder = tmp_path / "checkpoints"
    for iteration in range(1, 6):
        payload["counters"]["iteration"] = iteration
        write_run_checkpoint(folder, iteration, payload, keep=2)
    assert sorted(p.name for p in folder.glob("*.pt")) == [
        "ckpt_000004.pt",
        "ckpt_000005.pt",
        "latest.pt",
    ]
    assert load_checkpoint(folder / "latest.pt")["counters"]["iteration"] == 5
    assert find_checkpoint(tmp_path) == folder / "latest.pt"


def test_missing_file_or_folder(tmp_path):
    with pytest.raises(CheckpointError, match="no such checkpoint"):
        load_checkpoint(tmp_path / "nothing.pt")
    with pytest.raises(CheckpointError, match="without a checkpoint"):
        load_checkpoint(tmp_path)


def test_truncated_file_names_the_file(tmp_path):
    _, payload = net_payload()
    path = save_checkpoint(tmp_path / "t.pt", payload)
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(CheckpointError, match=r"t\.pt: not a readable checkpoint"):
        load_checkpoint(path)


def test_corrupt_file_names_the_file(tmp_path):
    path = tmp_path / "c.pt"
    path.write_bytes(b"this is not a checkpoint at all" * 10)
    with pytest.raises(CheckpointError, match=r"c\.pt: not a readable checkpoint"):
        load_checkpoint(path)


def test_a_file_that_would_run_code_is_refused(tmp_path):
    path = tmp_path / "evil.pt"
    torch.save({"format": "trapy_rl.checkpoint", "thing": shutil.rmtree}, path)
    with pytest.raises(CheckpointError, match=r"evil\.pt"):
        load_checkpoint(path)


def test_foreign_file_is_refused(tmp_path):
    path = tmp_path / "f.pt"
    torch.save({"weights": torch.zeros(3)}, path)
    with pytest.raises(CheckpointError, match="not a trapy_rl checkpoint"):
        load_checkpoint(path)


def test_mismatched_side_and_net_shape(tmp_path):
    net, payload = net_payload()
    loaded = load_checkpoint(save_checkpoint(tmp_path / "m.pt", payload))
    check_compatible(loaded, side=4, model=net.config)
    with pytest.raises(CheckpointError, match=r"m\.pt: written for the side-4 board.*side 5"):
        check_compatible(loaded, side=5, model=net.config)
    with pytest.raises(CheckpointError, match=r"m\.pt: a net of another shape.*channels: 16 vs 32"):
        check_compatible(loaded, side=4, model=dataclasses.replace(net.config, channels=32))


def test_weights_that_do_not_fit_the_net(tmp_path):
    net, payload = net_payload()
    payload["model"]["config"] = {**net.config.to_dict(), "channels": 32}
    save_checkpoint(tmp_path / "w.pt", payload)
    with pytest.raises(CheckpointError, match=r"w\.pt: weights do not fit the net"):
        load_network(tmp_path / "w.pt")


def test_a_net_only_export_plays_like_the_original_and_is_small(tmp_path):
    from trapy_rl.train.checkpoint import export_network

    net, payload = net_payload()
    payload["replay"] = {"planes": np.zeros((500, 9, 4, 7), np.float32)}  # what resuming needs
    source = save_checkpoint(tmp_path / "run.pt", payload)
    exported = export_network(source, tmp_path / "net.pt")
    assert exported.stat().st_size < source.stat().st_size / 3
    loaded, info = load_network(exported)
    for key, value in net.state_dict().items():
        assert torch.equal(loaded.state_dict()[key], value), key
    assert info["iteration"] == 7 and info["step"] == 1 and info["side"] == 4
    kept = load_checkpoint(exported)
    assert "replay" not in kept and "rng" not in kept and kept["source"] == "run.pt"
