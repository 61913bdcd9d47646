#!/usr/bin/env node
// A bot for `python -m workers.bridge --command`: one turn a line on stdin, one action a line on stdout.
// It plays a random legal action of any game; a real bot reads turn.view (its seat's view) to choose.
const readline = require("node:readline");

const turns = readline.createInterface({ input: process.stdin });
turns.on("line", (line) => {
  const turn = JSON.parse(line); // {turn, game, seat, view, legal, deadline}
  const action = turn.legal[Math.floor(Math.random() * turn.legal.length)];
  console.error(`${turn.turn}: ${turn.game}, seat ${turn.seat}, ${turn.legal.length} legal actions`);
  process.stdout.write(JSON.stringify(action) + "\n");
});
