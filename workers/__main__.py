"""`python -m workers`: one RQ worker for the bot queue, JSON serializer."""

from __future__ import annotations

import logging

import redis
from rq import Queue, SimpleWorker
from rq.serializers import JSONSerializer

from service.dispatch import BOT_QUEUE
from workers.context import redis_url


def main() -> None:
    """Run one worker until stopped; jobs run in this process, so its game cache stays warm."""
    logging.basicConfig(level=logging.INFO, format="%(asctime)s worker %(levelname)s %(message)s")
    connection = redis.Redis.from_url(redis_url())
    queue = Queue(BOT_QUEUE, connection=connection, serializer=JSONSerializer)
    SimpleWorker([queue], connection=connection, serializer=JSONSerializer).work(with_scheduler=False)


if __name__ == "__main__":
    main()
