"""The GTP engine: conversations through `handle`, through byte streams and over a pipe.

Every response is checked for the protocol's shape; malformed input of every kind must get a
``?`` response and leave the engine working; moves are checked against a `GameState` kept by
the test itself.
"""

from __future__ import annotations

import io
import random
import re
import subprocess
import sys
import threading

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from trapy_rl.agents import register_agent_kind
from trapy_rl.frontend.gtp_engine import MAX_LINE, GtpEngine
from trapy_rl.game import BLUE, YELLOW, Board, GameState
from trapy_rl.game.board import MAX_SIDE
from trapy_rl.game.render import render_ascii
from trapy_rl.gtp import main, serve

# One response: '=' or '?', an optional id, a space, then lines none of which is blank.
RESPONSE = re.compile(r"[=?][0-9]* [^\n]*(\n[^\n]*[^\n\s][^\n]*)*\n\n", re.DOTALL)
REQUIRED = (
    "protocol_version name version known_command list_commands boardsize clear_board "
    "play genmove undo showboard final_score quit"
).split()


def ok(engine: GtpEngine, line: str) -> str:
    """The result of a command that must succeed."""
    response = engine.handle(line)
    assert RESPONSE.fullmatch(response), repr(response)
    assert response.startswith("="), f"{line!r} -> {response!r}"
    return response.split(" ", 1)[1][:-2]


def fails(engine: GtpEngine, line: str) -> str:
    """The message of a command that must fail, on one line."""
    response = engine.handle(line)
    assert RESPONSE.fullmatch(response), repr(response)
    assert response.startswith("?"), f"{line!r} -> {response!r}"
    message = response.split(" ", 1)[1][:-2]
    assert "\n" not in message and "internal error" not in message
    return message


class FixedSide:
    """An agent that, like a trained network, supports one board side only."""

    def __init__(self, board: Board) -> None:
        self.name = "fixed5"

    def act(self, batch, games):
        return batch.legal_mask()[games, :-1].argmax(axis=1)


def _fixed_side(spec, *, board, seed):
    if board.side != 5:
        raise ValueError(f"agent spec {spec.text!r}: trained on side 5, not side {board.side}")
    return FixedSide(board)


class Broken:
    def __init__(self, kind: str) -> None:
        self.name, self.kind = kind, kind

    def act(self, batch, games):
        if self.kind == "gtp-raises":
            raise RuntimeError("the weights are missing")
        if self.kind == "gtp-occupied":  # the first occupied cell, or the swap at move 1
            occupied = np.flatnonzero(batch.stones[games[0]])
            return np.array([occupied[0] if len(occupied) else batch.board.swap_action])
        return np.array([0, 1])  # two actions for one game


register_agent_kind("gtp-fixed5", _fixed_side, usage="gtp-fixed5", replace=True)
for _kind in ("gtp-raises", "gtp-occupied", "gtp-two"):
    register_agent_kind(
        _kind, lambda spec, *, board, seed: Broken(spec.kind), usage=_kind, replace=True
    )


# ---------------------------------------------------------------------- administration
def test_administrative_commands() -> None:
    engine = GtpEngine("random", side=3, seed=0)
    assert ok(engine, "protocol_version") == "2"
    assert ok(engine, "name") == "trapy_rl"
    assert "random" in ok(engine, "version")
    assert ok(engine, "list_commands").split("\n") == REQUIRED
    for command in REQUIRED:
        assert ok(engine, f"known_command {command}") == "true"
    assert ok(engine, "known_command pass") == "false"
    assert ok(engine, "known_command gogui-analyze_commands") == "false"


def test_ids_comments_blank_lines_and_case() -> None:
    engine = GtpEngine("random", side=3, seed=0)
    assert engine.handle("12 name") == "=12 trapy_rl\n\n"
    assert engine.handle("007 protocol_version # asks the version") == "=007 2\n\n"
    assert engine.handle("3 foo").startswith("?3 unknown command 'foo'")
    assert engine.handle("") == ""
    assert engine.handle("   \t  ") == ""
    assert engine.handle("# just a comment") == ""
    assert engine.handle("name\r\n") == "= trapy_rl\n\n"
    assert engine.handle("\tPLAY\tBlue\tB2\x07") == "= \n\n"  # tab, bell, upper case
    assert engine.handle("4") == "?4 missing command after the id\n\n"
    assert engine.state.history == [Board(3).parse_action("b2")]


