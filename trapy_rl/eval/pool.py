"""The rating pool: fixed opponents whose strength does not drift, rated once on one scale.

A net is rated by playing the pool's members from the start set (`trapy_rl.eval.starts`) and
fitting its Elo with the members' ratings held (`fit_elo(fixed=...)`): numbers from different
runs and different days land on the same scale, random play at 0. Head-to-head matches between
nets cannot give that: their results cycle (`trapy_rl.eval.cycles`).

A pool file (JSON; the side-10 pool ships as ``trapy_rl/eval/data/pool_side10.json``) holds
the members, their ratings with the calibration's 95% intervals, and how they were measured:

    {"side": 10, "members": [{"spec": "random", "elo": 0.0, "low": 0.0, "high": 0.0}, ...],
     "games": 40, "seed": 0, "note": "...how and when..."}

`calibrate_pool` makes one: a round robin of the members from the start set, random anchored
at 0 (``python -m trapy_rl.eval.pool --side 10 random uct:200 uct:1000 uct:5000``), or a ladder
(each member against the next two, ``--ladder``) or a chain (the next one, ``--chain``); with
``held`` it extends a pool, new members fitted with the old ones' ratings held
(``--chain --extend default uct:5000 mcts:pool_a:50 ...``).

`rate_against_pool` plays every member; `rate_adaptively` spends its games where they say the
most, against the member nearest the agent's current estimate, and stops once the agent's
interval is narrow enough (`AdaptiveSettings`): a game against an equal carries about four
times the information of one against a member the agent beats nine times in ten, so a rating on
a long ladder stays cheap. `rate_each_adaptively` rates several agents so, as one tournament.

Shapes: M members.
"""

from __future__ import annotations

import dataclasses
import importlib.resources
import itertools
import json
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from trapy_rl.errors import ArgumentParser, reported
from trapy_rl.eval.arena import MatchResult
from trapy_rl.eval.cache import ResultCache, flip_result
from trapy_rl.eval.elo import EloRatings, fit_elo
from trapy_rl.eval.report import plot_ladder
from trapy_rl.eval.starts import load_starts
from trapy_rl.eval.stats import Z_95
from trapy_rl.eval.tournament import TournamentResult, play_tournament
from trapy_rl.game.board import Board
from trapy_rl.provenance import machine

__all__ = [
    "AdaptiveRating",
    "AdaptiveSettings",
    "Pool",
    "PoolMatch",
    "PoolMember",
    "calibrate_pool",
    "load_pool",
    "pool_rating",
    "rate_adaptively",
    "rate_against_pool",
    "rate_each_adaptively",
    "rating_from_cache",
]

_FILE = "pool_side{side}.json"


@dataclasses.dataclass(frozen=True)
class PoolMember:
    """One fixed opponent: its agent spec and its rating (Elo, random at 0) with the 95%
    interval of the calibration."""

    spec: str
    elo: float
    low: float
    high: float


@dataclasses.dataclass(frozen=True)
class PoolMatch:
    """One match of a pool's calibration: ``a`` won ``wins`` of ``games`` against ``b``."""

    a: str
    b: str
    games: int
    wins: int


