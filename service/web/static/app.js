// The page's entry: routes (#/, #/play/ID, #/replay/ID/N, #/join/ID/SEAT/TOKEN) and the new-game form.
import { api, ApiError, catalog, heldGames, holdGame } from './api.js';
import { h, replace } from './dom.js';
import { PlayPage, title } from './play.js';
import { openForm, ReplayPage, replayIndex } from './replay.js';

const root = document.getElementById('app');
let current = null;

function route() {
  current?.stop?.();
  current = null;
  document.title = 'Card table';
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
  else return home();
  current.start();
  return undefined;
}

// ------------------------------------------------------------ the new-game form

const DEFAULT_PLAYERS = 4;

function optionInput(option) {
  const id = `opt-${option.name}`;
  const hint = h('small', { id: `${id}-hint` }, option.description);
  let input;
  if (option.choices) {
    input = h('select', { id, name: option.name }, option.choices.map((c) => h('option', { value: c, selected: c === option.default }, c)));
  } else if (typeof option.default === 'boolean') {
    input = h('input', { id, name: option.name, type: 'checkbox', checked: option.default });
  } else if (Array.isArray(option.default)) {
    input = h('input', { id, name: option.name, type: 'text', value: option.default.join(', '), 'data-list': 'true' });
  } else {
    input = h('input', {
      id, name: option.name, type: 'number', min: option.minimum, max: option.maximum, inputmode: 'numeric',
      value: option.default ?? '', placeholder: option.default === null ? 'automatic' : null,
    });
  }
  input.setAttribute('aria-describedby', `${id}-hint`);
  return h('div', { class: `field${input.type === 'checkbox' ? ' check' : ''}` }, h('label', { for: id }, option.name.replace(/_/g, ' ')), input, hint);
}

/** The options that differ from their defaults. */
function readOptions(form, game) {
  const options = {};
  for (const option of game.options) {
    const input = form.querySelector(`#opt-${option.name}`);
    let value;
    if (input.type === 'checkbox') value = input.checked;
    else if (input.dataset.list) value = input.value.split(/[\s,]+/).filter(Boolean).map(Number);
    else if (input.type === 'number') value = input.value === '' ? null : Number(input.value);
    else value = input.value;
    if (value === null || JSON.stringify(value) === JSON.stringify(option.default)) continue;
    options[option.name] = value;
  }
  return options;
}

function seatRow(i, levels) {
  const kind = h('select', { id: `seat-${i}-kind`, class: 'seat-kind' },
    h('option', { value: 'human', selected: i === 0 }, i === 0 ? 'You' : 'A person'),
    h('option', { value: 'bot', selected: i !== 0 }, 'Bot'));
  const name = h('input', { id: `seat-${i}-name`, maxlength: 40, placeholder: i === 0 ? 'You' : 'name', autocomplete: 'off' });
  const level = h('select', { id: `seat-${i}-level`, class: 'seat-level' }, levels.map((l) => h('option', { value: l, selected: l === 'greedy' }, l)));
  const levelField = h('span', { class: 'level-field' }, h('label', { for: `seat-${i}-level` }, 'level '), level);
  const sync = () => { levelField.hidden = kind.value !== 'bot'; };
  kind.addEventListener('change', sync);
  sync();
  return h('li', { class: 'seat-row', 'data-seat': i },
    h('label', { for: `seat-${i}-kind` }, `Seat ${i + 1} `), kind, ' ',
    h('label', { for: `seat-${i}-name`, class: 'visually-hidden' }, `name of seat ${i + 1}`), name, ' ', levelField);
}

function readSeats(form, count) {
  const seats = [];
  for (let i = 0; i < count; i += 1) {
    const kind = form.querySelector(`#seat-${i}-kind`).value;
    const name = form.querySelector(`#seat-${i}-name`).value.trim();
    const seat = { kind };
    if (name) seat.name = name;
    if (kind === 'bot') seat.level = form.querySelector(`#seat-${i}-level`).value;
    seats.push(seat);
  }
  return seats;
}

