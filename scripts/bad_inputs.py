"""Run bad settings (and, if given, bad checkpoint files) through every command; count the ones
refused in exactly one line.

    python scripts/bad_inputs.py                       # the settings below, every command
    python scripts/bad_inputs.py --checkpoints A.pt B.pt   # and these files through each consumer
    python scripts/bad_inputs.py --only trapy-eval     # one command's cases
    python scripts/bad_inputs.py --files-only --checkpoints A.pt   # the files alone

Each case runs as its own process with its address space capped (``--memory-gb``, 2 by
default), its stdin empty, a time limit (``--timeout``), in a folder of its own; a case is
*refused in one line* when the command exits non-zero within the limit, writes exactly one
line to stderr, that line the command's own (``<prog>: ...``), with no traceback, and has done
no work first: nothing on stdout (no plan line, no bar) and no run folder made. The games-file
cases of ``trapy-web`` find their files (empty, truncated, damaged, read-only: `GAMES_FILES`)
made in that folder. The table gives each case's exit code, its peak resident memory (MiB)
and its line; the last line, the count.
"""

from __future__ import annotations

import argparse
import ctypes
import os
import resource
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# (command, arguments) of each bad setting: typos, wrong types, unknown options of a group,
# settings that contradict each other, sizes past their caps, devices that do not exist.
SETTINGS: list[tuple[str, list[str]]] = [
    # trapy-train: typos
    ("trapy-train", ["iteratons=3"]),
    ("trapy-train", ["mcts.num_simulatons=3"]),
    ("trapy-train", ["selfplay.num_game=3"]),
    ("trapy-train", ["optim.learning_rate=0.1"]),
    ("trapy-train", ["+mcts.typo=3"]),
    ("trapy-train", ["+side=3"]),
    # wrong types and unreadable values
    ("trapy-train", ["side=abc"]),
    ("trapy-train", ["selfplay.num_games=1.5"]),
    ("trapy-train", ["bf16=maybe"]),
    ("trapy-train", ["eval.opponents=3"]),
    ("trapy-train", ["replay=foo"]),
    ("trapy-train", ["curriculum.sides=abc"]),
    ("trapy-train", ["side=["]),
    ("trapy-train", ["seed=1,2"]),
    ("trapy-train", ["side=${oops}"]),
    ("trapy-train", ["seed=-1"]),
    ("trapy-train", ["side=41"]),
    # unknown options of a group
    ("trapy-train", ["model=huge"]),
    ("trapy-train", ["curriculum=bogus"]),
    ("trapy-train", ["mcts=enormous"]),
    ("trapy-train", ["experiment=nope"]),
    ("trapy-train", ["optim=lamb"]),
    ("trapy-train", ["selfplay=gpu"]),
    ("trapy-train", ["logger=wandb"]),
    ("trapy-train", ["debug=nope"]),
    # contradictions
    ("trapy-train", ["replay.capacity=8", "replay.min_size=4"]),
    ("trapy-train", ["optim.batch_size=50000"]),
    ("trapy-train", ["replay.capacity=8"]),
    ("trapy-train", ["onnxruntime=true", "compile=true"]),
    ("trapy-train", ["optim.ownership_weight=1"]),
    ("trapy-train", ["selfplay.num_actors=2", "selfplay.num_workers=2"]),
    ("trapy-train", ["ray.address=auto"]),
    ("trapy-train", ["eval.pool=default"]),
    ("trapy-train", ["selfplay.resign_playout_fraction=0"]),
    ("trapy-train", ["curriculum.sides=[5]", "curriculum.until_minutes=[]"]),
    ("trapy-train", ["mcts=gumbel", "selfplay.forced_playouts=2"]),
    ("trapy-train", ["replay.growth=0.4", "replay.max_capacity=100"]),
    # the ablation's settings out of range
    ("trapy-train", ["replay.growth=2"]),
    ("trapy-train", ["optim.value_q_share=1.5"]),
    ("trapy-train", ["selfplay.forced_playouts=-1"]),
    # sizes past their caps, and runs past the memory limit
    ("trapy-train", ["model.value_hidden=1000000000"]),
    ("trapy-train", ["model.policy_channels=100000000"]),
    ("trapy-train", ["model.channels=1024", "model.blocks=64"]),
    ("trapy-train", ["replay.capacity=1000000000"]),
    ("trapy-train", ["replay.capacity=10000000"]),
    ("trapy-train", ["selfplay.num_games=10000000"]),
    ("trapy-train", ["optim.batch_size=100000000"]),
    ("trapy-train", ["mcts.num_simulations=1000000000"]),
    ("trapy-train", ["mcts.num_simulations=100000"]),
    ("trapy-train", ["side=40"]),
    ("trapy-train", ["memory_gb=0"]),
    # devices
    ("trapy-train", ["device=tpu"]),
    ("trapy-train", ["device=cuda:99"]),
    ("trapy-train", ["resume=/no/such/run"]),
    # trapy-eval
    ("trapy-eval", ["gamez=3"]),
    ("trapy-eval", ["games=many"]),
    ("trapy-eval", ["side=ten"]),
    ("trapy-eval", ["agents=random"]),
    ("trapy-eval", ["agents=[random,wizard]", "side=3", "games=2"]),
    ("trapy-eval", ["mode=swiss", "agents=[random,uct:2]"]),
    ("trapy-eval", ["games=1000000000", "agents=[random,uct:2]"]),
    ("trapy-eval", ["side=1000", "agents=[random,uct:2]"]),
    ("trapy-eval", ["num_simulations=1000000000", "agents=[random,uct:2]"]),
    ("trapy-eval", ["focus=random", "agents=[random,uct:2]"]),
    ("trapy-eval", ["head_to_head=true", "agents=[random,uct:2]"]),
    ("trapy-eval", ["openings=3", "agents=[random,uct:2]"]),
    ("trapy-eval", ["checkpoints=[1]", "agents=[random,uct:2]"]),
    ("trapy-eval", ["device=tpu", "agents=[random,uct:2]"]),
    ("trapy-eval", ["run=/no/such/run"]),
    ("trapy-eval", ["agents=[random,'mcts:/no/such.pt:4']", "side=4", "games=2"]),
    # trapy-openings
    ("trapy-openings", ["simulatons=5"]),
    ("trapy-openings", ["side=ten"]),
    ("trapy-openings", ["estimator=bogus", "side=3"]),
    ("trapy-openings", ["estimator=net"]),
    ("trapy-openings", ["agent=uct:10"]),
    ("trapy-openings", ["workers=4", "estimator=rollout"]),
    ("trapy-openings", ["extend=x.json"]),
    ("trapy-openings", ["playouts=100000000000"]),
    ("trapy-openings", ["rollouts=1000000000"]),
    ("trapy-openings", ["side=1000"]),
    ("trapy-openings", ["search.num_simulations=1000000000"]),
    ("trapy-openings", ["half_width=2"]),
    ("trapy-openings", ["device=tpu"]),
    ("trapy-openings", ["checkpoint=/no/such.pt", "estimator=net", "side=3"]),
    # the front ends
    ("trapy-gtp", ["wizard"]),
    ("trapy-gtp", ["mcts:/no/such.pt:4"]),
    ("trapy-gtp", ["random", "--side", "1000"]),
    ("trapy-gtp", ["random", "--side", "abc"]),
    ("trapy-play", ["wizard"]),
    ("trapy-play", ["random", "--side", "1000"]),
    ("trapy-play", ["uct:abc"]),
    ("trapy-export", ["/no/such.pt", "out.onnx"]),
    ("trapy-export", []),
    ("trapy-web", ["--side", "1000"]),
    ("trapy-web", ["--agent", "wizard"]),
    # agents, checkpoints and settings a command only used once it had started
    ("trapy-train", ["eval.opponents=[bogus:1]"]),
    ("trapy-train", ["eval.final_opponents=[wizard]"]),
    ("trapy-eval", ["agents=[random]", "baselines=[wizard]", "side=3", "games=2"]),
    # node budgets and usage errors of trapy-solve
    ("trapy-solve", ["--max-nodes", "inf"]),
    ("trapy-solve", ["--max-nodes", "nan"]),
    ("trapy-solve", ["--max-nodes", "1e400"]),
    ("trapy-solve", ["--max-nodes", str(2**63)]),
    ("trapy-solve", ["--side", "abc"]),
    ("trapy-solve", ["--method", "guess"]),
    # trapy-web: its games file (made by `GAMES_FILES` in the case's folder), its options
    ("trapy-web", ["--db", "empty.sqlite"]),
    ("trapy-web", ["--db", "truncated.sqlite"]),
    ("trapy-web", ["--db", "damaged.sqlite"]),
    ("trapy-web", ["--db", "readonly.sqlite"]),
    ("trapy-web", ["--db", "notes.sqlite"]),
    ("trapy-web", ["--db", "/etc/hostname/games.sqlite"]),
    ("trapy-web", ["--db", "missing.sqlite", "--read-only"]),
    ("trapy-web", ["--db", "missing.sqlite", "--restore"]),
    ("trapy-web", ["--port", "BUSY"]),
]