@dataclasses.dataclass(frozen=True)
class Pool:
    """The members of a side's pool and how they were rated.

    Attributes:
        side: the board side.
        members: [M] the members, weakest first.
        games: games per pair in the calibration.
        seed: the calibration's tournament seed.
        note: how, when and where it was measured.
        matches: the calibration's matches (of pools calibrated since they were recorded).
    """

    side: int
    members: tuple[PoolMember, ...]
    games: int
    seed: int
    note: str
    matches: tuple[PoolMatch, ...] = ()

    def neighbour_scores(self) -> list[tuple[str, str, float | None]]:
        """For each pair of members adjacent in rating, (weaker, stronger, the stronger's
        measured score against the weaker), None where they did not meet: what says whether
        each gap of the ladder is measured (scores well inside 0 and 1) or a convention."""
        scores = []
        for weaker, stronger in itertools.pairwise(self.members):
            games = wins = 0
            for match in self.matches:
                if (match.a, match.b) == (stronger.spec, weaker.spec):
                    games, wins = games + match.games, wins + match.wins
                elif (match.a, match.b) == (weaker.spec, stronger.spec):
                    games, wins = games + match.games, wins + match.games - match.wins
            scores.append((weaker.spec, stronger.spec, wins / games if games else None))
        return scores

    def as_ratings(self) -> EloRatings:
        """The members' ratings and intervals and the calibration's games as one fit, the
        first member the anchor: what `plot_ladder` draws of a whole pool, an extended one
        included (whose earlier members were held, not refitted, by the extension)."""
        index = {member.spec: i for i, member in enumerate(self.members)}
        wins = np.zeros((len(index), len(index)), dtype=np.int64)  # [M, M]
        for match in self.matches:
            if match.a in index and match.b in index:
                wins[index[match.a], index[match.b]] += match.wins
                wins[index[match.b], index[match.a]] += match.games - match.wins
        elo, low, high = (np.array([getattr(m, key) for m in self.members]) for key in
                          ("elo", "low", "high"))  # fmt: skip
        return EloRatings(
            names=tuple(index), ratings=elo, stderr=(high - low) / (2 * Z_95), lower=low,
            upper=high, wins=wins, anchor=0, prior_games=0.0,
        )  # fmt: skip

    @property
    def ratings(self) -> dict[str, float]:
        """{spec: Elo} of the members."""
        return {member.spec: member.elo for member in self.members}

    def select(self, specs: Sequence[str] | None) -> Pool:
        """The pool of the chosen members (None or empty: all).

        Raises:
            ValueError: naming a spec that is not a member.
        """
        if not specs:
            return self
        unknown = [spec for spec in specs if spec not in self.ratings]
        if unknown:
            known = ", ".join(self.ratings)
            raise ValueError(f"{unknown} not in the side-{self.side} pool (members: {known})")
        chosen = tuple(member for member in self.members if member.spec in specs)
        return dataclasses.replace(self, members=chosen)

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping, source: str = "pool") -> Pool:
        """From `to_dict`'s form (a ValueError names the file and what is wrong)."""
        try:
            members = tuple(PoolMember(**member) for member in data["members"])
            pool = cls(
                side=int(data["side"]),
                members=members,
                games=int(data["games"]),
                seed=int(data["seed"]),
                note=str(data.get("note", "")),
                matches=tuple(PoolMatch(**match) for match in data.get("matches", ())),
            )
        except (KeyError, TypeError, ValueError) as error:
            raise ValueError(f"{source}: not a rating pool ({error})") from None
        if not pool.members:
            raise ValueError(f"{source}: a rating pool needs members")
        return pool


def load_pool(pool: str | Path, *, side: int) -> Pool:
    """The pool ``"default"`` (shipped for ``side``) or a pool file.

    Raises:
        ValueError: when there is no pool for the side, or the file is not a pool of it.
    """
    if str(pool) == "default":
        shipped = importlib.resources.files("trapy_rl.eval") / "data" / _FILE.format(side=side)
        if not shipped.is_file():
            raise ValueError(
                f"no rating pool ships for side {side}: make one with "
                f"python -m trapy_rl.eval.pool --side {side} --out FILE random uct:200 ..."
            )
        text, source = shipped.read_text(encoding="utf-8"), f"the side-{side} pool"
    else:
        path = Path(pool)
        if not path.is_file():
            raise ValueError(f"{path}: no such rating pool file")
        text, source = path.read_text(encoding="utf-8"), str(path)
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise ValueError(f"{source}: not JSON ({error})") from None
    result = Pool.from_dict(data, source)
    if result.side != side:
        raise ValueError(f"{source} is a pool of side {result.side}, not {side}")
    return result