@pytest.mark.parametrize(
    "line, reason",
    [
        ("foo", "unknown command 'foo'"),
        ("-1 name", "unknown command '-1'"),
        ("play", "play takes 2 arguments, got 0: usage play COLOUR MOVE"),
        ("play b", "takes 2 arguments, got 1"),
        ("play b a1 a2", "takes 2 arguments, got 3"),
        ("genmove", "genmove takes 1 argument, got 0"),
        ("known_command", "known_command takes 1 argument"),
        ("name please", "name takes 0 arguments, got 1"),
        ("play w a1", "unknown colour 'w': expected b, blue, y or yellow"),
        ("genmove black", "unknown colour 'black'"),
        ("play b zz99", "'zz99' is not a cell of the side-3 board"),
        ("play b a4", "'a4' is not a cell of the side-3 board"),
        ("play b 7", "'7' is not a move"),
        ("play b pass", "there is no passing in Trap Y"),
        ("play b swap", "swap: not allowed now"),
        ("play y a1", "it is blue's turn (move 1), not yellow's"),
        ("genmove y", "it is blue's turn (move 1), not yellow's"),
        ("boardsize", "boardsize takes 1 to 2 arguments, got 0"),
        ("boardsize 1", f"unacceptable size 1: the side must be 2 to {MAX_SIDE}"),
        ("boardsize 0", "unacceptable size 0"),
        (f"boardsize {MAX_SIDE + 1}", f"unacceptable size {MAX_SIDE + 1}"),
        ("boardsize 99999999999999999999", "unacceptable size"),
        ("boardsize -3", "'-3' is not a whole number"),
        ("boardsize ten", "'ten' is not a whole number"),
        ("boardsize 4 5", "unacceptable size 4 x 5: a Trap Y board has one size"),
        ("undo", "cannot undo: no moves have been played"),
        ("final_score", "the game is not over: blue to move (move 1)"),
        ("\x00\xff\ufffd junk", "unknown command"),
        ("play b " + "a" * 500, "is not a move"),
        ("x" * (MAX_LINE + 1), f"line too long (more than {MAX_LINE} characters); ignored"),
        ("\xa0", "unknown command '\\xa0'"),  # GTP's whitespace is space and tab only
        ("play\u3000b b2", "unknown command 'play\\u3000b'"),
    ],
)
def test_malformed_commands_get_errors_and_change_nothing(line: str, reason: str) -> None:
    engine = GtpEngine("random", side=3, seed=0)
    message = fails(engine, line)
    assert reason in message
    assert len(message) < 200  # long input is not echoed back in full
    assert engine.state.history == [] and engine.board.side == 3
    assert ok(engine, "name") == "trapy_rl"


def test_illegal_moves_in_a_game() -> None:
    engine = GtpEngine("random", side=3, seed=0)
    ok(engine, "play b b2")
    assert "b2: the cell is occupied by blue" in fails(engine, "play y b2")
    assert "it is yellow's turn (move 2), not blue's" in fails(engine, "play b c2")
    ok(engine, "play y a1")
    assert "swap: not allowed now" in fails(engine, "play b swap")
    ok(engine, "play b c1")
    assert "swap: not allowed now" in fails(engine, "play y swap")


# ---------------------------------------------------------------------- the swap
def test_swap_by_play_and_undo_of_the_swap() -> None:
    engine = GtpEngine("random", side=3, seed=0)
    ok(engine, "play blue b2")
    ok(engine, "play yellow swap")
    b2 = engine.board.parse_action("b2")
    assert engine.state.stones[b2] == YELLOW and engine.state.to_move == BLUE
    assert "blue to move (move 3)" in ok(engine, "showboard")
    ok(engine, "undo")
    assert engine.state.stones[b2] == BLUE and engine.state.swap_allowed


def test_genmove_can_answer_the_swap() -> None:
    engine = GtpEngine("random,swap_probability=1", side=4, seed=0)
    ok(engine, "play b c2")
    assert ok(engine, "genmove y") == "swap"
    assert engine.state.history == [engine.board.parse_action("c2"), engine.board.swap_action]
    # The swap is over: at move 4 yellow's genmove places a stone.
    ok(engine, "play b a1")
    assert ok(engine, "genmove y") != "swap"