# Each consumer of a checkpoint file and its arguments (side 4).
CONSUMERS = {
    "trapy-train": lambda path: [f"resume={path}", "logger.progress=false"],
    "trapy-eval": lambda path: [f"agents=[random,'mcts:{path}:4']", "games=2", "side=4",
                                "progress=false"],
    "trapy-gtp": lambda path: [f"mcts:{path}:4", "--side", "4"],
    "trapy-play": lambda path: [f"mcts:{path}:4", "--side", "4"],
    "trapy-openings": lambda path: [f"checkpoint={path}", "side=4", "estimator=net",
                                    "cache_dir=null"],
    "trapy-export": lambda path: [path, "out.onnx"],
}  # fmt: skip


def make_games_files(folder: Path) -> None:
    """The games files of the ``trapy-web`` cases, in ``folder``: ``empty.sqlite`` (0 bytes),
    ``truncated.sqlite`` (cut mid-page, its copy beside it), ``damaged.sqlite`` (one record's
    text overwritten: SQLite's own checks pass), ``readonly.sqlite`` (mode 0444, its folder
    too, as the case runs without root's permission override) and ``notes.sqlite``
    (another program's)."""
    from trapy_rl.web.sessions import SessionStore
    from trapy_rl.web.storage import GameDatabase

    (folder / "empty.sqlite").write_bytes(b"")
    for name in ("truncated", "damaged", "readonly"):
        store = SessionStore(GameDatabase(folder / f"{name}.sqlite"))
        for _ in range(40):
            store.create(side=4, human=None).play("a1")
        store.db.close()
    with (folder / "truncated.sqlite").open("rb+") as handle:
        handle.truncate(4096 + 1000)
    damaged = bytearray((folder / "damaged.sqlite").read_bytes())
    at = damaged.index(b'"tree"')
    damaged[at : at + 6] = bytes(6)
    (folder / "damaged.sqlite").write_bytes(bytes(damaged))
    (folder / "readonly.sqlite").chmod(0o444)
    with sqlite3.connect(folder / "notes.sqlite") as db:
        db.execute("CREATE TABLE notes (text TEXT)")


