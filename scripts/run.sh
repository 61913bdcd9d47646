#!/usr/bin/env bash
# Start Redis (unless REDIS_URL is given), WORKERS RQ workers (default 1) for people's bots, one more
# for the random and greedy bots only (all at nice WORKER_PRIORITY, default 10), MATCH_WORKERS (default one more
# than the cores) for matches' quick bots (at MATCH_PRIORITY, default idle), the API on PORT and the stream tier (the watchers' own gunicorn:
# STREAM_PORT, default PORT + 1; STREAM_WORKERS processes, default half the cores rounded up; at
# STREAM_PRIORITY, default idle) under supervisord (scripts/supervisord.conf), which starts again any child
# that dies; Ctrl-C or SIGTERM stops them all.
# REDIS_URL may name a Redis Cluster (redis+cluster://host:port); the bot queue then needs
# QUEUE_REDIS_URL, a plain Redis (see docs/operations.md, "Running on Redis Cluster").
# VAR_DIR (default var/) holds Redis's data (redis/), the metrics files (metrics/) and supervisord's
# files (run/: its log, pid and socket for `supervisorctl -s unix://$VAR_DIR/run/supervisor.sock status`,
# and make-run.lock: one `make run` per VAR_DIR, see scripts/preflight.py).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$PWD"
VENV="${VENV:-.venv}"
case "$VENV" in /*) ;; *) VENV="$ROOT/$VENV" ;; esac
export ROOT VENV
export PORT="${PORT:-8000}"
export HOST="${HOST:-127.0.0.1}"
export WORKERS="${WORKERS:-1}"
export STREAM_PORT="${STREAM_PORT:-$((PORT + 1))}"
# The stream tier (watchers, bots waiting for turns) follows the machine: half its cores, rounded up.
CORES="$(nproc 2> /dev/null || getconf _NPROCESSORS_ONLN 2> /dev/null || echo 1)"
export STREAM_WORKERS="${STREAM_WORKERS:-$(((CORES + 1) / 2))}"
export MATCH_WORKERS="${MATCH_WORKERS:-$((CORES + 1))}"
MATCH_PRIORITY="${MATCH_PRIORITY:-idle}"
STREAM_PRIORITY="${STREAM_PRIORITY:-idle}"
VAR_DIR="${VAR_DIR:-var}"
mkdir -p "$VAR_DIR"
VAR_DIR="$(cd "$VAR_DIR" && pwd)"

case "$WORKERS" in
  '' | *[!0-9]* | 0) echo "WORKERS must be a whole number of at least 1 (got '$WORKERS')" >&2; exit 2 ;;
esac
case "$STREAM_WORKERS" in
  '' | *[!0-9]* | 0) echo "STREAM_WORKERS must be a whole number of at least 1 (got '$STREAM_WORKERS')" >&2; exit 2 ;;
esac
case "$MATCH_WORKERS" in
  '' | *[!0-9]* | 0) echo "MATCH_WORKERS must be a whole number of at least 1 (got '$MATCH_WORKERS')" >&2; exit 2 ;;
esac
# A CPU priority (the setting's name, its value): the command prefix that runs a process at it. idle
# (SCHED_IDLE: only CPU time no other process wants) or a nice value from 0 to 19.
sched_for() {
  case "$2" in
    idle)
      if command -v chrt > /dev/null; then echo "chrt --idle 0"; else
        echo "chrt (util-linux) not found: $1=idle runs at nice 19 instead of SCHED_IDLE" >&2
        echo "nice -n 19"
      fi
      ;;
    [0-9] | 1[0-9]) echo "nice -n $2" ;;
    *) echo "$1 must be idle or a nice value from 0 to 19 (got '$2')" >&2; return 2 ;;
  esac
}
# The stream tier at idle: a watcher never delays an action on a shared host. The matches' workers at idle:
# a match is work nobody waits for, so it takes only CPU no one else wants (and rests while people play:
# service/play/match_pace.py).
STREAM_SCHED="$(sched_for STREAM_PRIORITY "$STREAM_PRIORITY")" || exit 2
MATCH_SCHED="$(sched_for MATCH_PRIORITY "$MATCH_PRIORITY")" || exit 2
export STREAM_SCHED MATCH_SCHED
# The bot workers' nice value: the API's requests (people waiting on an answer) get the CPU before bot turns
# (a match's, an expert's think) when the two share a host.
WORKER_PRIORITY="${WORKER_PRIORITY:-10}"
case "$WORKER_PRIORITY" in
  [0-9] | 1[0-9]) export WORKER_SCHED="nice -n $WORKER_PRIORITY" ;;
  *) echo "WORKER_PRIORITY must be a nice value from 0 to 19 (got '$WORKER_PRIORITY')" >&2; exit 2 ;;
esac
if [ "$STREAM_PORT" = "$PORT" ]; then
  echo "STREAM_PORT must differ from PORT (both $PORT): the stream tier has its own port" >&2
  exit 2
fi
case "${REDIS_URL:-}" in
  redis+cluster://* | rediss+cluster://*)
    if [ -z "${QUEUE_REDIS_URL:-}" ]; then
      echo "REDIS_URL names a Redis Cluster: set QUEUE_REDIS_URL to a plain Redis for the bot queue" >&2
      echo "(RQ uses multi-key transactions that a cluster refuses), e.g. QUEUE_REDIS_URL=redis://127.0.0.1:6379/0" >&2
      exit 2
    fi
    ;;
esac

export RUN_DIR="$VAR_DIR/run" REDIS_DIR="$VAR_DIR/redis"
if [ -z "${REDIS_URL:-}" ]; then
  REDIS_PORT="${REDIS_PORT:-$("$VENV/bin/python" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')}"
  export REDIS_PORT START_REDIS=true
else
  export REDIS_PORT=0 START_REDIS=false
fi
# One `make run` per VAR_DIR: the lock on fd 9 is held by this script and supervisord (which inherits it)
# until both have ended. Before anything is started or emptied, scripts/preflight.py takes it and checks
# that the ports are free; else it says what is in the way and how to run a second one beside it.
mkdir -p "$RUN_DIR"
exec 9<>"$RUN_DIR/make-run.lock"
"$VENV/bin/python" scripts/preflight.py "$VAR_DIR" 9 || exit 1

mkdir -p "$REDIS_DIR"
# A fresh folder for the processes' metrics files (prometheus-client's multiprocess mode).
export PROMETHEUS_MULTIPROC_DIR="$VAR_DIR/metrics"
rm -rf "$PROMETHEUS_MULTIPROC_DIR"
mkdir -p "$PROMETHEUS_MULTIPROC_DIR"

if [ "$START_REDIS" = true ]; then
  scripts/ensure-redis.sh
  export REDIS_URL="redis://127.0.0.1:$REDIS_PORT/0"
  echo "Starting redis-server on port $REDIS_PORT (data in $REDIS_DIR, append-only file on, fsync always, noeviction)"
else
  echo "Using Redis at $REDIS_URL"
fi
if [ -n "${QUEUE_REDIS_URL:-}" ]; then
  export QUEUE_REDIS_URL
  echo "Bot queue on Redis at $QUEUE_REDIS_URL"
fi

# Redis and the API get SIGTERM should supervisord die (SIGKILL included), where setpriv can ask for it
# (Linux); the workers see to that themselves (workers/__main__.py).
PDEATHSIG=""
if command -v setpriv >/dev/null 2>&1 && setpriv --pdeathsig TERM true 2>/dev/null; then
  PDEATHSIG="setpriv --pdeathsig TERM"
fi
export PDEATHSIG

"$VENV/bin/supervisord" --configuration scripts/supervisord.conf &
supervisor=$!
stopping=""
stop_all() {
  trap - INT TERM
  stopping=yes
  echo "Stopping..."
  kill -TERM "$supervisor" 2>/dev/null || true
}
trap stop_all INT TERM

for _ in $(seq 150); do
  kill -0 "$supervisor" 2>/dev/null || break
  "$VENV/bin/python" -c "import urllib.request as u
for port in ($PORT, $STREAM_PORT): u.urlopen(f'http://$HOST:{port}/healthz', timeout=1)" 2>/dev/null && break
  sleep 0.2
done
if kill -0 "$supervisor" 2>/dev/null; then
  echo
  echo "Card table is up: point your client at http://$HOST:$PORT"
  echo "  the stream tier (its own processes for GET .../stream, .../events?wait= and the bots' /v1/bots/me/turns) listens at http://$HOST:$STREAM_PORT"
  echo "  (route watchers there with a proxy: docs/operations.md, \"The stream tier\"; the API answers them too)"
  echo "  try: curl http://$HOST:$PORT/v1/catalog"
  echo "  or open http://$HOST:$PORT/ in a browser to play and replay games"
  echo "  metrics: http://$HOST:$PORT/metrics; processes: $VENV/bin/supervisorctl -s unix://$RUN_DIR/supervisor.sock status"
  echo "Press Ctrl-C to stop."
fi
# `wait` returns early when a signal's trap runs: wait again until supervisord has stopped every child.
while :; do
  status=0
  wait "$supervisor" || status=$?
  kill -0 "$supervisor" 2>/dev/null || break
done
if [ -z "$stopping" ]; then
  # supervisord ended without being asked to (killed, or it could not start): say so, and fail.
  echo "make run: supervisord ended by itself (exit status $status); its log: $RUN_DIR/supervisord.log" >&2
  [ "$status" -ne 0 ] || status=1
fi
exit "$status"