# ---------------------------------------------------------------------- genmove
@pytest.mark.parametrize("spec, side", [("random", 3), ("random", 4), ("uct:16", 3)])
def test_genmove_plays_legal_moves_to_the_end(spec: str, side: int) -> None:
    """The engine plays both colours; a reference GameState replays every answer."""
    for seed in range(4 if spec == "random" else 1):
        engine = GtpEngine(spec, side=side, seed=seed)
        reference = GameState(side=side)
        while not reference.is_over:
            colour = "b" if reference.to_move == BLUE else "y"
            move = ok(engine, f"genmove {colour}")
            assert reference.legal_mask()[reference.board.parse_action(move)], move
            reference.play(move)
        np.testing.assert_array_equal(engine.state.stones, reference.stones)
        assert ok(engine, "final_score") == ("B+" if reference.winner == BLUE else "Y+")
        assert "the game is over" in fails(engine, "genmove b")
        assert "the game is over" in fails(engine, "genmove y")


def test_full_game_alternating_genmove_and_play() -> None:
    """random on side 3 as yellow against moves sent by play, until final_score answers."""
    rng = np.random.default_rng(5)
    for seed in range(5):
        engine = GtpEngine("random", side=3, seed=seed)
        ok(engine, "boardsize 3")
        ok(engine, "clear_board")
        reference = GameState(side=3)
        while not reference.is_over:
            if reference.to_move == BLUE:
                cells = np.flatnonzero(reference.legal_mask()[:-1])
                move = reference.board.action_name(int(rng.choice(cells)))
                ok(engine, f"play b {move}")
            else:
                move = ok(engine, "genmove y")
            reference.play(move)
            if not reference.is_over:
                assert "the game is not over" in fails(engine, "final_score")
        expected = "B+" if reference.winner == BLUE else "Y+"
        assert ok(engine, "final_score") == expected
        assert "the game is over" in fails(engine, "play b a1")
        assert "won in" in ok(engine, "showboard")


def test_agent_faults_are_errors_and_leave_the_game_alone() -> None:
    for kind, reason in [
        ("gtp-raises", "failed: RuntimeError: the weights are missing"),
        ("gtp-occupied", "played illegal move"),
        ("gtp-two", "not one action"),
    ]:
        engine = GtpEngine(kind, side=3)
        if kind == "gtp-occupied":
            ok(engine, "play b a1")
            ok(engine, "play y b1")
        before = list(engine.state.history)
        colour = "b" if engine.state.to_move == BLUE else "y"
        assert reason in fails(engine, f"genmove {colour}")
        assert engine.state.history == before


# ---------------------------------------------------------------------- undo, resign
def test_undo_takes_back_moves_one_at_a_time() -> None:
    engine = GtpEngine("random", side=4, seed=1)
    moves = ["b2"]
    ok(engine, "play b b2")
    moves.append(ok(engine, "genmove y"))
    ok(engine, "play b " + ("a1" if moves[-1] != "a1" else "a2"))
    for k in range(3, 0, -1):
        ok(engine, "undo")
        assert engine.state.move_count == k - 1
    assert engine.state.history == []
    assert "cannot undo" in fails(engine, "undo")


def test_resign_and_undo_of_the_resignation() -> None:
    engine = GtpEngine("random", side=3, seed=0)
    ok(engine, "play b b2")
    ok(engine, "play b resign")  # either colour may resign, in turn or not
    assert ok(engine, "final_score") == "Y+"
    assert "blue won" not in ok(engine, "showboard")
    assert "yellow won by resignation" in ok(engine, "showboard")
    assert "the game is over: yellow won by resignation" in fails(engine, "play y resign")
    assert "the game is over" in fails(engine, "genmove y")
    ok(engine, "undo")
    assert not engine.state.is_over and engine.state.move_count == 1
    ok(engine, "play y resign")
    assert ok(engine, "final_score") == "B+"


# ---------------------------------------------------------------------- board
def test_showboard_text() -> None:
    engine = GtpEngine("random", side=3, seed=0)
    for line in ("play b b2", "play y swap", "play b a1"):
        ok(engine, line)
    # Rows from the top; b2 yellow after the swap, a1 blue and the last move (in brackets).
    expected = (
        "= \n3   . . .\n2  . Y . .\n1[B]. . . .\n  a b c d e\nyellow to move (move 4)\n"
        "moves (side 3): b2 swap a1\n\n"
    )
    assert engine.handle("showboard") == expected
    state = engine.state
    picture = render_ascii(state.stones, state.board, last_action=state.last_action)
    assert expected == f"= \n{picture}\nyellow to move (move 4)\nmoves (side 3): b2 swap a1\n\n"


