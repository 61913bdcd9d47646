// The page's entry: routes (#/, #/play/ID, #/replay/ID/N, #/join/ID/SEAT/TOKEN, #/matches, #/match/ID,
// #/ladder/GAME, #/bot/NAME) and the new-game form.
import { api, ApiError, catalog, heldGames, holdGame, registeredBots } from './api.js';
import { h, replace } from './dom.js';
import { helpEl, ruleAnchor, winsLine } from './help.js';
import { language, LANGUAGES, setLanguage, t } from './i18n.js';
import { BotPage, LadderPage } from './ladder.js';
import { MatchesPage, MatchPage } from './matches.js';
import { botOption, levelWord, optionInput, playerCount, readOptions } from './options.js';
import { fullTitle, PlayPage, title } from './play.js';
import { openForm, ReplayPage, replayIndex } from './replay.js';

const root = document.getElementById('app');
let current = null;

function route() {
  current?.stop?.();
  current = null;
  document.title = t('app.title');
  const parts = location.hash.replace(/^#\/?/, '').split('/').map(decodeURIComponent);
  const [page, id, ...rest] = parts;
  if (page === 'join' && id && rest.length === 2) {
    holdGame(id, null, { [rest[0]]: rest[1] }, Number(rest[0]));
    history.replaceState(null, '', `#/play/${encodeURIComponent(id)}`); // the key leaves the address bar
    return route();
  }
  if (page === 'play' && id) current = new PlayPage(root, id);
  else if (page === 'replay' && id) current = new ReplayPage(root, id, rest[0] ? Number(rest[0]) : null);
  else if (page === 'replay') return replayIndex(root);
  else if (page === 'matches') current = new MatchesPage(root);
  else if (page === 'match' && id) current = new MatchPage(root, id);
  else if (page === 'ladder') current = new LadderPage(root, id);
  else if (page === 'bot' && id) current = new BotPage(root, id);
  else return home();
  current.start();
  return undefined;
}

// ------------------------------------------------------------ the new-game form

const DEFAULT_PLAYERS = 4;
const FIRST_GAME = 'golf';

/** The name a seat gets when none is typed: the form's row label, so the game says what the form said;
 * a registered bot's seat is named after the bot, as the service names it. */
function defaultName(i, kind, level, bot) {
  if (kind !== 'bot') return t('form.player', { n: i + 1 });
  return bot ?? `${level} bot ${i + 1}`;
}

const DEFAULT_LEVEL = 'greedy';

/** Offer `bots` (the game's registered bots) in a seat's bot choice, keeping the choice if it is still offered. */
function offerBots(select, bots) {
  const chosen = select.value;
  select.querySelector('optgroup.registered')?.remove();
  if (bots.length) select.append(h('optgroup', { class: 'registered', label: t('form.registeredBots') }, bots.map(botOption)));
  select.value = chosen;
  if (select.value !== chosen) select.value = DEFAULT_LEVEL;
  select.dispatchEvent(new Event('change'));
}

function seatRow(i, levels, bots) {
  const kind = h('select', { id: `seat-${i}-kind`, class: 'seat-kind' },
    h('option', { value: 'human', selected: i === 0 }, i === 0 ? t('form.you') : t('form.person')),
    h('option', { value: 'bot', selected: i !== 0 }, t('form.bot')));
  const name = h('input', { id: `seat-${i}-name`, maxlength: 40, autocomplete: 'off' });
  const level = h('select', { id: `seat-${i}-level`, class: 'seat-level' },
    h('optgroup', { class: 'house', label: t('form.houseBots') },
      levels.map((l) => h('option', { value: l, selected: l === DEFAULT_LEVEL }, levelWord(l)))));
  const levelField = h('span', { class: 'level-field' }, h('label', { for: `seat-${i}-level` }, t('form.level')), ' ', level);
  const sync = () => {
    levelField.hidden = kind.value !== 'bot';
    name.placeholder = defaultName(i, kind.value, level.value, level.selectedOptions[0]?.dataset.bot);
  };
  kind.addEventListener('change', sync);
  level.addEventListener('change', sync);
  offerBots(level, bots);
  sync();
  return h('li', { class: 'seat-row', 'data-seat': i },
    h('label', { for: `seat-${i}-kind` }, t('form.player', { n: i + 1 })), kind, ' ',
    h('label', { for: `seat-${i}-name`, class: 'visually-hidden' }, t('form.nameOf', { n: i + 1 })), name, ' ', levelField);
}

function readSeats(form, count) {
  const seats = [];
  for (let i = 0; i < count; i += 1) {
    const kind = form.querySelector(`#seat-${i}-kind`).value;
    const choice = form.querySelector(`#seat-${i}-level`);
    const { bot } = choice.selectedOptions[0]?.dataset ?? {};
    const seat = { kind, name: form.querySelector(`#seat-${i}-name`).value.trim() || defaultName(i, kind, choice.value, bot) };
    if (kind === 'bot' && bot) seat.bot = bot;
    else if (kind === 'bot') seat.level = choice.value;
    seats.push(seat);
  }
  return seats;
}

async function home() {
  replace(root, h('p', { class: 'loading' }, t('home.loading')));
  let games;
  try {
    games = await catalog();
  } catch (error) {
    replace(root, h('p', { class: 'alert', role: 'alert' }, t('error.offline')));
    return;
  }
  const gameSelect = h('select', { id: 'game' }, games.map((g) => h('option', { value: g.id, selected: g.id === FIRST_GAME }, fullTitle(g.id))));
  const wins = h('p', { class: 'wins', id: 'wins' });
  const helpBox = h('div', {});
  const players = h('input', { id: 'players', type: 'number', inputmode: 'numeric' });
  const seatList = h('ol', { class: 'seat-rows' });
  const optionBox = h('div', { class: 'options' });
  const seed = h('input', { id: 'seed', maxlength: 128, autocomplete: 'off' });
  const turnSeconds = h('input', { id: 'turn-seconds', type: 'number', min: 1, max: 86400, inputmode: 'numeric', placeholder: t('form.noLimit'), 'aria-describedby': 'turn-seconds-hint' });
  const alert = h('p', { class: 'alert', role: 'alert', id: 'create-error' });
  const submit = h('button', { type: 'submit', id: 'create', class: 'primary' }, t('form.create'));
  const chosen = () => games.find((g) => g.id === gameSelect.value);
  // the registered bots of each game, read once per form (none offered while they load or cannot be read)
  const botsOf = new Map();
  let bots = [];

  const drawSeats = () => {
    const game = chosen();
    const count = playerCount(game, players.value, DEFAULT_PLAYERS);
    const before = seatList.children.length;
    while (seatList.children.length > count) seatList.lastElementChild.remove();
    for (let i = before; i < count; i += 1) seatList.append(seatRow(i, game.bot_levels, bots));
  };
  const drawBots = async (game) => {
    if (!botsOf.has(game)) botsOf.set(game, registeredBots(game).catch(() => { botsOf.delete(game); return []; }));
    const found = await botsOf.get(game);
    if (gameSelect.value !== game) return; // another game was chosen meanwhile
    bots = found;
    for (const select of seatList.querySelectorAll('.seat-level')) offerBots(select, bots);
  };
  const drawGame = () => {
    const game = chosen();
    bots = [];
    for (const select of seatList.querySelectorAll('.seat-level')) offerBots(select, bots);
    drawBots(game.id);
    players.min = String(game.players.min);
    players.max = String(game.players.max);
    const count = playerCount(game, players.value, DEFAULT_PLAYERS);
    players.value = String(count);
    replace(optionBox, game.options.map((option) => optionInput(game.id, option)));
    wins.textContent = winsLine(game.id);
    replace(helpBox, helpEl(game.id));
    drawSeats();
  };
  gameSelect.addEventListener('change', drawGame);
  players.addEventListener('change', drawSeats);

  const form = h('form', { id: 'new-game', class: 'block' },
    h('h2', {}, t('form.title')),
    h('div', { class: 'field' }, h('label', { for: 'game' }, t('form.game')), gameSelect),
    wins,
    h('div', { class: 'field' }, h('label', { for: 'players' }, t('form.players')), players),
    h('fieldset', {}, h('legend', {}, t('form.seats')), seatList),
    h('fieldset', {}, h('legend', {}, t('form.options')), optionBox),
    h('div', { class: 'field' }, h('label', { for: 'turn-seconds' }, t('form.turnSeconds')), turnSeconds,
      h('small', { id: 'turn-seconds-hint' }, t('form.turnSecondsHint'))),
    h('details', {}, h('summary', {}, t('form.seedOptional')),
      h('div', { class: 'field' }, h('label', { for: 'seed' }, t('form.seed')), seed,
        h('small', {}, t('form.seedHint')))),
    alert, submit);
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const game = chosen();
    const body = { game: game.id, seats: readSeats(form, seatList.children.length), options: readOptions(form, game) };
    if (seed.value) body.seed = seed.value;
    if (turnSeconds.value) body.turn_seconds = Number(turnSeconds.value);
    submit.disabled = true;
    alert.textContent = '';
    try {
      const created = await api('/v1/games', { method: 'POST', body });
      const tokens = Object.fromEntries(created.seats.filter((s) => s.token).map((s) => [s.seat, s.token]));
      holdGame(created.id, created.game, tokens);
      location.hash = `#/play/${encodeURIComponent(created.id)}`;
    } catch (error) {
      alert.textContent = error instanceof ApiError && error.status === 0 ? t('error.offline') : t('form.notCreated', { detail: error instanceof ApiError ? error.text : error });
      submit.disabled = false;
    }
  });

  const held = heldGames();
  replace(root, h('div', { class: 'page home' },
    h('h1', {}, t('app.title')),
    h('p', {}, t('home.intro')),
    h('div', { class: 'columns' },
      h('div', { class: 'main-col' }, form),
      h('aside', { class: 'side', 'aria-label': t('home.side') },
        helpBox,
        h('section', { class: 'block' }, h('h2', {}, t('home.replay')), openForm()),
        held.length ? h('section', { class: 'block' }, h('h2', {}, t('home.yourGames')),
          h('ul', {}, held.map((g) => h('li', {}, h('a', { href: `#/play/${encodeURIComponent(g.id)}` }, `${title(g.game)} ${g.id}`), ' · ',
            h('a', { href: `#/replay/${encodeURIComponent(g.id)}` }, t('home.replayOne')))))) : null))));
  drawGame();
}

