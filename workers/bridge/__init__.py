"""`python -m workers.bridge`: plays a registered bot's turns over HTTP (the registered bots of the HTTP contract).

It long-polls `GET /v1/bots/me/turns` with the bot's token, has each turn decided by one of three
players (players.py: a Python function, a house level of domain/bots/, or a command in any language
speaking JSON lines) and posts the action with the turn's version as `expected_version` and the turn
id as `Idempotency-Key` (runner.py). It imports nothing from `service/`, so it runs on any machine
with this package installed: the standard library, `domain/` and `rich`.
"""
