"""The Agent protocol, and agents built from short text specs such as ``uct:200,c_puct=2``.

An agent picks one action for the player to move in each of several games of one `BatchGame`:

    actions = agent.act(batch, games)   # games [n] int -> actions [n] int64

It never mutates ``batch``, it may choose the swap where legal, and agents that keep state
between moves (a reused search tree, say) also have ``reset(games)``, called when those games
start over.

Specs: ``kind``, then positional arguments after colons, then keyword options after commas:

    random                  a uniformly random legal move, swap half the time
    uct:1000                rollout MCTS, 1000 simulations per move
    uct:200,c_puct=2        the same with an option
    mcts:PATH:400           a network with search
    openspiel:mcts:1000     OpenSpiel's MCTS bot (needs the 'openspiel' extra)

The kinds and `parse_agent`, which builds an agent from its spec, are in
`trapy_rl.agents.kinds`; a kind's factory receives the parsed `AgentSpec`.
An argument or option value in double or single quotes holds any text, ``,`` and ``:``
included (inside, a backslash escapes the quote or itself); `quote_arg` writes one, so a path of
any spelling travels in a spec. Unquoted, the last argument may still contain ``:`` when the
factory asks for it with `AgentSpec.rest` (paths).

>>> spec = AgentSpec.parse("uct:200,c_puct=2")
>>> spec.kind, spec.args, spec.options
('uct', ('200',), {'c_puct': '2'})
>>> AgentSpec.parse(f"mcts:{quote_arg('runs/a,b:c')}:400").args
('runs/a,b:c', '400')
"""

from __future__ import annotations

import dataclasses
from typing import Any, Protocol, runtime_checkable

import numpy as np

from trapy_rl.game.batch import BatchGame

__all__ = [
    "Agent",
    "AgentSpec",
    "quote_arg",
    "reset_agent",
]


@runtime_checkable
class Agent(Protocol):
    """Chooses moves for the player to move in some games of a batch.

    Attributes:
        name: a short label for tables and game records (usually the agent's spec).
    """

    name: str

    def act(self, batch: BatchGame, games: np.ndarray) -> np.ndarray:
        """One legal action for each game in ``games``.

        Args:
            batch: the games; not modified.
            games: [n] int, indices of unfinished games of ``batch``.

        Returns:
            [n] int64 action indices (``batch.board.swap_action`` is the swap).
        """
        ...


def reset_agent(agent: Agent, games: np.ndarray) -> None:
    """Call ``agent.reset(games)`` if the agent has state to forget; a no-op otherwise."""
    reset = getattr(agent, "reset", None)
    if callable(reset):
        reset(np.asarray(games, dtype=np.intp))


@dataclasses.dataclass(frozen=True)
class AgentSpec:
    """A parsed agent spec: ``kind:arg:arg,key=value,key=value``.

    Attributes:
        text: the spec as given (stripped).
        kind: the registered kind, lower case ('random', 'uct', ...).
        args: the positional arguments, as strings.
        options: the keyword options, as strings (keys in the order given).
    """

    text: str
    kind: str
    args: tuple[str, ...]
    options: dict[str, str]

    @classmethod
    def parse(cls, text: str) -> AgentSpec:
        if not isinstance(text, str) or not text.strip():
            raise ValueError(f"an agent spec is a non-empty string, got {text!r}")
        text = text.strip()
        head, *option_parts = _split_unquoted(text, ",")
        kind, *args = _split_unquoted(head, ":")
        options: dict[str, str] = {}
        for part in option_parts:
            pieces = _split_unquoted(part, "=", maxsplit=1)
            key = pieces[0].strip()
            if len(pieces) < 2 or not key.isidentifier():
                raise ValueError(
                    f"agent spec {text!r}: option {part!r} is not of the form key=value"
                )
            if key in options:
                raise ValueError(f"agent spec {text!r}: option {key!r} given twice")
            options[key] = _unquote(pieces[1], text)
        return cls(text, kind.strip().lower(), tuple(_unquote(a, text) for a in args), options)

    def rest(self, start: int) -> str:
        """The positional arguments from ``start`` on, joined again with ':' (for paths)."""
        return ":".join(self.args[start:])

    def check_args(self, low: int, high: int, usage: str) -> None:
        """Raise ValueError unless there are between ``low`` and ``high`` positional args."""
        if not low <= len(self.args) <= high:
            raise ValueError(f"agent spec {self.text!r}: expected {usage}")

    def typed_options(self, defaults: dict[str, Any]) -> dict[str, Any]:
        """The options converted to the types of ``defaults`` (int, float, bool or str).

        Raises:
            ValueError: naming an unknown option (and listing the known ones) or a bad value.
        """
        converted = {}
        for key, value in self.options.items():
            if key not in defaults:
                known = ", ".join(sorted(defaults)) or "none"
                raise ValueError(
                    f"agent spec {self.text!r}: unknown option {key!r} for {self.kind!r} "
                    f"(known options: {known})"
                )
            converted[key] = _convert(value, defaults[key], f"agent spec {self.text!r}: {key}")
        return converted


def _convert(value: str, default: Any, where: str) -> Any:
    try:
        if isinstance(default, bool):
            lowered = value.lower()
            if lowered in ("1", "true", "yes", "on"):
                return True
            if lowered in ("0", "false", "no", "off"):
                return False
            raise ValueError(value)
        if isinstance(default, int):
            return int(value)
        if isinstance(default, float):
            return float(value)
    except ValueError:
        raise ValueError(f"{where}={value!r} is not a valid {type(default).__name__}") from None
    return value


_QUOTES = "\"'"
_NEEDS_QUOTES = set(",:=\"'\\")


def quote_arg(text: str) -> str:
    """``text`` as one spec argument: as it is when it can be, else in double quotes."""
    if text and text == text.strip() and not _NEEDS_QUOTES & set(text):
        return text
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _split_unquoted(text: str, separator: str, maxsplit: int = -1) -> list[str]:
    """``text`` split at ``separator`` where it stands outside quotes; quotes are kept."""
    parts, start, quote, i = [], 0, "", 0
    while i < len(text):
        ch = text[i]
        if quote:
            if ch == "\\":
                i += 1  # the escaped character is part of the quoted text
            elif ch == quote:
                quote = ""
        elif ch in _QUOTES:
            quote = ch
        elif ch == separator and (maxsplit < 0 or len(parts) < maxsplit):
            parts.append(text[start:i])
            start = i + 1
        i += 1
    parts.append(text[start:])
    return parts


def _unquote(part: str, spec: str) -> str:
    """A spec argument or value without its quotes (and escapes), stripped of spaces."""
    part = part.strip()
    if not part or part[0] not in _QUOTES:
        return part
    quote, out, i = part[0], [], 1
    while i < len(part):
        ch = part[i]
        if ch == "\\" and i + 1 < len(part):
            out.append(part[i + 1])
            i += 2
            continue
        if ch == quote:
            if part[i + 1 :].strip():
                raise ValueError(f"agent spec {spec!r}: text after the closing quote in {part!r}")
            return "".join(out)
        out.append(ch)
        i += 1
    raise ValueError(f"agent spec {spec!r}: unterminated quote in {part!r}")