def _without_permission_override() -> None:
    """As root, give up CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH (the bounding set, before
    exec): a read-only file is then read-only to the command too."""
    if os.geteuid() == 0:
        libc = ctypes.CDLL(None, use_errno=True)
        for capability in (1, 2):
            libc.prctl(24, capability, 0, 0, 0)  # PR_CAPBSET_DROP


def run_case(prog: str, args: list[str], *, limit: int, timeout: float, folder: Path) -> dict:
    """Run ``prog args`` under the address-space ``limit``: exit code, stdout, stderr, peak
    MiB, and whether it made its run folder."""
    hydra = ["hydra.run.dir=" + str(folder / "hydra")] if prog in _HYDRA else []
    code = f"import sys; from trapy_rl.launch import launch; sys.exit(launch({prog!r}))"
    busy = None
    if "BUSY" in args:  # a port another program listens on
        busy = socket.socket()
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        args = [str(busy.getsockname()[1]) if a == "BUSY" else a for a in args]
    if prog == "trapy-web" and "--db" not in args:
        args = [*args, "--db", ":memory:"]
    argv = [sys.executable, "-c", code, *args, *hydra]

    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
        _without_permission_override()

    env = {key: value for key, value in os.environ.items() if key not in _DEBUG}
    env["OMP_NUM_THREADS"] = "1"
    with (folder / "err").open("w+") as err, (folder / "out").open("w+") as out:
        process = subprocess.Popen(
            argv, stdin=subprocess.DEVNULL, stdout=out, stderr=err,
            preexec_fn=cap, cwd=folder, env=env,
        )  # fmt: skip
        started, timed_out = time.monotonic(), False
        while True:
            pid, status, usage = os.wait4(process.pid, os.WNOHANG)
            if pid:
                break
            if time.monotonic() - started > timeout:
                process.kill()
                timed_out = True
            time.sleep(0.05)
        process.returncode = os.waitstatus_to_exitcode(status)
        err.seek(0)
        out.seek(0)
        text, printed = err.read(), out.read()
    if busy is not None:
        busy.close()
    return {
        "code": "timeout" if timed_out else process.returncode,
        "err": text,
        "out": printed,
        "folder_made": (folder / "hydra").exists(),
        "peak_mib": usage.ru_maxrss / 1024,
    }