def test_showboard_marks_the_winning_group() -> None:
    engine = GtpEngine("random", side=2)
    for line in ("play b b1", "play y a1", "play b b2"):  # b1-b2 touches four regions
        ok(engine, line)
    assert ok(engine, "final_score") == "B+"
    # The winning group in lower case, the last move in brackets.
    assert ok(engine, "showboard") == (
        "\n2  .[b]\n1 Y b .\n  a b c\nblue won in 3 moves\nmoves (side 2): b1 a1 b2"
    )


def test_boardsize_changes_the_board_and_clears_it() -> None:
    engine = GtpEngine("random", side=3, seed=0)
    ok(engine, "play b a1")
    ok(engine, "boardsize 5")
    assert engine.board.side == 5 and engine.state.history == []
    assert ok(engine, "showboard").split("\n")[1].startswith("5 ")
    ok(engine, "play b i1")  # a cell of side 5, not of side 4
    ok(engine, "boardsize 4 4")  # HexGui's two-number form, when the numbers agree
    assert engine.board.side == 4 and engine.state.history == []
    assert "not a cell of the side-4 board" in fails(engine, "play b i1")


def test_boardsize_refused_by_an_agent_that_supports_one_side() -> None:
    with pytest.raises(ValueError, match="trained on side 5, not side 10"):
        GtpEngine("gtp-fixed5")
    engine = GtpEngine("gtp-fixed5", side=5)
    ok(engine, "play b a1")
    message = fails(engine, "boardsize 9")
    assert message.startswith("unacceptable size 9") and "trained on side 5" in message
    assert engine.board.side == 5 and engine.state.move_count == 1  # nothing changed
    ok(engine, "boardsize 5")
    assert engine.state.move_count == 0
    assert ok(engine, "genmove b") == "a1"


def test_network_agents_over_gtp(tmp_path) -> None:
    """A checkpoint's net plays legal moves and refuses board sizes it was not trained on."""
    from tiny import write_tiny_checkpoint  # imports torch: only for this test

    path = write_tiny_checkpoint(tmp_path / "net.pt", side=3)
    for spec in (f"net:{path},device=cpu", f"mcts:{path}:4,device=cpu"):
        engine = GtpEngine(spec, side=3, seed=0)
        message = fails(engine, "boardsize 4")
        assert message.startswith("unacceptable size 4") and "side-3" in message
        reference = GameState(side=3)
        while not reference.is_over:
            move = ok(engine, "genmove " + ("b" if reference.to_move == BLUE else "y"))
            reference.play(move)
        assert ok(engine, "final_score") == ("B+" if reference.winner == BLUE else "Y+")


def test_quit() -> None:
    engine = GtpEngine("random", side=3)
    assert engine.handle("9 quit") == "=9 \n\n" and engine.quit_requested
    # GTP: quit never fails; its extra words are answered as ignored, not dropped unseen.
    engine = GtpEngine("random", side=3)
    assert engine.handle("4 quit now please") == "=4 ignored extra arguments: 'now please'\n\n"
    assert engine.quit_requested


# ---------------------------------------------------------------------- preprocessing
LONG = 3 * MAX_LINE


@pytest.mark.parametrize(
    "line",
    [
        "#" + "x" * LONG,
        " " * LONG,
        "\t" * LONG,
        "\x00" * LONG + "# a comment",
        " \r\x7f\x1b" * LONG,
        "   # " + "\xff" * LONG,
    ],
)
def test_blank_and_comment_lines_get_no_response_whatever_their_length(line: str) -> None:
    """GTP discards lines empty after preprocessing: a length limit does not make them count."""
    assert GtpEngine("random", side=3).handle(line) == ""
    stdout = io.BytesIO()
    serve(GtpEngine("random", side=3), io.BytesIO(line.encode() + b"\n1 name\n"), stdout)
    assert stdout.getvalue() == b"=1 trapy_rl\n\n"


