#!/usr/bin/env bash
# Start Redis (unless REDIS_URL is given), one RQ worker and the API; Ctrl-C stops them all.
# REDIS_URL may name a Redis Cluster (redis+cluster://host:port); the bot queue then needs
# QUEUE_REDIS_URL, a plain Redis (see README, "Running on Redis Cluster").
set -euo pipefail
cd "$(dirname "$0")/.."
VENV="${VENV:-.venv}"
PORT="${PORT:-8000}"
HOST="${HOST:-127.0.0.1}"
pids=()

case "${REDIS_URL:-}" in
  redis+cluster://* | rediss+cluster://*)
    if [ -z "${QUEUE_REDIS_URL:-}" ]; then
      echo "REDIS_URL names a Redis Cluster: set QUEUE_REDIS_URL to a plain Redis for the bot queue" >&2
      echo "(RQ uses multi-key transactions that a cluster refuses), e.g. QUEUE_REDIS_URL=redis://127.0.0.1:6379/0" >&2
      exit 2
    fi
    ;;
esac

stop_all() {
  trap - INT TERM EXIT
  echo "Stopping..."
  # API and worker first, Redis last, so nothing loses its store mid-request.
  for ((i = ${#pids[@]} - 1; i >= 0; i--)); do
    kill -TERM "${pids[i]}" 2>/dev/null || true
    wait "${pids[i]}" 2>/dev/null || true
  done
}
trap stop_all INT TERM EXIT

if [ -z "${REDIS_URL:-}" ]; then
  scripts/ensure-redis.sh
  mkdir -p var/redis
  redis_port="${REDIS_PORT:-$("$VENV/bin/python" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')}"
  redis-server --port "$redis_port" --bind 127.0.0.1 --dir "$PWD/var/redis" \
    --appendonly yes --appendfsync always --save "" --logfile "$PWD/var/redis/redis.log" &
  pids+=($!)
  export REDIS_URL="redis://127.0.0.1:$redis_port/0"
  for _ in $(seq 50); do
    redis-cli -p "$redis_port" ping >/dev/null 2>&1 && break
    sleep 0.1
  done
  echo "Started redis-server on port $redis_port (data in var/redis, append-only file on, fsync always)"
else
  echo "Using Redis at $REDIS_URL"
fi
if [ -n "${QUEUE_REDIS_URL:-}" ]; then
  export QUEUE_REDIS_URL
  echo "Bot queue on Redis at $QUEUE_REDIS_URL"
fi

"$VENV/bin/python" -m workers &
pids+=($!)
# gevent: each request is a greenlet, so open live streams and long-polls hold no OS thread
# (service/watch.py); up to 10,000 open connections per process.
"$VENV/bin/gunicorn" --bind "$HOST:$PORT" --worker-class gevent --workers "${WEB_WORKERS:-2}" --worker-connections 10000 \
  --graceful-timeout 5 --access-logfile - 'service.app:create_app()' &
pids+=($!)

for _ in $(seq 100); do
  "$VENV/bin/python" -c "import urllib.request as u; u.urlopen('http://$HOST:$PORT/healthz', timeout=1)" 2>/dev/null && break
  sleep 0.2
done
echo
echo "Card table is up: point your client at http://$HOST:$PORT"
echo "  try: curl http://$HOST:$PORT/v1/catalog"
echo "  or open http://$HOST:$PORT/ in a browser to play and replay games"
echo "Press Ctrl-C to stop."
wait -n "${pids[@]}" || true
