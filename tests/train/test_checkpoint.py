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
    _, payload = net_payload()
    save_checkpoint(tmp_path / "r.pt", {**payload, "rng": get_rng_state()})
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
    with pytest.raises(CheckpointError, match=r"t\.pt: damaged or not a checkpoint"):
        load_checkpoint(path)


def test_corrupt_file_names_the_file(tmp_path):
    path = tmp_path / "c.pt"
    path.write_bytes(b"this is not a checkpoint at all" * 10)
    with pytest.raises(CheckpointError, match=r"c\.pt: damaged or not a checkpoint"):
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
    with pytest.raises(CheckpointError, match=r"w\.pt: field model.state\[.*\] has shape"):
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


def test_a_portable_export_names_the_runs_folders_without_the_trainers_paths(tmp_path):
    from trapy_rl.train.checkpoint import export_network

    _, payload = net_payload()
    run = "/home/someone/runs/side10-s0"
    payload["config"] = {**payload["config"], "run_dir": run, "resume": run, "note": "/kept/"}
    source = save_checkpoint(tmp_path / "run.pt", payload)
    plain = load_checkpoint(export_network(source, tmp_path / "plain.pt"))
    assert plain["config"] == payload["config"]
    portable = load_checkpoint(export_network(source, tmp_path / "net.pt", portable=True))
    names = {"run_dir": "side10-s0", "resume": "side10-s0"}
    assert portable["config"] == {**payload["config"], **names}


def test_the_averaged_net_holds_the_mean_weights_of_its_sources(tmp_path):
    from trapy_rl.train.checkpoint import average_networks

    net, payload = net_payload()
    first = save_checkpoint(tmp_path / "a.pt", payload)
    state = {key: value.clone() for key, value in net.state_dict().items()}
    for value in state.values():
        if value.is_floating_point():
            value.add_(torch.linspace(0.0, 1.0, value.numel()).reshape(value.shape))
        else:
            value.add_(3)  # batches seen: taken from the last source, not averaged
    payload["model"]["state"] = state
    payload["counters"] = {**payload["counters"], "iteration": 9}
    second = save_checkpoint(tmp_path / "b.pt", payload)

    loaded, info = load_network(average_networks([first, second], tmp_path / "mean.pt"))
    for key, value in loaded.state_dict().items():
        original = net.state_dict()[key]
        if value.is_floating_point():
            assert torch.allclose(value, (original + state[key]) / 2, atol=1e-6), key
        else:
            assert torch.equal(value, state[key]), key
    assert info["iteration"] == 9  # the last source's counters
    assert load_checkpoint(tmp_path / "mean.pt")["source"] == "mean of a.pt, b.pt"
    # One net alone averages to itself.
    alone, _ = load_network(average_networks([first], tmp_path / "one.pt"))
    assert all(torch.equal(v, net.state_dict()[k]) for k, v in alone.state_dict().items())


def test_nets_of_different_shapes_are_not_averaged(tmp_path):
    from trapy_rl.train.checkpoint import average_networks

    a = save_checkpoint(tmp_path / "a.pt", net_payload()[1])
    b = save_checkpoint(tmp_path / "b.pt", net_payload(channels=TINY_NET.channels + 2)[1])
    with pytest.raises(ValueError, match=r"a\.pt is not the same net as b\.pt"):
        average_networks([a, b], tmp_path / "mean.pt")
    with pytest.raises(ValueError, match="no nets to average"):
        average_networks([], tmp_path / "mean.pt")
    assert not (tmp_path / "mean.pt").exists()


def test_every_single_flipped_byte_is_refused_naming_the_file(tmp_path):
    """A checksum covers the whole file: a flip in the data, the zip's own records, its padding
    or the trailer itself is refused, never loaded."""
    _, payload = net_payload()
    good = save_checkpoint(tmp_path / "good.pt", payload).read_bytes()
    rng = np.random.default_rng(0)
    # every byte of the trailer and the zip's end records, and a sample of the rest
    positions = set(range(len(good) - 200, len(good)))
    positions |= set(rng.choice(len(good) - 200, size=150, replace=False).tolist())
    path = tmp_path / "flipped.pt"
    for position in sorted(positions):
        damaged = bytearray(good)
        damaged[position] ^= 1 << int(rng.integers(8))
        path.write_bytes(bytes(damaged))
        with pytest.raises(CheckpointError, match=r"flipped\.pt: damaged"):
            load_checkpoint(path)


