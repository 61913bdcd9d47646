"""Every Redis key the service keeps, named here once (docs/storage.md says what each holds).

A game's keys share one hash tag, so they live in one Redis Cluster slot (`game:{<id>}:<name>`):
  events     the stream; entry id `<seq>-0`, field `e` = the record as JSON
  meta       hash: the game's header, its creation facts (service/play/game_header.py encodes it)
  idem       hash: Idempotency-Key answers, kept as long as the game
  recent     list: the internal idempotency fields of the last appends sent without a key
  disputes   stream: disputes filed by seats, entry id `<n>-0`, fields `s` = the seat, `d` = the dispute
  packed     a finished game compacted: its meta and its stream in one compressed value
  snapshots  hash: version -> the game folded to that version
  answers    hash, for a packed game only: name -> an answer made once from the packed value
  ticket:<sha256>  a seat's live-stream ticket, single use, with an expiry
Global keys (each command touches one of them only): the game indexes `games:*`, the counts
`stats:games`, the waiting index `bots:waiting`; and the bot queues' names (RQ's own keys `rq:…`).
"""

from __future__ import annotations

DROPPED_WHEN_PACKED = ("idem", "recent", "snapshots")  # a game's keys, besides its stream and meta, that packing drops
OTHER_GAME_KEYS = ("disputes", "answers")  # a game's keys that stay when it is packed; deleted with the game

ACTIVE_KEY = "games:active"  # service/storage/game_index.py
FINISHED_KEY = "games:finished"
UNPACKED_KEY = "games:unpacked"
GAME_COUNTS_KEY = "stats:games"  # service/storage/game_counts.py
PEOPLE_PLAYING_KEY = "stats:people-playing"  # there while people play (service/play/match_pace.py)
WAITING_KEY = "bots:waiting"  # service/storage/turn_queue.py

BOT_QUEUE = "bots"  # the RQ queue of random and greedy bots, and of turn timeouts ...
EXPERT_QUEUE = "bots-expert"  # ... of expert bots ...
MATCH_QUEUE = "bots-match"  # ... and of the quick bots of matches' games (service/play/loaded_game.py)
BOT_QUEUES = (BOT_QUEUE, EXPERT_QUEUE, MATCH_QUEUE)  # the order a worker on all takes them in: people's bots first


def game_key(game_id: str, name: str) -> str:
    """The game's key `name` (one of those above), under the game's hash tag."""
    return f"game:{{{game_id}}}:{name}"


def events(game_id: str) -> str:
    return game_key(game_id, "events")


def meta(game_id: str) -> str:
    return game_key(game_id, "meta")


def idem(game_id: str) -> str:
    return game_key(game_id, "idem")


def recent(game_id: str) -> str:
    return game_key(game_id, "recent")


def disputes(game_id: str) -> str:
    return game_key(game_id, "disputes")


def packed(game_id: str) -> str:
    return game_key(game_id, "packed")


def snapshots(game_id: str) -> str:
    return game_key(game_id, "snapshots")


def answers(game_id: str) -> str:
    return game_key(game_id, "answers")


def ticket(game_id: str, digest: str) -> str:
    """A live-stream ticket, by the SHA-256 digest of the ticket."""
    return game_key(game_id, f"ticket:{digest}")


def every_game(name: str) -> str:
    """A glob (SCAN's MATCH) over every game's key `name`."""
    return f"game:{{*}}:{name}"


def game_of(key: str) -> str:
    """The game id in one of its keys (`game:{<id>}:<name>`)."""
    return key.partition("{")[2].rpartition("}")[0]


def entry_id(seq: int) -> str:
    """A stream entry's id: `<seq>-0`."""
    return f"{seq}-0"


# Registered bots share one hash tag, so that a registration (the bot's hash, the names and its games'
# indexes) is one script on one Redis Cluster slot:
#   bots:{registry}:names        sorted set, every registered name (score 0: ordered by name)
#   bots:{registry}:bot:<name>   hash: name, games (JSON), description, created_at, token (SHA-256 digest)
#   bots:{registry}:game:<game>  sorted set, the names registered for a game (score 0)
#   bots:{registry}:tokens       hash: a bot token's SHA-256 digest -> the bot's name
#   bots:{registry}:turns:<name> sorted set: the bot's due turns (`<game id>:<version>`) -> when it may be
#                                handed out (epoch ms: now when offered, the lease's end once handed out)
#   bots:{registry}:deadlines:<name>  hash: the bot's due turns -> their deadlines (epoch ms)
#   bots:{registry}:offers       stream, capped: one entry `b` = <name> each time a turn is offered (wakes waiters)
BOT_NAMES_KEY = "bots:{registry}:names"
BOT_TOKENS_KEY = "bots:{registry}:tokens"
BOT_OFFERS_KEY = "bots:{registry}:offers"


def bot(name: str) -> str:
    """A registered bot's hash."""
    return f"bots:{{registry}}:bot:{name}"


def bots_of_game(game: str) -> str:
    """The names of the bots registered for `game`."""
    return f"bots:{{registry}}:game:{game}"


def bot_turns(name: str) -> str:
    """A registered bot's due turns, by when each may be handed out."""
    return f"bots:{{registry}}:turns:{name}"


def bot_deadlines(name: str) -> str:
    """A registered bot's due turns' deadlines."""
    return f"bots:{{registry}}:deadlines:{name}"


# Matches (service/storage/matches.py): a match's keys share its hash tag (`match:{<id>}:<name>`):
#   meta   hash: id, game, options, entrants (JSON), deals, seed, nonce, seed_commitment, status, created_at,
#          client, finished_at, results (JSON, once finished), deal_scores (JSON, once finished: per deal, each
#          entrant's score, null for a deal with no hand scored; the ladder's input, service/play/ladder.py),
#          finished_games and deals_begun (the games noted finished, the deals begun: kept by the scripts that note
#          games, so that a game's end reads none of the others; a match made before they were has neither),
#          deals_opened (every deal below it is done and opened: a reconciler's pass reads the games from there on)
#   games  hash: `<deal>:<rotation>` -> `started` or `finished` (the game's id is `<match id>-<deal>-<rotation>`)
# Global: `matches:all` (every match by creation, ms), `matches:running` (the same, while running),
# `matches:finished:<game>` (a game's finished matches by when they finished, ms: the ladder's order) and
# `matches:embargo` (hash: the id of a match's game whose deal is not done -> `<match id>:<deal>`, C-8).
MATCHES_ALL_KEY = "matches:all"
MATCHES_RUNNING_KEY = "matches:running"
MATCHES_EMBARGO_KEY = "matches:embargo"


def match_key(match_id: str, name: str) -> str:
    """The match's key `name` (meta, games), under the match's hash tag."""
    return f"match:{{{match_id}}}:{name}"


def matches_finished(game: str) -> str:
    """The finished matches of `game`, by when they finished."""
    return f"matches:finished:{game}"
