"""Feed checkpoint files to one consumer under a memory limit; print what each answered.

    python tests/hostile_consumers.py LIMIT_BYTES CONSUMER OUT_DIR FILE...

The process limits its own address space (``RLIMIT_AS``) first, then runs the consumer on
each file in turn, in process, the way its command line would: ``resume`` (``trapy-train
resume=FILE``), ``trapy-eval``, ``trapy-gtp``, ``trapy-play``, ``trapy-openings``,
``trapy-export`` through `trapy_rl.launch`, and ``web`` (the web board's agent field, a POST
of a new game). It prints one JSON line per file: the exit code (the HTTP status for the web
board), what went to stderr (the error field for the web board) and the peak resident memory
so far in MiB. tests/test_bad_checkpoints.py and scripts/bad_inputs.py run it.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import resource
import sys


def command_line(consumer: str, path: str, out: str) -> list[str]:
    """The argv of ``consumer`` fed the checkpoint ``path`` (side 4), outputs under ``out``."""
    return {
        "resume": ["trapy-train", f"resume={path}", "debug=smoke", "logger.progress=false",
                   f"hydra.run.dir={out}/run"],
        "trapy-eval": ["trapy-eval", f"agents=[random,'mcts:{path}:4']", "games=2", "side=4",
                       "progress=false", f"hydra.run.dir={out}/eval"],
        "trapy-gtp": ["trapy-gtp", f"mcts:{path}:4", "--side", "4"],
        "trapy-play": ["trapy-play", f"mcts:{path}:4", "--side", "4"],
        "trapy-openings": ["trapy-openings", f"checkpoint={path}", "side=4", "estimator=net",
                           "cache_dir=null", f"out_dir={out}/openings", f"hydra.run.dir={out}/o"],
        "trapy-export": ["trapy-export", path, f"{out}/net.onnx"],
    }[consumer]  # fmt: skip


def run_command(argv: list[str]) -> tuple[int, str]:
    """Run the command ``argv`` in this process: (exit code, what it wrote to stderr)."""
    from hydra.core.global_hydra import GlobalHydra

    from trapy_rl.launch import launch

    err = io.StringIO()
    sys.argv = argv
    code = 0
    out = io.TextIOWrapper(io.BytesIO())  # with a buffer: the GTP engine writes bytes
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
        try:
            code = launch(argv[0]) or 0
        except SystemExit as stop:
            code = stop.code if isinstance(stop.code, int) else 1
    GlobalHydra.instance().clear()
    return code, err.getvalue()


def post_game(path: str) -> tuple[int, str]:
    """The web board's answer to a new game against ``mcts:PATH:4``: (status, error)."""
    import warnings

    with warnings.catch_warnings():  # Starlette's note on its test client's HTTP library
        warnings.simplefilter("ignore")
        from starlette.testclient import TestClient

    from trapy_rl.web.server import create_app

    with TestClient(create_app(side=4, allowed_hosts=["testserver"])) as client:
        answer = client.post("/api/games", json={"side": 4, "agent": f"mcts:{path}:4"})
    return answer.status_code, answer.json().get("error", "") if answer.content else ""


def main() -> None:
    limit, consumer, out, *files = sys.argv[1:]
    resource.setrlimit(resource.RLIMIT_AS, (int(limit), int(limit)))
    os.environ.pop("HYDRA_FULL_ERROR", None)
    os.environ.pop("TRAPY_DEBUG", None)
    sys.stdin = io.TextIOWrapper(io.BytesIO(b""))  # gtp and play read their input: none
    report = sys.stdout
    for path in files:
        if consumer == "web":
            code, err = post_game(path)
        else:
            code, err = run_command(command_line(consumer, path, out))
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(json.dumps({"file": path, "code": code, "err": err, "peak_mib": peak}), file=report)
        report.flush()


if __name__ == "__main__":
    main()
