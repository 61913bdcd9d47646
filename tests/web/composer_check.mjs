// Checks the move composer (service/api/web_page/static/composer.js) on positions dumped by
// tests/unit/test_web_composer.py: every legal action can be built by picks, and no sequence of
// picks builds anything but a legal action. Usage: node composer_check.mjs composer.mjs positions.json
import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';

const [composerPath, positionsPath] = process.argv.slice(2);
const { Composer, OK } = await import(pathToFileURL(composerPath).href);
const positions = JSON.parse(readFileSync(positionsPath, 'utf8'));

let seed = 20;
function random() { // a small seeded generator: the same walks every run
  seed = (seed * 1103515245 + 12345) % 2147483648;
  return seed / 2147483648;
}
const choose = (items) => items[Math.floor(random() * items.length)];
function shuffled(items) {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i -= 1) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}

const failures = [];
const fail = (position, text) => { if (failures.length < 20) failures.push(`${position.game} #${position.id}: ${text}`); };
let built = 0;
let walks = 0;
let refused = 0;
const WALKS = 12;
const MAX_PICKS = 60;

for (const position of positions) {
  const legal = position.legal;
  const texts = new Set(legal.map((a) => JSON.stringify(a)));
  // 0. every pick of every action is something the page draws, a card of the hand no more often than held
  new Composer(position.game, legal, position.view).steps.forEach((steps, index) => {
    const counts = {};
    for (const pick of steps.flat()) counts[pick] = (counts[pick] ?? 0) + 1;
    for (const [pick, count] of Object.entries(counts)) {
      if ((position.shown[pick] ?? 0) < count) fail(position, `${JSON.stringify(legal[index])} needs ${pick} ${count}x, the page shows it ${position.shown[pick] ?? 0}x`);
    }
  });
  // 1. every legal action can be built: its picks, each group in a random order, then ok or its choice
  legal.forEach((action, index) => {
    const composer = new Composer(position.game, legal, position.view);
    for (const group of composer.steps[index]) {
      for (const pick of shuffled(group)) {
        if (!composer.pick(pick)) { fail(position, `pick ${pick} refused while building ${JSON.stringify(action)}`); return; }
      }
    }
    const { options } = composer.state();
    if (!composer.action) {
      const settle = options.has(`choice:${index}`) ? `choice:${index}` : OK;
      if (!composer.pick(settle)) { fail(position, `${settle} refused for ${JSON.stringify(action)}`); return; }
    }
    if (JSON.stringify(composer.action) !== JSON.stringify(action)) {
      fail(position, `built ${JSON.stringify(composer.action)} instead of ${JSON.stringify(action)}`);
      return;
    }
    built += 1;
  });
  // 2. random pick sequences always end in a legal action, never in a dead end
  const everyPick = [...new Set(new Composer(position.game, legal, position.view).steps.flat(2))];
  for (let w = 0; w < WALKS && legal.length; w += 1) {
    const composer = new Composer(position.game, legal, position.view);
    let picks = 0;
    while (!composer.action) {
      const options = [...composer.state().options];
      if (options.length === 0) { fail(position, `dead end after ${JSON.stringify(composer.picks)}`); break; }
      const stray = choose([...everyPick, 'hand:XX', 'grid:99', OK]);
      if (!composer.state().options.has(stray)) {
        const before = JSON.stringify(composer.picks);
        if (composer.pick(stray) || JSON.stringify(composer.picks) !== before) fail(position, `stray pick ${stray} taken`);
        refused += 1;
      }
      if (random() < 0.1 && composer.picks.length) composer.unpick(choose(composer.picks)); // change of mind
      else composer.pick(choose(options));
      picks += 1;
      if (picks > MAX_PICKS) { fail(position, `no end after ${MAX_PICKS} picks`); break; }
    }
    if (composer.action && !texts.has(JSON.stringify(composer.action))) fail(position, `built an illegal ${JSON.stringify(composer.action)}`);
    if (composer.action && composer.pick(choose(everyPick))) fail(position, 'a pick was taken after the action was complete');
    walks += 1;
  }
}

console.log(JSON.stringify({ positions: positions.length, built, walks, refused, failures }));
process.exit(failures.length ? 1 : 0);