_HYDRA = ("trapy-train", "trapy-eval", "trapy-openings")
_DEBUG = ("HYDRA_FULL_ERROR", "TRAPY_DEBUG")


def one_line_refusal(prog: str, result: dict) -> bool:
    lines = result["err"].splitlines()
    return (
        result["code"] not in (0, "timeout")
        and len(lines) == 1
        and lines[0].startswith(f"{prog}: ")
        and "Traceback" not in result["err"]
        and result["out"] == ""  # no plan line or bar before it
        and not result["folder_made"]
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--checkpoints", nargs="*", default=[], help="bad checkpoint files")
    parser.add_argument("--only", help="one command's cases")
    parser.add_argument("--files-only", action="store_true", help="not the settings")
    parser.add_argument("--memory-gb", type=float, default=2.0)
    parser.add_argument("--timeout", type=float, default=120.0)
    args = parser.parse_args(argv)
    cases = [] if args.files_only else list(SETTINGS)
    for path in args.checkpoints:
        cases += [(prog, make(str(Path(path).resolve()))) for prog, make in CONSUMERS.items()]
    if args.only:
        cases = [(prog, case) for prog, case in cases if prog == args.only]
    limit = int(args.memory_gb * 2**30)
    refused = 0
    with tempfile.TemporaryDirectory() as scratch:
        for number, (prog, case) in enumerate(cases):
            folder = Path(scratch) / str(number)
            folder.mkdir()
            if prog == "trapy-web":
                make_games_files(folder)
                folder.chmod(0o555)  # nor can SQLite write beside the read-only file
            result = run_case(prog, case, limit=limit, timeout=args.timeout, folder=folder)
            folder.chmod(0o755)
            ok = one_line_refusal(prog, result)
            refused += ok
            shown = " | ".join(result["err"].strip().splitlines()[-3:])[:220]
            if result["out"]:
                shown += f" [stdout: {result['out'].strip().splitlines()[0][:60]}]"
            if result["folder_made"]:
                shown += " [run folder made]"
            print(
                f"{'ok ' if ok else 'BAD'} {prog} {' '.join(case)[:70]}: exit {result['code']}, "
                f"{result['peak_mib']:.0f} MiB: {shown}",
                flush=True,
            )
    print(f"refused in exactly one line: {refused} of {len(cases)}")
    return 0 if refused == len(cases) else 1


if __name__ == "__main__":
    sys.exit(main())
