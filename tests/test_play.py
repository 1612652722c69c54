"""Terminal play: games driven by scripted input, refusals with reasons, undo, swap, resign,
records that replay, and the command line."""

from __future__ import annotations

import io
import json
import os
import re
import signal
import subprocess
import sys

import numpy as np
import pytest

from trapy_rl.agents import RandomAgent
from trapy_rl.eval.records import load_records, replay_record
from trapy_rl.frontend.human_game import game_record, movers, takeback
from trapy_rl.game import BLUE, YELLOW, Board, GameState
from trapy_rl.game.board import MAX_SIDE
from trapy_rl.play import UNREADABLE, main, play_game, use_colour

BOARD = Board(3)


class Script:
    """An ``input`` stand-in: answers prompts from a list (raising the exceptions in it), then
    signals end of input."""

    def __init__(self, lines: list[str | Exception], output: io.StringIO | None = None) -> None:
        self.lines, self.prompts, self.output = list(lines), [], output

    def __call__(self, prompt: str) -> str:
        self.prompts.append(prompt)
        if self.output is not None:
            self.output.write(prompt)
        if not self.lines:
            raise EOFError
        line = self.lines.pop(0)
        if isinstance(line, Exception):
            raise line
        return line


class FirstCell:
    """Deterministic: the lowest-numbered empty cell, never the swap."""

    name = "first"

    def act(self, batch, games):
        return batch.legal_mask()[games, :-1].argmax(axis=1)


def play(lines: list[str], agent=None, *, human: int = BLUE, board: Board = BOARD):
    script, output = Script(lines), io.StringIO()
    state = play_game(
        agent or FirstCell(), board=board, human=human, input_fn=script, output=output
    )
    return state, script, output.getvalue()


def names(state: GameState) -> list[str]:
    return state.move_names()


def last_board(text: str, board: Board) -> str:
    """The stones of the last board drawn in ``text``, top row first, as '.BYby' letters."""
    lines = text.split("\n")
    letters = max(i for i, line in enumerate(lines) if line.startswith("  a b c"))
    rows = lines[letters - board.side : letters]
    return "".join(ch for row in rows for ch in row[2:] if ch in ".BYby")


# ---------------------------------------------------------------------- the loop
def test_bad_input_is_asked_again_with_the_reason() -> None:
    state, script, text = play(["zz9", "", "b2", "a1", "7", "swap", "c2", "quit"])
    # b2 played, the agent answers a1 (the first empty cell), then c2; then the person quits.
    assert names(state) == ["b2", "a1", "c2", "b1"]
    assert "'zz9' is not a cell of the side-3 board. Try again" in text
    assert "Type a move such as a1, or help." in text
    assert "a1: the cell is occupied by yellow. Try again" in text
    assert "'7' is not a move" in text
    assert "swap: not allowed now; only yellow may swap, as the second move" in text
    assert "first (yellow) plays a1" in text and "You (blue) play c2" in text
    assert "Game left unfinished." in text and not state.is_over
    assert script.lines == []  # every line was read: refusals ask again
    assert all(prompt.endswith("(you)> ") for prompt in script.prompts)


def test_undecodable_lines_are_refused_and_the_game_goes_on() -> None:
    """A strict decoder raises; a tolerant one passes the bytes on as surrogate escapes."""
    strict = UnicodeDecodeError("ascii", b"\xff", 0, 1, "ordinal not in range(128)")
    state, script, text = play([strict, "\udcff\udcfe", "caf\udcc3\udca9", "b2", "quit"])
    assert text.count(UNREADABLE + "\n") == 3
    assert names(state) == ["b2", "a1"] and script.lines == []


def test_help_lists_the_commands() -> None:
    _, _, text = play(["help", "quit"])
    for word in ("swap", "undo", "resign", "help", "quit"):
        assert f"\n  {word} " in text


def test_end_of_input_quits() -> None:
    state, script, text = play(["b2"])
    assert not state.is_over and "Game left unfinished." in text
    assert len(script.prompts) == 2


