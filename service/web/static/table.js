// What the play page and the replay viewer share: the seats, the table and the result of a view.
import { h, words } from './dom.js';
import { gameParts, isFullView } from './games.js';
import { t } from './i18n.js';

/** Naming seats of a view: "Ana", "greedy bot 1", "seat 3". */
export function seatNamer(seats) {
  const names = new Map((seats ?? []).map((s) => [s.seat, s.name]));
  return (seat) => (seat === null || seat === undefined ? 'nobody' : names.get(seat) ?? `seat ${seat}`);
}

/** The context the game renderers get. */
export function viewContext(view, you = null) {
  return { seats: view.seats ?? [], name: seatNamer(view.seats), you };
}

function handSize(view, seat) {
  const t = view.table ?? {};
  if (Array.isArray(t.hand_sizes)) return t.hand_sizes[seat];
  if (Array.isArray(t.players)) return t.players[seat]?.hand_size;
  if (Array.isArray(t.hands)) return t.hands[seat]?.length;
  return undefined;
}

/** The seats with their scores, who is to act, who deals, who is you, who won. */
export function seatsEl(view, you = null) {
  const toAct = new Set(view.to_act ?? []);
  const winners = new Set(view.result?.winners ?? []);
  const dealer = view.table?.dealer;
  const rows = (view.seats ?? []).map((s) => {
    const marks = [];
    if (s.seat === you) marks.push('you');
    if (toAct.has(s.seat)) marks.push('to act');
    if (s.seat === dealer && view.status !== 'finished') marks.push('dealer');
    if (winners.has(s.seat)) marks.push('winner');
    const size = handSize(view, s.seat);
    const kind = s.kind === 'bot' ? `bot, ${s.level ?? 'greedy'}` : 'person';
    return h('li', { class: `seat${toAct.has(s.seat) ? ' acting' : ''}${s.seat === you ? ' me' : ''}${winners.has(s.seat) ? ' won' : ''}`, 'data-seat': s.seat },
      h('span', { class: 'who' }, s.name),
      h('span', { class: 'kind' }, ` (${kind})`),
      h('span', { class: 'score' }, ` · ${s.score} points`),
      size !== undefined ? h('span', { class: 'size' }, ` · ${size} cards`) : null,
      marks.length ? h('span', { class: 'marks' }, ` · ${marks.join(', ')}`) : null);
  });
  return h('section', { class: 'block seats', 'aria-label': 'Seats' }, h('h2', {}, 'Seats'), h('ul', {}, rows));
}

/** The seats around the table: name, score, cards held, to act, and what each did last. */
export function seatRing(view, you = null, lastOf = () => '') {
  const toAct = new Set(view.to_act ?? []);
  const winners = new Set(view.result?.winners ?? []);
  const dealer = view.table?.dealer;
  const seats = view.seats ?? [];
  const order = you === null ? seats : [...seats.slice(you + 1), ...seats.slice(0, you + 1)];
  return h('ul', { class: 'ring', 'aria-label': t('seats.title') }, order.map((s) => {
    const marks = [];
    if (s.seat === you) marks.push(t('seats.you'));
    if (toAct.has(s.seat)) marks.push(t('seats.toAct'));
    if (s.seat === dealer && view.status !== 'finished') marks.push(t('seats.dealer'));
    if (winners.has(s.seat)) marks.push(t('seats.winner'));
    const size = handSize(view, s.seat);
    const last = lastOf(s.seat);
    return h('li', { class: `seat-box${toAct.has(s.seat) ? ' acting' : ''}${s.seat === you ? ' me' : ''}${winners.has(s.seat) ? ' won' : ''}`, 'data-seat': s.seat },
      h('span', { class: 'who' }, s.name),
      h('span', { class: 'kind' }, s.kind === 'bot' ? t('seats.bot', { level: s.level ?? 'greedy' }) : t('seats.person')),
      h('span', { class: 'score' }, t('seats.points', { n: s.score })),
      size !== undefined ? h('span', { class: 'size' }, t('seats.cards', { n: size })) : null,
      marks.length ? h('span', { class: 'marks' }, marks.join(' · ')) : null,
      last ? h('span', { class: 'did' }, last) : null);
  }));
}

/** One line about the game: round, phase, version. */
export function factsLine(view) {
  const parts = [`round ${view.round}`, words(view.phase).toLowerCase(), `version ${view.version}`];
  if (view.stacked) parts.push('stacked decks');
  return h('p', { class: 'facts' }, parts.join(' · '));
}

/** The result of a finished game. */
export function resultEl(view) {
  if (!view.result) return null;
  const name = seatNamer(view.seats);
  const winners = view.result.winners.map(name).join(' and ');
  return h('section', { class: 'block result', 'aria-label': 'Result' },
    h('h2', {}, 'Game over'),
    h('p', { class: 'winners' }, `${winners} won.`),
    h('ol', {}, view.result.totals.map((total, seat) => h('li', {}, `${name(seat)}: ${total} points`))));
}

/** The table and, with a seat, its own hand, of a view: [table, hand or null]. */
export function tableEl(view, you = null) {
  const parts = gameParts(view.game);
  const ctx = viewContext(view, you);
  const table = h('section', { class: 'block table', 'aria-label': 'Table' },
    h('h2', {}, isFullView(view) ? 'The table, every card shown' : 'The table'),
    parts.table(view, ctx));
  const hand = view.you && parts.hand(view, ctx);
  return [table, hand ? h('section', { class: 'block your-hand', 'aria-label': 'Your hand' }, h('h2', {}, 'Your hand'), hand) : null];
}