def test_torch_still_reads_a_checkpoint_with_its_trailer(tmp_path):
    _, payload = net_payload()
    path = save_checkpoint(tmp_path / "t.pt", payload)
    plain = torch.load(path, weights_only=True)
    assert plain["counters"]["iteration"] == 7


def test_a_checkpoint_from_before_checksums_loads_and_its_crcs_are_checked(tmp_path):
    _, payload = net_payload()
    from trapy_rl.train.checkpoint import to_storable

    path = tmp_path / "old.pt"
    torch.save({"format": "trapy_rl.checkpoint", "version": 1, **to_storable(payload)}, path)
    assert load_checkpoint(path)["counters"]["iteration"] == 7
    data = bytearray(path.read_bytes())
    start = data.index(b"data/0") + 200  # inside the first tensor's bytes
    data[start] ^= 0xFF
    path.write_bytes(bytes(data))
    with pytest.raises(CheckpointError, match=r"old\.pt: damaged: member .* CRC-32"):
        load_checkpoint(path)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda p: p.update(side="10"), r"field side must be an integer from 2 to 40, got '10'"),
        (lambda p: p.update(side=400), r"field side must be an integer from 2 to 40, got 400"),
        (lambda p: p["model"].update(config=[1, 2]), r"field model.config must be a mapping"),
        (
            lambda p: p["model"]["config"].update(channels=120_000, blocks=1_000),
            r"field model.config: model.channels must be at most 1024",
        ),
        (lambda p: p["model"]["state"].update(w="x"), r"field model.state\['w'\] must be a"),
        (
            lambda p: p["counters"].update(iteration="seven"),
            r"field counters.iteration must be a number >= 0, got 'seven'",
        ),
        (lambda p: p["counters"].update(games=-3), r"field counters.games must be a number >= 0"),
        (lambda p: p["learner"].update(step=1.5), r"field learner.step must be an integer >= 0"),
        (lambda p: p.update(clock={"seconds": -1.0}), r"field clock.seconds must be a number"),
        (lambda p: p.update(clock={"cpu_seconds": "x"}), r"field clock.cpu_seconds must be a"),
        (lambda p: p.update(rng=[1]), r"field rng must be a mapping"),
        (lambda p: p.pop("model"), r"checkpoint lacks the field model"),
    ],
)
def test_fields_of_the_wrong_type_or_range_are_named(tmp_path, change, message):
    _, payload = net_payload()
    change(payload)
    path = save_checkpoint(tmp_path / "bad.pt", payload)
    with pytest.raises(CheckpointError, match=r"bad\.pt: " + message):
        load_checkpoint(path)


def test_a_run_folder_without_latest_uses_its_newest_numbered_checkpoint(tmp_path):
    from trapy_rl.train.checkpoint import load_newest_valid

    _, payload = net_payload()
    folder = tmp_path / "checkpoints"
    for iteration in (1, 2, 3):
        payload["counters"]["iteration"] = iteration
        write_run_checkpoint(folder, iteration, payload)
    (folder / "latest.pt").unlink()
    assert find_checkpoint(tmp_path) == folder / "ckpt_000003.pt"
    # the newest is damaged: loading the folder for resuming falls back to the one before
    (folder / "ckpt_000003.pt").write_bytes(b"garbage")
    assert load_newest_valid(tmp_path)["counters"]["iteration"] == 2
    for path in folder.glob("*.pt"):
        path.write_bytes(b"garbage")
    with pytest.raises(CheckpointError, match="no checkpoint loads"):
        load_newest_valid(tmp_path)


def test_temporary_files_of_interrupted_saves_are_removed(tmp_path):
    from trapy_rl.train.checkpoint import remove_temporary_files

    folder = tmp_path / "checkpoints"
    folder.mkdir()
    (folder / ".ckpt_000004.pt.abc123.tmp").write_bytes(b"half")
    (folder / ".latest.pt.99.tmp").write_bytes(b"half")
    (folder / "ckpt_000003.pt").write_bytes(b"kept")
    removed = remove_temporary_files(folder)
    assert [p.name for p in removed] == [".ckpt_000004.pt.abc123.tmp", ".latest.pt.99.tmp"]
    assert [p.name for p in folder.iterdir()] == ["ckpt_000003.pt"]