@pytest.mark.parametrize(
    "line, response",
    [
        ("name" + " " * LONG, "= trapy_rl"),  # the length is the command's, not the line's
        ("name #" + "x" * LONG, "= trapy_rl"),
        ("\x00" * LONG + "7 name", "=7 trapy_rl"),
        ("7" + " " * LONG + "name\t\t", "=7 trapy_rl"),
        ("x" * MAX_LINE, "? unknown command 'xxxxxxxx"),
        ("x" * (MAX_LINE + 1), "? line too long"),
        ("7 play b " + "a" * LONG, f"?7 line too long (more than {MAX_LINE} characters); ignored"),
        ("7 " + " ".join(["b2"] * MAX_LINE), "?7 line too long"),
        ("8" * (MAX_LINE + 1) + " name", "? line too long"),  # no id is longer than a command
    ],
)
def test_long_lines_by_handle_and_by_stream(line: str, response: str) -> None:
    """A stream is read in pieces and keeps only the start of a long line; both answer alike."""
    answer = GtpEngine("random", side=3).handle(line)
    assert answer.startswith(response) and RESPONSE.fullmatch(answer) and len(answer) < 200
    stdout = io.BytesIO()
    serve(GtpEngine("random", side=3), io.BytesIO(line.encode() + b"\n"), stdout)
    assert stdout.getvalue().decode() == answer