/** A rule id's link opens that rule in the page's "How to play" (the address keeps its route). */
document.addEventListener('click', (event) => {
  const link = event.target instanceof Element ? event.target.closest('a[data-rule]') : null;
  if (!link) return;
  event.preventDefault();
  const target = document.getElementById(ruleAnchor(link.dataset.rule));
  if (!target) return;
  const panel = target.closest('details');
  if (panel) panel.open = true;
  target.scrollIntoView({ block: 'center' });
  target.focus();
});

/** The header's words and the language switch. */
function header() {
  document.documentElement.lang = language();
  document.querySelector('.skip').textContent = t('nav.skip');
  document.querySelector('.brand').textContent = t('app.title');
  const nav = document.querySelector('.top nav');
  nav.setAttribute('aria-label', t('nav.main'));
  const [newGame, replays, matches, ladder] = nav.querySelectorAll('a');
  newGame.textContent = t('nav.newGame');
  replays.textContent = t('nav.replays');
  matches.textContent = t('nav.matches');
  ladder.textContent = t('nav.ladder');
  let select = document.getElementById('language');
  if (!select) {
    select = h('select', { id: 'language' }, Object.entries(LANGUAGES).map(([code, name]) => h('option', { value: code, lang: code }, name)));
    select.addEventListener('change', () => {
      setLanguage(select.value);
      header();
      route();
    });
    nav.append(h('span', { class: 'lang-switch' }, h('label', { for: 'language', class: 'visually-hidden' }, t('nav.language')), select));
  }
  select.value = language();
  select.previousElementSibling.textContent = t('nav.language');
}

window.addEventListener('hashchange', route);
header();
route();
