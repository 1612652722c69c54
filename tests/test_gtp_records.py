"""Game records read back from GTP text: showboard's move line and a session's commands."""

from __future__ import annotations

import pytest

from trapy_rl.eval.records import replay_record
from trapy_rl.frontend.gtp_engine import GtpEngine, history_line
from trapy_rl.frontend.gtp_records import records_from_gtp
from trapy_rl.game.board import Board
from trapy_rl.game.state import BLUE, YELLOW


def session(engine: GtpEngine, commands: list[str]) -> str:
    """A controller's log: each command and the engine's answer, as they went over the wire."""
    return "".join(f"{command}\n{engine.handle(command)}" for command in commands)


def test_a_logged_session_of_genmoves_gives_the_game_the_engine_played() -> None:
    engine = GtpEngine("random", side=4, seed=3)
    commands = ["boardsize 4"] + [f"genmove {'b' if i % 2 == 0 else 'y'}" for i in range(40)]
    log = session(engine, commands)  # genmoves after the end are refused (?) and skipped
    (record,) = records_from_gtp(log)
    board = Board(4)
    assert record["moves"] == [board.action_name(a) for a in engine.state.history]
    assert record["winner"] == engine.state.winner in (BLUE, YELLOW)
    assert replay_record(record, board).winner == record["winner"]


def test_refused_commands_change_nothing_and_undo_and_resign_count() -> None:
    engine = GtpEngine("random", side=3, seed=0)
    log = session(
        engine,
        ["play b b2", "play b a1", "play y b2", "play y swap", "play b a1", "undo",
         "play b c1", "7 play y resign", "genmove b"],
    )  # fmt: skip
    assert log.count("?") == 3  # out of turn, occupied, and genmove after the end
    (record,) = records_from_gtp(log)
    assert record["moves"] == ["b2", "swap", "c1"]
    assert record["resigned"] and record["winner"] == BLUE


def test_clear_board_and_boardsize_start_new_games_but_a_refused_boardsize_does_not() -> None:
    text = "boardsize 3\nplay b b2\nboardsize 99\nplay y a1\nclear_board\nplay b c1\n" \
           "clear_board\nboardsize 4\nplay b d1\n"  # fmt: skip
    records = records_from_gtp(text)
    assert [(r["side"], r["moves"]) for r in records] == [(3, ["b2", "a1"]), (3, ["c1"]),
                                                          (4, ["d1"])]  # fmt: skip
    assert all(r["winner"] == 0 and r["winner_agent"] is None for r in records)


def test_showboard_move_lines_are_the_games_and_earlier_views_are_dropped() -> None:
    engine = GtpEngine("random", side=3, seed=0)
    boards = [engine.handle(c) for c in ("play b b2", "showboard", "play y a2", "showboard")]
    engine.handle("play b c1")
    engine.handle("play y resign")
    boards.append(engine.handle("showboard"))
    assert history_line(engine.state) == "moves (side 3): b2 a2 c1, yellow resigned"
    (record,) = records_from_gtp("".join(boards))  # three views of one game
    assert record["moves"] == ["b2", "a2", "c1"] and record["winner"] == BLUE
    # two different games, and the empty board, which is no game
    text = "moves (side 3): none\nmoves (side 3): b2\nmoves (side 4): a1 # comment\n"
    assert [r["moves"] for r in records_from_gtp(text)] == [["b2"], ["a1"]]


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        ("moves (side 3): b2 b2", "line 2: .*occupied"),
        ("moves (side 3): zz9", "line 2: .*zz9"),
        ("moves (side 3): b2, blue gave up", "line 2: unknown ending"),
        ("moves (side 99): b2", "line 2: .*side"),
    ],
)
def test_a_bad_move_line_is_refused_naming_its_line(line: str, reason: str) -> None:
    with pytest.raises(ValueError, match=reason):
        records_from_gtp(f"= \n{line}\n")


def test_text_with_no_moves_has_no_games() -> None:
    assert records_from_gtp("") == []
    assert records_from_gtp("name\n= trapy-gtp\n\nboardsize 5\n=\n") == []


def test_a_move_the_engine_refuses_is_an_error_naming_its_line_and_number() -> None:
    """Typed commands with no answers: an illegal move is reported, never dropped."""
    with pytest.raises(ValueError, match=r"line 3: move 2 \(play y b2\) refused: .*occupied"):
        records_from_gtp("boardsize 3\nplay b b2\nplay y b2\nplay b a1\n")
    with pytest.raises(ValueError, match=r"line 4: move 2 \(play y a9\)"):  # a genmove answer
        records_from_gtp("boardsize 3\nplay b b2\ngenmove y\n= a9\n")