# ---------------------------------------------------------------------- any input
COMMAND_WORDS = [*REQUIRED, "b", "y", "blue", "yellow", "swap", "resign", "a1", "b2", "c1", "3"]
WORD = st.one_of(st.sampled_from(COMMAND_WORDS), st.text(max_size=8))
LINE = st.one_of(
    st.text(max_size=40),
    st.lists(WORD, min_size=1, max_size=4).map(" ".join),
    st.builds(lambda i, words: f"{i} {' '.join(words)}", st.integers(0, 99), st.lists(WORD)),
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(lines=st.lists(LINE, max_size=25))
def test_any_input_gets_a_well_formed_response(lines: list[str]) -> None:
    engine = GtpEngine("random", side=2, seed=0)
    for line in lines:
        if engine.quit_requested:
            break
        response = engine.handle(line)
        assert response == "" or RESPONSE.fullmatch(response), (line, response)
        assert "internal error" not in response
        # The game stays the one its history describes.
        replay = GameState.from_moves(engine.state.history, engine.board)
        np.testing.assert_array_equal(replay.stones, engine.state.stones)
        assert engine.state.winner == replay.winner or engine.state.resigned


# ---------------------------------------------------------------------- streams and pipes
def responses(data: bytes) -> list[str]:
    text = data.decode("utf-8")
    assert text.endswith("\n\n") or not text
    parts = [part + "\n\n" for part in text[:-2].split("\n\n")] if text else []
    for part in parts:
        assert RESPONSE.fullmatch(part), repr(part)
    return parts


# ---------------------------------------------------------------------- fuzzing
def gtp_words(line: str) -> list[str]:
    """The words of a line by the GTP 2 specification (section 3.1), written out from it."""
    kept = "".join(c for c in line.split("\n")[0] if c == "\t" or not (c < " " or c == "\x7f"))
    return [word for word in kept.split("#")[0].replace("\t", " ").split(" ") if word]


FUZZ_WORDS = [w for w in REQUIRED if w != "quit"] + (
    "b y blue yellow B Yellow swap resign pass a1 b2 c1 e1 j10 zz9 2 3 5 32 33 0 -1 1.5"
).split()
ODD = [*"\t\x00\x07\x1b\r\x7f\x85\xa0\u2003\u2028\u3000\ufeff\ufffd#é１٣İ😀", " # "]
ALPHABET = [chr(c) for c in range(32, 127)] + ODD
BAD_BYTES = [b"\xff", b"\xfe", b"\xc3", b"\xe2\x82", b"\xed\xa0\x80", b"\xf4\x90\x80\x80"]


def fuzz_line(rng: random.Random) -> bytes:
    """One line: a command of real and odd words, noise, blank or comment lines, long lines,
    ids of every shape; some with bytes that are not UTF-8. Never a newline inside."""
    roll = rng.random()
    if roll < 0.25:  # well formed, so that games are played, undone, resized and ended
        colour, cell = rng.choice("by"), rng.choice(Board(5).names)
        words = rng.choice(
            [
                ["play", colour, cell],
                ["play", colour, cell],
                ["play", colour, rng.choice(["swap", "resign"])],
                ["genmove", colour],
                ["genmove", colour],
                ["boardsize", str(rng.choice([2, 3, 3, 4, 5, 32]))],
                ["undo"],
                ["showboard"],
                ["final_score"],
                ["clear_board"],
            ]
        )
        line = " ".join(words)
    elif roll < 0.5:
        words = [rng.choice(FUZZ_WORDS) for _ in range(rng.randint(1, 4))]
        if rng.random() < 0.3:
            words.insert(0, rng.choice(["1", "007", "42", "123456789012345678901234567890"]))
        line = "".join(w + rng.choice([" ", "  ", "\t", " \t "]) for w in words)
        for _ in range(rng.choice([0, 0, 1, 3])):
            at = rng.randint(0, len(line))
            line = line[:at] + rng.choice(ODD) + line[at:]
    elif roll < 0.65:
        line = "".join(rng.choices(ALPHABET, k=rng.randint(0, 30)))
    elif roll < 0.8:  # empty after preprocessing
        line = "".join(rng.choices(" \t\x00\r\x7f\x1b", k=rng.randint(0, 20)))
        line += rng.choice(["", "#", "# a comment", "#" + "".join(rng.choices(ALPHABET, k=9))])
    elif roll < 0.9:  # long, around MAX_LINE or far past it
        head = rng.choice(["", "5 ", "name ", "play b ", "#", " " * 50, "\x00" * 50, "5 #"])
        chunk = "".join(rng.choices(ALPHABET + [" "] * 20, k=rng.randint(1, 12)))
        length = rng.choice([MAX_LINE - 1, MAX_LINE, MAX_LINE + 1, MAX_LINE + 3, 3 * MAX_LINE])
        line = head + chunk * (length // len(chunk) + 1)
    else:  # ids of every shape
        line = rng.choice(["1", "-1", "+1", "1.5", "١", "1e3", "0x1", "9" * 30, ""]) + rng.choice(
            ["", " ", " name", "\tname", " NAME", "name", " \x00name", " # x"]
        )
    raw = line.encode("utf-8")
    if rng.random() < 0.05:
        at = rng.randint(0, len(raw))
        raw = raw[:at] + rng.choice(BAD_BYTES) + raw[at:]
    return raw


def test_fuzz_every_line_gets_one_well_framed_response() -> None:
    """12,000 hostile lines, deterministic: through `handle`, every response is framed as GTP
    asks (``=`` or ``?``, the id echoed, one blank line at the end, no control characters) and
    exactly the lines with words get one; `serve`, fed the same bytes as one stream, answers
    the same; the engine is alive at the end and its game is the one its history describes."""
    rng = random.Random(20240605)
    raws: list[bytes] = []
    while len(raws) < 12_000:
        raw = fuzz_line(rng)
        words = gtp_words(raw.decode("utf-8", errors="replace"))
        command = words[1:2] if words and words[0].isascii() and words[0].isdigit() else words
        if command and command[0].lower() == "quit":
            continue  # the end of the session comes last
        raws.append(raw)
    raws += [b"7 name", b"8 quit at last"]

    engine = GtpEngine("random", side=3, seed=0)
    answered = []
    for raw in raws:
        line = raw.decode("utf-8", errors="replace")
        words = gtp_words(line)
        response = engine.handle(line)
        if not words:
            assert response == "", (line[:80], response)
            continue
        assert RESPONSE.fullmatch(response), (line[:80], response[:200])
        ident = words[0] if words[0].isascii() and words[0].isdigit() else ""
        if len(ident) > MAX_LINE:
            ident = ""
        assert response[0] in "=?" and response[1:].startswith(ident + " "), (line[:80], response)
        assert not re.search("[\x00-\x09\x0b-\x1f\x7f]", response), response[:200]
        assert "internal error" not in response and "Traceback" not in response
        answered.append(response)
    assert answered[-2:] == ["=7 trapy_rl\n\n", "=8 ignored extra arguments: 'at last'\n\n"]
    assert engine.quit_requested and len(answered) > 8000
    replay = GameState.from_moves(engine.state.history, engine.board)
    np.testing.assert_array_equal(replay.stones, engine.state.stones)
    assert {r[0] for r in answered} == {"=", "?"}

    stdout = io.BytesIO()
    serve(GtpEngine("random", side=3, seed=0), io.BytesIO(b"\n".join(raws) + b"\n"), stdout)
    assert responses(stdout.getvalue()) == answered


def test_serve_over_byte_streams_with_bad_input() -> None:
    engine = GtpEngine("random", side=3, seed=0)
    too_long = b"2 play b " + b"x" * (3 * MAX_LINE) + b"\n"  # dropped, read in pieces
    data = (
        b"1 name\r\n"
        b"\n"
        b"# a comment\n"
        b"\xff\xfe\x00\x01 garbage\n" + too_long + b"3 play b b2\n"
        b"4 genmove y\n"
        b"\x1b[A\n"
        b"5 showboard"  # the last line has no newline
    )
    stdout = io.BytesIO()
    serve(engine, io.BytesIO(data), stdout)
    answers = responses(stdout.getvalue())
    assert answers[0] == "=1 trapy_rl\n\n"
    assert answers[1].startswith("? unknown command")
    assert answers[2] == f"?2 line too long (more than {MAX_LINE} characters); ignored\n\n"
    assert answers[3] == "=3 \n\n"
    assert answers[4].startswith("=4 ")
    assert answers[5].startswith("? unknown command")
    assert answers[6].startswith("=5 \n3 ") and "blue to move (move 3)" in answers[6]
    assert len(answers) == 7


def test_serve_stops_at_quit() -> None:
    for line, answer in [
        (b"quit", b"= \n\n"),
        (b"2 quit now", b"=2 ignored extra arguments: 'now'\n\n"),
    ]:
        engine = GtpEngine("random", side=3, seed=0)
        stdout = io.BytesIO()
        serve(engine, io.BytesIO(line + b"\nname\n"), stdout)
        assert stdout.getvalue() == answer


def gtp_process(*args: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "trapy_rl.gtp", *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


def test_pipe_conversation_with_bad_input() -> None:
    script = [
        b"protocol_version",
        b"boardsize 3",
        b"play b b2",
        b"play b c1",  # out of turn
        b"10 genmove y",
        b"\x00\x80\xff\xfe",  # binary junk
        b"y" * (2 * MAX_LINE),  # a very long line
        b"play",  # missing arguments
        b"undo",
        b"undo",
        b"undo",  # nothing left to undo
        b"showboard",
    ]
    process = gtp_process("random", "--seed", "3")
    out, err = process.communicate(b"\n".join(script) + b"\n", timeout=60)  # EOF, no quit
    assert process.returncode == 0, err.decode()
    assert err == b""
    answers = responses(out)
    assert len(answers) == len(script)
    assert "".join(answer[0] for answer in answers) == "===?=???==?="
    assert answers[3] == "? it is yellow's turn (move 2), not blue's\n\n"
    assert answers[4].startswith("=10 ")
    empty = "3   . . .\n2  . . . .\n1 . . . . .\n  a b c d e"
    assert answers[-1] == f"= \n{empty}\nblue to move (move 1)\nmoves (side 3): none\n\n"


def test_pipe_answers_each_command_before_the_next_is_sent() -> None:
    """A controller waits for each response: the engine must flush after every one."""
    process = gtp_process("random", "--side", "3", "--seed", "0")
    watchdog = threading.Timer(60, process.kill)  # a hang ends in a failure, not forever
    watchdog.start()
    try:

        def ask(line: str) -> str:
            process.stdin.write(line.encode() + b"\n")
            process.stdin.flush()
            lines = []
            while True:
                got = process.stdout.readline().decode()
                assert got, "the engine stopped answering"
                if got == "\n":
                    return "".join(lines)
                lines.append(got)

        reference = GameState(side=3)
        while not reference.is_over:
            colour = "b" if reference.to_move == BLUE else "y"
            answer = ask(f"genmove {colour}")
            assert answer.startswith("= ")
            reference.play(answer[2:].strip())
        assert ask("final_score") == ("= B+\n" if reference.winner == BLUE else "= Y+\n")
        assert ask("quit") == "= \n"
        assert process.wait(timeout=60) == 0
    finally:
        watchdog.cancel()
        process.kill()
        process.communicate()


def test_command_line_errors(capsys: pytest.CaptureFixture[str]) -> None:
    for argv, reason in [
        (["nosuchagent"], "unknown agent spec 'nosuchagent'"),
        (["random", "--side", "1"], f"side must be 2 to {MAX_SIDE}, got 1"),
        (["random", "--side", "ten"], "invalid int value: 'ten'"),
        (["uct:many"], "simulations 'many' is not an integer"),
    ]:
        with pytest.raises(SystemExit) as exit_info:
            main(argv)
        assert exit_info.value.code == 2
        assert reason in capsys.readouterr().err
