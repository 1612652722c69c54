"""Agent specs: the grammar, the built-in kinds, errors, and registering new kinds."""

from __future__ import annotations

import numpy as np
import pytest

from trapy_rl.agents import (
    Agent,
    AgentSpec,
    RandomAgent,
    RolloutMCTSAgent,
    known_agent_kinds,
    parse_agent,
    register_agent_kind,
)
from trapy_rl.agents import kinds as agent_kinds
from trapy_rl.game import BatchGame, Board

BOARD = Board(4)


def test_grammar() -> None:
    spec = AgentSpec.parse(" mcts:/tmp/run:7/ckpt.pt:400,c_puct=2 , temperature=0.5")
    assert spec.kind == "mcts"
    assert spec.args == ("/tmp/run", "7/ckpt.pt", "400")
    assert spec.options == {"c_puct": "2", "temperature": "0.5"}
    # A path with ':' is rejoined by the factory that expects one.
    assert spec.rest(0).rsplit(":", 1) == ["/tmp/run:7/ckpt.pt", "400"]
    assert AgentSpec.parse("RANDOM").kind == "random"


@pytest.mark.parametrize(
    "text, message",
    [
        ("", "non-empty"),
        ("uct:5,c_puct", "key=value"),
        ("uct:5,c_puct=1,c_puct=2", "given twice"),
    ],
)
def test_grammar_errors(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        AgentSpec.parse(text)


def test_builtin_kinds() -> None:
    random_agent = parse_agent("random", board=BOARD, seed=0)
    assert isinstance(random_agent, RandomAgent) and random_agent.name == "random"
    assert isinstance(random_agent, Agent)
    assert parse_agent("random,swap_probability=0.25", board=BOARD).swap_probability == 0.25

    uct = parse_agent("uct:1000", board=BOARD, seed=0)
    assert isinstance(uct, RolloutMCTSAgent)
    assert uct.settings.num_simulations == 1000 and uct.name == "uct:1000"
    tuned = parse_agent("uct:200,c_puct=2,num_rollouts=4", board=BOARD)
    assert (
        tuned.settings.num_simulations,
        tuned.settings.c_puct,
        tuned.evaluator.num_rollouts,
    ) == (200, 2.0, 4)
    assert parse_agent("uct", board=BOARD).settings.num_simulations == 1000
    assert set(known_agent_kinds()) >= {"random", "uct"}


@pytest.mark.parametrize(
    "text, message",
    [
        ("alphazero:3", r"unknown agent spec 'alphazero:3': known kinds are .*random.*uct"),
        ("uct:many", r"'uct:many'.*'many' is not an integer"),
        ("uct:0", r"'uct:0'.*num_simulations must be >= 1"),
        ("uct:10:20", r"'uct:10:20': expected"),
        ("uct:10,cpuct=2", r"unknown option 'cpuct' for 'uct' \(known options: c_puct"),
        ("uct:10,c_puct=big", r"c_puct='big' is not a valid float"),
        ("random:3", r"'random:3': expected"),
        ("random,swap_probability=2", r"swap_probability must be in \[0, 1\]"),
    ],
)
def test_bad_specs_are_named(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_agent(text, board=BOARD)


def test_registering_a_new_kind(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(agent_kinds, "_REGISTRY", dict(agent_kinds._REGISTRY))
    built = {}

    def make_net(spec: AgentSpec, *, board: Board, seed: int | None) -> Agent:
        spec.check_args(2, 99, "netsearch:PATH:SIMULATIONS")
        path, simulations = spec.rest(0).rsplit(":", 1)
        options = spec.typed_options({"c_puct": 1.0, "greedy": False})
        built.update(path=path, simulations=int(simulations), board=board, seed=seed, **options)
        return RandomAgent(seed, name=spec.text)

    # A kind no module registers, so the test holds whatever else was imported before it.
    register_agent_kind("netsearch", make_net, usage="netsearch:PATH:SIMULATIONS[,c_puct=C]")
    agent = parse_agent("netsearch:runs/a:b.pt:400,c_puct=2,greedy=yes", board=BOARD, seed=5)
    assert agent.name == "netsearch:runs/a:b.pt:400,c_puct=2,greedy=yes"
    assert built == dict(
        path="runs/a:b.pt", simulations=400, board=BOARD, seed=5, c_puct=2.0, greedy=True
    )
    assert "netsearch" in known_agent_kinds()
    with pytest.raises(ValueError, match="already registered"):
        register_agent_kind("netsearch", make_net, usage="")
    with pytest.raises(ValueError, match="lower-case word"):
        register_agent_kind("My:Kind", make_net, usage="")


def test_agents_act_on_a_batch() -> None:
    from trapy_rl.game import BatchGame

    batch = BatchGame(3, BOARD)
    for spec in ("random", "uct:8"):
        actions = parse_agent(spec, board=BOARD, seed=1).act(batch, np.array([0, 2]))
        assert actions.shape == (2,) and np.issubdtype(actions.dtype, np.integer)


def test_a_spec_chooses_gumbel_search() -> None:
    board = Board(3)
    agent = parse_agent("uct:40,search=gumbel,max_considered=4", board=board, seed=0)
    assert agent.settings.search == "gumbel" and agent.settings.max_considered == 4
    batch = BatchGame(6, board)
    actions = agent.act(batch, np.arange(6))
    assert batch.legal_mask()[np.arange(6), actions].all()
    with pytest.raises(ValueError, match="search must be one of"):
        parse_agent("uct:40,search=minimax", board=board)


@pytest.mark.parametrize(
    "text",
    ["runs/a,b", "x:1:2", 'say "hi"', "it's", "back\\slash", " padded ", "k=v", "", "plain"],
)
def test_quoted_arguments_carry_any_text(text: str) -> None:
    from trapy_rl.agents.base import quote_arg

    spec = AgentSpec.parse(f"mcts:{quote_arg(text)}:400,device={quote_arg(text)},c_puct=2")
    assert spec.args == (text, "400")
    assert spec.options == {"device": text, "c_puct": "2"}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('mcts:"open:400', "unterminated quote"),
        ('mcts:"a"b:400', "text after the closing quote"),
        ("uct:200,c_puct", "not of the form key=value"),
    ],
)
def test_bad_quotes_name_the_problem(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        AgentSpec.parse(text)