def test_ctrl_c_mid_game_is_an_interrupt_not_a_quit(tmp_path) -> None:
    """trapy-play stopped by Ctrl-C at its prompt exits 130 with one line, and records nothing."""
    record = tmp_path / "g.jsonl"
    process = subprocess.Popen(
        [sys.executable, "-c", "import sys; from trapy_rl.launch import play; sys.exit(play())",
         "random", "--side", "3", "--record", str(record)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )  # fmt: skip
    prompt = b""
    while not prompt.endswith(b"> "):  # the game has started: the first prompt is shown
        byte = process.stdout.read(1)
        assert byte, process.stderr.read()
        prompt += byte
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=60)
    assert process.returncode == 130 and err == b"trapy-play: interrupted\n", (out, err)
    assert not record.exists()


def test_the_board_is_drawn_before_each_of_the_persons_moves() -> None:
    _, _, text = play(["b2", "quit"])
    assert text.count("  a b c d e\n") == 2
    assert "1[Y]. . . ." in text  # the agent's a1, in brackets


def test_undo_takes_back_the_persons_move_and_the_reply() -> None:
    state, _, text = play(["b2", "undo", "a3", "resign"])
    assert "Took back b2, a1." in text
    assert names(state) == ["a3", "a1"] and state.winner == YELLOW and state.resigned
    assert "You resign. first (yellow) wins." in text


def test_undo_as_yellow_around_the_swap() -> None:
    """The agent (blue) opens a1, the person swaps, the agent replies b1; undo goes back to
    the swap offer; a second undo finds nothing of the person's to take back."""
    state, script, text = play(["swap", "undo", "undo", "quit"], human=YELLOW)
    assert "first (blue) plays a1" in text
    assert "You (yellow) play swap (the stone on a1 is now yellow)" in text
    assert "first (blue) plays b1" in text
    assert "Took back swap, b1." in text
    assert "Nothing to undo: you have not moved yet." in text
    assert names(state) == ["a1"] and state.swap_allowed
    # The prompt says when the swap is legal, and only then.
    swap_prompts = [p for p in script.prompts if "swap is legal" in p]
    assert len(swap_prompts) == 3 and "take blue's stone on a1" in swap_prompts[0]
    assert "swap is legal" not in script.prompts[1]


def test_the_agent_may_swap() -> None:
    agent = RandomAgent(seed=0, swap_probability=1.0)
    state, _, text = play(["b2", "quit"], agent)
    assert "random (yellow) plays swap (the stone on b2 is now yellow)" in text
    assert state.stones[BOARD.parse_action("b2")] == YELLOW and state.to_move == BLUE


def test_a_game_to_the_end() -> None:
    """The person tries every cell in order; occupied ones are refused and the next tried."""
    board = Board(4)
    state, _, text = play(list(board.names), RandomAgent(seed=3), board=board)
    assert state.is_over and not state.resigned
    assert re.search(r"(You \(blue\) win|random \(yellow\) wins) after \d+ moves\.", text)
    # The final board shows the winning group in lower case.
    assert "bby"[state.winner] in last_board(text, board)


def test_takeback_against_replay() -> None:
    rng = np.random.default_rng(0)
    for _ in range(20):
        state = GameState(BOARD)
        for _ in range(rng.integers(0, 8)):
            if state.is_over:
                break
            state.play(int(rng.choice(state.legal_actions())))
        made_by = movers(state)
        for player in (BLUE, YELLOW):
            previous = takeback(state, player)
            if player not in made_by:
                assert previous is None
                continue
            assert previous.to_move == player and not previous.is_over
            assert state.history[: previous.move_count] == previous.history
            assert all(m != player for m in made_by[previous.move_count + 1 :])
            assert made_by[previous.move_count] == player


def test_bad_arguments() -> None:
    with pytest.raises(ValueError, match="human must be 1"):
        play_game(FirstCell(), board=BOARD, human=3, input_fn=Script([]), output=io.StringIO())
    with pytest.raises(ValueError, match="only a finished game"):
        game_record(GameState(BOARD), agent_name="x", human=BLUE, seed=None)


# ---------------------------------------------------------------------- command line
def run_main(argv: list[str], lines: list[str], output=None) -> tuple[int, str]:
    output = output if output is not None else io.StringIO()
    script = Script(lines, output)
    status = main(argv, input_fn=script, output=output)
    return status, output.getvalue()