def calibrate_pool(
    specs: Sequence[str],
    *,
    board: Board,
    num_games: int = 40,
    seed: int = 0,
    mode: str = "round_robin",
    held: Pool | None = None,
    cache_path: str | Path | None = None,
    progress: bool = False,
    note: str = "",
) -> tuple[Pool, TournamentResult]:
    """Rate the members from the start set, the first (random) at 0: by a round robin, or
    with ``mode="ladder"`` (members weakest first) each against the next two, or with
    ``mode="chain"`` each against the next one.

    With ``held``, the specs that are its members keep their ratings and intervals, the others
    are fitted on its scale (their intervals widened by the largest of the held members
    played, whose ratings the fit takes as exact), and the pool returned holds all of
    ``held``'s members and the new ones: a ladder extended above its top without playing its
    lower members again.

    Raises:
        ValueError: when ``held`` is of another side or none of its members is among specs.
    """
    fixed = None
    if held is not None:
        if held.side != board.side:
            raise ValueError(f"the pool is of side {held.side}, the board of side {board.side}")
        fixed = {spec: elo for spec, elo in held.ratings.items() if spec in specs}
        if not fixed:
            raise ValueError(f"none of {list(specs)} is a member of the pool to extend")
    result = play_tournament(
        list(specs),
        board=board,
        num_games=num_games,
        seed=seed,
        mode=mode,
        starts=load_starts(board),
        cache_path=cache_path,
        anchor=specs[0],
        fixed=fixed,
        progress=progress,
    )
    ratings = result.ratings
    members = {member.spec: member for member in (held.members if held else ())}
    # The fit holds the held members exact; a new member is as uncertain as the held ones it
    # hangs from besides, as in one fit of the whole chain: their largest variance is added.
    hung = max(((m.high - m.low) / (2 * Z_95) for m in members.values() if m.spec in specs),
               default=0.0)  # fmt: skip
    for i, spec in enumerate(ratings.names):
        if spec not in members:
            elo = float(ratings.ratings[i])
            width = Z_95 * float(np.hypot(ratings.stderr[i], hung))
            members[spec] = PoolMember(
                spec=spec,
                elo=round(elo, 1),
                low=round(elo - width, 1),
                high=round(elo + width, 1),
            )
    ordered = tuple(sorted(members.values(), key=lambda member: member.elo))
    played = tuple(PoolMatch(m.agent_a, m.agent_b, m.games, m.wins) for m in result.matches)
    if held is not None:
        note = f"{held.note} Extended: {note}"
        played = held.matches + played
    pool = Pool(
        side=board.side, members=ordered, games=num_games, seed=seed, note=note, matches=played
    )
    return pool, result


def rate_against_pool(
    specs: Sequence[str],
    pool: Pool,
    *,
    board: Board,
    num_games: int = 40,
    seed: int = 0,
    cache_path: str | Path | None = None,
    progress: bool = False,
) -> TournamentResult:
    """Each spec against each pool member from the start set, rated with the pool held.

    Args:
        specs: the agents to rate (not members).
        pool: the opponents and their fixed ratings.
        board: the pool's board.
        num_games: games per agent and member (pairs from the start set, colours exchanged).
        seed: the tournament seed: it seeds the agents and picks the starts used.
        cache_path: the match cache (see `trapy_rl.eval.cache`).
        progress: a progress bar over all games.

    Returns:
        The matches and the ratings: the members' as given, the agents' fitted on that scale.
    """
    if board.side != pool.side:
        raise ValueError(f"the pool is of side {pool.side}, the board of side {board.side}")
    clash = [spec for spec in specs if spec in pool.ratings]
    if clash:
        raise ValueError(f"{clash} are pool members; a member is not rated against the pool")
    members = list(pool.ratings)
    return play_tournament(
        [*members, *specs],
        board=board,
        num_games=num_games,
        seed=seed,
        mode="baselines",
        baselines=members,
        starts=load_starts(board),
        cache_path=cache_path,
        fixed=pool.ratings,
        progress=progress,
    )


