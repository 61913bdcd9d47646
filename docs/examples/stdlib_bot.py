"""A whole bot in Python's standard library: it waits for its turns and plays the last legal action of each.
Usage: python stdlib_bot.py URL TOKEN  (URL: the service, best its stream tier, e.g. http://127.0.0.1:8001)"""

import json
import sys
import time
import urllib.error
import urllib.request


def call(url, token, method, path, body=None, key=None):
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url + path, data, method=method)
    request.add_header("Authorization", f"Bearer {token}")
    request.add_header("Content-Type", "application/json")
    if key:
        request.add_header("Idempotency-Key", key)  # a resent action gets the first answer
    try:
        with urllib.request.urlopen(request, timeout=40) as answer:
            return answer.status, json.load(answer)
    except urllib.error.HTTPError as error:
        return error.code, json.load(error)
    except OSError:  # no answer: the service is restarting, or the network is away
        return 0, {}


def choose(view, legal):
    return legal[-1]  # a real bot reads its seat's view here


def play(url, token):
    while True:
        status, answer = call(url, token, "GET", "/v1/bots/me/turns?wait=30")
        if status != 200:
            time.sleep(1)  # the service is away or busy (a problem says why): ask again
        for turn in answer.get("turns", []) if status == 200 else []:
            body = {**choose(turn["view"], turn["legal"]), "expected_version": turn["version"]}
            call(url, token, "POST", f"/v1/games/{turn['game_id']}/actions", body, key=turn["turn"])


if __name__ == "__main__":
    play(sys.argv[1], sys.argv[2])