def test_finished_game_record_replays_to_the_final_position(tmp_path) -> None:
    path = tmp_path / "games.jsonl"
    board = Board(4)
    status, text = run_main(
        ["random", "--side", "4", "--seed", "5", "--record", str(path)], list(board.names)
    )
    assert status == 0 and f"Game record saved to {path}" in text
    (record,) = load_records(path)
    assert record["side"] == 4 and record["seed"] == 5 and record["resigned"] is False
    assert record["agent_a"] == "random" and record["agent_b"] == "human"
    assert record["blue"] == "b" and record["blue_agent"] == "human"
    assert record["length"] == len(record["moves"])
    # The recorded moves are the ones announced during the game, in order.
    announced = re.findall(r"(?:You \(\w+\) play|random \(\w+\) plays) (\w+)", text)
    assert record["moves"] == announced
    final = replay_record(record, board)  # checks the recorded winner too
    assert final.is_over and final.winner == record["winner"]
    winner_agent = "b" if record["winner"] == BLUE else "a"
    assert record["winner_agent"] == winner_agent
    # The last board drawn is the replayed final position.
    stones = last_board(text, board)
    rows = [final.stones[board.grid_to_cell[r, : 2 * 4 - 1 - r]] for r in range(3, -1, -1)]
    assert stones.upper() == "".join(".BY"[s] for s in np.concatenate(rows))


def test_records_are_appended(tmp_path) -> None:
    path = tmp_path / "more" / "games.jsonl"
    for colour in ("blue", "yellow"):
        status, _ = run_main(
            ["random", "--side", "2", "--colour", colour, "--record", str(path)],
            list(Board(2).names),  # each cell in turn; occupied ones are refused
        )
        assert status == 0
    records = load_records(path)
    assert [r["blue_agent"] for r in records] == ["human", "random"]
    for record in records:
        replay_record(record, Board(2))


def test_resignation_record(tmp_path) -> None:
    path = tmp_path / "r.jsonl"
    status, text = run_main(
        ["random", "--side", "3", "--colour", "y", "--seed", "1", "--record", str(path)],
        ["resign"],
    )
    assert status == 0 and "You resign. random (blue) wins." in text
    record = json.loads(path.read_text())
    assert record["resigned"] is True and record["winner"] == BLUE
    assert record["winner_agent"] == "a" and record["blue_agent"] == "random"
    # The moves replay; the result is the resignation's, not the board's.
    state = replay_record(record, Board(3))
    assert state.resigned and state.winner == record["winner"] == BLUE