def pool_rating(matches: Mapping[str, MatchResult], pool: Pool) -> EloRatings:
    """The rating of one agent from its matches against pool members, the pool held.

    Args:
        matches: {member spec: the agent's match against it (agent a = the agent)}.
        pool: the pool (its members' ratings are held).

    Returns:
        The fit; the agent is the last name, ``"agent"``.
    """
    members = list(matches)
    pool = pool.select(members)
    m = len(members)
    wins = np.zeros((m + 1, m + 1), dtype=np.int64)  # [M + 1, M + 1], the agent last
    for i, spec in enumerate(members):
        wins[m, i] = matches[spec].wins
        wins[i, m] = matches[spec].games - matches[spec].wins
    return fit_elo([*members, "agent"], wins, fixed=pool.ratings)


def rating_from_cache(spec: str, pool: Pool, cache_path: str | Path) -> EloRatings | None:
    """The rating of ``spec`` refitted, without playing, from its matches in a match cache
    against the pool's members (summed over seeds; matches with others are left out): a
    rating made on an earlier calibration moved onto the current one.

    Returns:
        The fit, the agent last (as `pool_rating`); None when the cache holds no match of
        ``spec`` against a member.
    """
    matches: dict[str, MatchResult] = {}
    members = pool.ratings
    for match in ResultCache(cache_path).matches_of(spec, side=pool.side):
        if match.agent_b in members:
            earlier = matches.get(match.agent_b)
            matches[match.agent_b] = match if earlier is None else _summed(earlier, match)
    return pool_rating(matches, pool) if matches else None


@dataclasses.dataclass(frozen=True)
class AdaptiveSettings:
    """How `rate_adaptively` spends its games; ``trapy-eval mode=benchmark``'s ``adaptive``.

    Attributes:
        target: stop once the agent's 95% interval is at most +-target Elo.
        games_per_step: games of each step, one match from the start set (even, >= 2).
        max_games: stop after this many games in all (an agent beyond the pool's top or
            bottom member never reaches the target).
        start: the Elo the first step aims at, the member nearest it (None: the middle
            member); an agent whose strength is roughly known skips the steps that climb to it.

    >>> AdaptiveSettings()
    AdaptiveSettings(target=100.0, games_per_step=20, max_games=400, start=None)
    >>> AdaptiveSettings(games_per_step=3)
    Traceback (most recent call last):
    ...
    ValueError: games_per_step must be even and >= 2, got 3
    """

    target: float = 100.0
    games_per_step: int = 20
    max_games: int = 400
    start: float | None = None

    def __post_init__(self) -> None:
        if not (self.target > 0 and np.isfinite(self.target)):
            raise ValueError(f"target must be a finite Elo > 0, got {self.target}")
        if self.games_per_step < 2 or self.games_per_step % 2:
            raise ValueError(f"games_per_step must be even and >= 2, got {self.games_per_step}")
        if not self.games_per_step <= self.max_games <= 100_000:
            raise ValueError(
                f"max_games must be between games_per_step ({self.games_per_step}) and "
                f"100,000, got {self.max_games}"
            )
        if self.start is not None and not np.isfinite(self.start):
            raise ValueError(f"start must be a finite Elo or None, got {self.start}")


@dataclasses.dataclass(frozen=True)
class AdaptiveRating:
    """An agent rated by `rate_adaptively`.

    Attributes:
        spec: the agent.
        ratings: the fit on the pool's scale; the agent is the last name, ``"agent"``.
        matches: {member spec: the agent's games against it, summed over the steps}.
        steps: [(member spec, games)] in the order played.
        converged: the interval reached the target (else the game budget ran out first,
            as it does for an agent beyond the pool's top or bottom member).
        fresh: the members against which a step was played now (not read from the cache).
    """

    spec: str
    ratings: EloRatings
    matches: dict[str, MatchResult]
    steps: tuple[tuple[str, int], ...]
    converged: bool
    fresh: frozenset[str] = frozenset()

    @property
    def elo(self) -> float:
        return float(self.ratings.ratings[-1])

    @property
    def half_width(self) -> float:
        """Half the width of the agent's 95% interval, in Elo."""
        return float(self.ratings.upper[-1] - self.ratings.lower[-1]) / 2

    @property
    def games(self) -> int:
        return sum(match.games for match in self.matches.values())