async function home() {
  replace(root, h('p', { class: 'loading' }, 'Loading the games…'));
  let games;
  try {
    games = await catalog();
  } catch (error) {
    replace(root, h('p', { class: 'alert', role: 'alert' }, `The service cannot be reached: ${error.text ?? error}`));
    return;
  }
  const gameSelect = h('select', { id: 'game' }, games.map((g) => h('option', { value: g.id }, g.name)));
  const players = h('input', { id: 'players', type: 'number', inputmode: 'numeric' });
  const seatList = h('ol', { class: 'seat-rows' });
  const optionBox = h('div', { class: 'options' });
  const seed = h('input', { id: 'seed', maxlength: 128, autocomplete: 'off' });
  const alert = h('p', { class: 'alert', role: 'alert', id: 'create-error' });
  const submit = h('button', { type: 'submit', id: 'create', class: 'primary' }, 'Create and play');
  const chosen = () => games.find((g) => g.id === gameSelect.value);

  const drawSeats = () => {
    const game = chosen();
    const count = Math.max(game.players.min, Math.min(game.players.max, Number(players.value) || DEFAULT_PLAYERS));
    const before = seatList.children.length;
    while (seatList.children.length > count) seatList.lastElementChild.remove();
    for (let i = before; i < count; i += 1) seatList.append(seatRow(i, game.bot_levels));
  };
  const drawGame = () => {
    const game = chosen();
    players.min = String(game.players.min);
    players.max = String(game.players.max);
    const count = Math.max(game.players.min, Math.min(game.players.max, Number(players.value) || DEFAULT_PLAYERS));
    players.value = String(count);
    replace(optionBox, game.options.map(optionInput));
    drawSeats();
  };
  gameSelect.addEventListener('change', drawGame);
  players.addEventListener('change', drawSeats);

  const form = h('form', { id: 'new-game', class: 'block' },
    h('h2', {}, 'New game'),
    h('div', { class: 'field' }, h('label', { for: 'game' }, 'Game'), gameSelect),
    h('div', { class: 'field' }, h('label', { for: 'players' }, 'Players'), players),
    h('fieldset', {}, h('legend', {}, 'Seats'), seatList),
    h('fieldset', {}, h('legend', {}, 'Options'), optionBox),
    h('details', {}, h('summary', {}, 'Seed (optional)'),
      h('div', { class: 'field' }, h('label', { for: 'seed' }, 'Seed'), seed,
        h('small', {}, 'Leave it empty for a secret seed drawn by the server; a seed you choose makes the deal reproducible but not secret from you.'))),
    alert, submit);
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const game = chosen();
    const body = { game: game.id, seats: readSeats(form, seatList.children.length), options: readOptions(form, game) };
    if (seed.value) body.seed = seed.value;
    submit.disabled = true;
    alert.textContent = '';
    try {
      const created = await api('/v1/games', { method: 'POST', body });
      const tokens = Object.fromEntries(created.seats.filter((s) => s.token).map((s) => [s.seat, s.token]));
      holdGame(created.id, created.game, tokens);
      location.hash = `#/play/${encodeURIComponent(created.id)}`;
    } catch (error) {
      alert.textContent = `Not created: ${error instanceof ApiError ? error.text : error}`;
      submit.disabled = false;
    }
  });

  const held = heldGames();
  replace(root, h('div', { class: 'page home' },
    h('h1', {}, 'Card table'),
    h('p', {}, 'Golf, Rommé, Switch and Go5 against bots or people. Every move is recorded: replay any game and check it.'),
    h('div', { class: 'columns' },
      h('div', { class: 'main-col' }, form),
      h('aside', { class: 'side' },
        h('section', { class: 'block' }, h('h2', {}, 'Replay a game'), openForm()),
        held.length ? h('section', { class: 'block' }, h('h2', {}, 'Your games in this tab'),
          h('ul', {}, held.map((g) => h('li', {}, h('a', { href: `#/play/${encodeURIComponent(g.id)}` }, `${title(g.game)} ${g.id}`), ' · ',
            h('a', { href: `#/replay/${encodeURIComponent(g.id)}` }, 'replay'))))) : null))));
  drawGame();
}

window.addEventListener('hashchange', route);
route();