def test_no_record_for_an_unfinished_game(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    status, text = run_main(["random", "--side", "3"], ["b2", "quit"])
    assert status == 0 and "saved" not in text
    assert list(tmp_path.iterdir()) == []


def test_default_record_path(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    status, text = run_main(["random", "--side", "2"], ["resign"])
    (path,) = (tmp_path / "outputs" / "games").iterdir()
    assert status == 0 and path.suffix == ".jsonl" and path.name in text


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_colour_only_on_a_terminal_without_no_color(tmp_path, monkeypatch) -> None:
    monkeypatch.delenv("NO_COLOR", raising=False)
    assert use_colour(Terminal()) and not use_colour(io.StringIO())
    status, text = run_main(
        ["random,swap_probability=0", "--side", "2", "--record", str(tmp_path / "g.jsonl")],
        ["b2", "resign"],
        Terminal(),
    )
    assert status == 0 and "\x1b[1;94mB\x1b[0m" in text  # the blue stone on b2
    monkeypatch.setenv("NO_COLOR", "1")
    assert not use_colour(Terminal())
    _, text = run_main(
        ["random", "--side", "2", "--record", str(tmp_path / "g.jsonl")],
        ["b2", "resign"],
        Terminal(),
    )
    assert "\x1b[" not in text


def test_agent_fault_is_reported(tmp_path, capsys, monkeypatch) -> None:
    from trapy_rl.agents import register_agent_kind

    class Cheat:
        name = "cheat"

        def act(self, batch, games):
            return np.flatnonzero(batch.stones[games[0]])[:1]  # an occupied cell

    register_agent_kind("play-cheat", lambda spec, **_: Cheat(), usage="play-cheat", replace=True)
    monkeypatch.chdir(tmp_path)
    status, _ = run_main(["play-cheat", "--side", "3"], ["b2"])
    assert status == 1
    assert "agent 'cheat' played illegal move" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    "argv, reason",
    [
        (["nosuchagent"], "unknown agent spec 'nosuchagent'"),
        (["random", "--colour", "green"], "invalid choice: 'green'"),
        (["random", "--side", "1"], f"side must be 2 to {MAX_SIDE}, got 1"),
        (["random", "--side", "200"], f"side must be 2 to {MAX_SIDE}, got 200"),  # not int16
        (["random", "--seed", "x"], "invalid int value: 'x'"),
    ],
)
def test_command_line_errors(argv, reason, capsys) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(argv, input_fn=Script([]), output=io.StringIO())
    assert exit_info.value.code == 2
    (error,) = [line for line in capsys.readouterr().err.splitlines() if "error" in line]
    assert reason in error


@pytest.mark.parametrize("where", ["under a file", "a folder"])
def test_an_unwritable_record_path_fails_before_the_game(tmp_path, capsys, where) -> None:
    """Found only after the game, the record would be lost; refused at once in one line."""
    blocker = tmp_path / "file.txt"
    blocker.write_text("")
    path = blocker / "games.jsonl" if where == "under a file" else tmp_path
    script = Script(["resign"])
    with pytest.raises(SystemExit) as exit_info:
        main(["random", "--side", "3", "--record", str(path)], input_fn=script)
    assert exit_info.value.code == 2 and script.prompts == []
    err = capsys.readouterr().err
    assert err.startswith(f"trapy-play: error: cannot write the game record to {path}: ")
    assert err.count("\n") == 1


def test_the_record_check_leaves_nothing_behind(tmp_path) -> None:
    path = tmp_path / "new" / "folders" / "games.jsonl"
    status, text = run_main(["random", "--side", "3", "--record", str(path)], ["b2", "quit"])
    assert status == 0 and "Game left unfinished." in text
    assert list(tmp_path.iterdir()) == []


def test_hostile_input_on_a_strict_ascii_terminal(tmp_path) -> None:
    """trapy-play as its own process, stdin and stdout strict ASCII: every bad line is refused
    in one line and the game goes on, until the input ends mid-game; never a traceback."""
    lines = [
        (b"b2", "You (blue) play b2"),
        (b"zz9", "'zz9' is not a cell of the side-3 board."),
        (b"\xff\xfe", UNREADABLE),
        (b"caf\xc3\xa9", UNREADABLE),  # UTF-8, but not ASCII
        (b"a" * 400_000 + b"1", "'aaaaaaaaaa"),
        (b"x" * 1_000_000, "is not a move"),
        (b"\x00\x1b[A\x7f", "'\\x00\\x1b[A\\x7f' is not a move"),
        (b"b2", "b2: the cell is occupied by "),
        (b"swap", "swap: not allowed now"),
        (b"", "Type a move such as a1, or help."),
        (b"pass", "'pass' is not a move"),
    ]
    data = b"\n".join(line for line, _ in lines)  # the last line has no newline: then EOF
    env = {**os.environ, "LC_ALL": "C", "PYTHONUTF8": "0", "PYTHONIOENCODING": "ascii:strict"}
    argv = ["random", "--side", "3", "--seed", "0", "--record", str(tmp_path / "g.jsonl")]
    process = subprocess.run(
        [sys.executable, "-m", "trapy_rl.play", *argv],
        input=data,
        capture_output=True,
        env=env,
        timeout=120,
    )
    assert process.returncode == 0 and process.stderr == b"", process.stderr[-2000:]
    text = process.stdout.decode("ascii")
    answers = re.split(r"move \d+, blue \(you\)> ", text)[1:]  # what follows each prompt
    assert len(answers) == len(lines) + 1
    assert answers[0].startswith("You (blue) play b2\nrandom (yellow) plays ")
    for (line, expected), answer in zip(lines[1:], answers[1:]):
        assert answer.count("\n") == 1 and len(answer) < 200, (line[:20], answer[:300])
        assert expected in answer, (line[:20], answer)
    assert answers[-1] == "Game left unfinished.\n"
    assert list(tmp_path.iterdir()) == []  # an unfinished game is not recorded