def rate_adaptively(
    spec: str,
    pool: Pool,
    *,
    board: Board,
    settings: AdaptiveSettings = AdaptiveSettings(),
    seed: int = 0,
    cache_path: str | Path | None = None,
    progress: bool = False,
) -> AdaptiveRating:
    """Rate one agent on the pool, each step against the member nearest its estimate.

    The first step plays the member nearest ``settings.start`` (the middle member when it is
    None); each later one plays the member whose rating is nearest the agent's estimate so far
    (ties: the one played least), so an agent that wins every game climbs the ladder step by
    step. Every step is a match of
    ``settings.games_per_step`` games from the start set, colours exchanged, with a seed of its
    own (other starts); it stops at ``settings.target`` or ``settings.max_games``.

    Args:
        spec: the agent (not a member).
        pool: the members and their fixed ratings.
        board: the pool's board.
        settings: the target and the game budget.
        seed: the first step's seed; step k uses ``seed + k``.
        cache_path: the match cache (see `trapy_rl.eval.cache`).
        progress: a progress bar over each step's games.

    Raises:
        ValueError: for a spec that is a member, or a board of another side.
    """
    if board.side != pool.side:
        raise ValueError(f"the pool is of side {pool.side}, the board of side {board.side}")
    if spec in pool.ratings:
        raise ValueError(f"{spec!r} is a pool member; a member is not rated against the pool")
    matches: dict[str, MatchResult] = {}
    steps: list[tuple[str, int]] = []
    fresh: set[str] = set()
    if settings.start is None:
        member = pool.members[len(pool.members) // 2]
    else:
        member = min(pool.members, key=lambda m: abs(m.elo - settings.start))
    while True:
        result = rate_against_pool(
            [spec],
            pool.select([member.spec]),
            board=board,
            num_games=settings.games_per_step,
            seed=seed + len(steps),
            cache_path=cache_path,
            progress=progress,
        )
        if result.played:
            fresh.add(member.spec)
        (match,) = result.matches
        match = match if match.agent_a == spec else flip_result(match)
        earlier = matches.get(member.spec)
        matches[member.spec] = match if earlier is None else _summed(earlier, match)
        steps.append((member.spec, match.games))
        ratings = pool_rating(matches, pool)
        half_width = float(ratings.upper[-1] - ratings.lower[-1]) / 2
        converged = half_width <= settings.target
        games = sum(m.games for m in matches.values())
        if converged or games + settings.games_per_step > settings.max_games:
            return AdaptiveRating(spec, ratings, matches, tuple(steps), converged, frozenset(fresh))
        estimate = float(ratings.ratings[-1])
        counts = {name: match.games for name, match in matches.items()}
        member = min(pool.members, key=lambda m: (abs(m.elo - estimate), counts.get(m.spec, 0)))


def rate_each_adaptively(
    specs: Sequence[str],
    pool: Pool,
    *,
    board: Board,
    settings: AdaptiveSettings = AdaptiveSettings(),
    seed: int = 0,
    cache_path: str | Path | None = None,
    progress: bool = False,
) -> tuple[TournamentResult, tuple[AdaptiveRating, ...]]:
    """`rate_adaptively` for each spec, and all of them as one tournament against the pool.

    Returns:
        The tournament (each agent's matches summed per member, agent a = the agent; the
        ratings fitted with the pool held, members first, as `rate_against_pool` names them)
        and each agent's `AdaptiveRating`, in the order of ``specs``.
    """
    rated = tuple(
        rate_adaptively(
            spec,
            pool,
            board=board,
            settings=settings,
            seed=seed,
            cache_path=cache_path,
            progress=progress,
        )
        for spec in specs
    )
    members = list(pool.ratings)
    names = [*members, *specs]
    index = {name: i for i, name in enumerate(names)}
    wins = np.zeros((len(names), len(names)), dtype=np.int64)  # [M + agents, M + agents]
    matches = []
    for rating in rated:
        for member, match in rating.matches.items():
            wins[index[rating.spec], index[member]] += match.wins
            wins[index[member], index[rating.spec]] += match.games - match.wins
            matches.append(match)
    result = TournamentResult(
        specs=tuple(names),
        matches=tuple(matches),
        ratings=fit_elo(names, wins, fixed=pool.ratings),
        played=sum(len(rating.fresh) for rating in rated),
        num_games=settings.games_per_step,
        side=board.side,
        seed=int(seed),
    )
    return result, rated


def _summed(a: MatchResult, b: MatchResult) -> MatchResult:
    """Two matches of the same agents as one: their counts added (seeds and starts dropped)."""
    counts = (
        "games",
        "wins",
        "games_as_blue",
        "wins_as_blue",
        "games_as_yellow",
        "wins_as_yellow",
        "swaps",
        "total_moves",
    )
    added = {name: getattr(a, name) + getattr(b, name) for name in counts}
    # At most: steps of other seeds start mostly, not always, from other positions.
    known = a.distinct_games is not None and b.distinct_games is not None
    distinct = a.distinct_games + b.distinct_games if known else None
    return dataclasses.replace(a, **added, seed=None, starts=0, distinct_games=distinct)


def main(argv: Sequence[str] | None = None) -> None:
    """Calibrate a pool: ``python -m trapy_rl.eval.pool --side 10 random uct:200 ...``."""
    parser = ArgumentParser(
        prog="python -m trapy_rl.eval.pool", description="Rate a rating pool's members."
    )
    parser.add_argument("specs", nargs="+", help="the members, random (the anchor) first")
    parser.add_argument("--side", type=int, default=10)
    parser.add_argument("--games", type=int, default=40)
    parser.add_argument("--seed", type=int, default=0)
    pairs = parser.add_mutually_exclusive_group()
    pairs.add_argument(
        "--ladder", action="store_true", help="members weakest first, each against the next two"
    )
    pairs.add_argument(
        "--chain", action="store_true", help="members weakest first, each against the next one"
    )
    parser.add_argument(
        "--extend",
        default=None,
        help="a pool ('default' or a file) whose members among the specs keep their ratings",
    )
    parser.add_argument("--cache", type=Path, default=None)
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--plot", type=Path, default=None, help="a PNG of the ladder")
    args = parser.parse_args(argv)
    board = Board(args.side)
    held = None if args.extend is None else load_pool(args.extend, side=args.side)
    options = f"--side {args.side} --games {args.games} --seed {args.seed}"
    mode = "ladder" if args.ladder else "chain" if args.chain else "round_robin"
    options += f" --{mode}" * (mode != "round_robin") + (f" --extend {args.extend}" if held else "")
    command = " ".join(["python -m trapy_rl.eval.pool", options, *args.specs])
    note = f"{command}; {machine()}"
    pool, result = calibrate_pool(
        args.specs,
        board=board,
        num_games=args.games,
        seed=args.seed,
        mode=mode,
        held=held,
        cache_path=args.cache,
        progress=True,
        note=note,
    )
    out = args.out or Path(__file__).parent / "data" / _FILE.format(side=args.side)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(pool.to_dict(), indent=2) + "\n", encoding="utf-8")
    print(result.ratings.table())
    print(out)
    if args.plot:  # the whole pool, the held members of an extended one too
        print(plot_ladder(pool.as_ratings(), args.plot))


if __name__ == "__main__":
    with reported("python -m trapy_rl.eval.pool"):  # a bad spec or pool file: one line
        main()
