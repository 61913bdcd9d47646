// Events as readable lines: "12 · greedy bot 1: put the drawn K♥ at card 2, discarding Q♠".
import { cardShort, parseCard, SUITS } from './cards.js';
import { h, words } from './dom.js';

function isCard(value) {
  return typeof value === 'string' && parseCard(value).kind !== 'unknown';
}

/** Cards as short text: "7♥ 8♥ 9♥". */
const cards = (codes) => (codes ?? []).map(cardShort).join(' ');
const one = (code) => (code ? cardShort(code) : 'a card');
const place = (p) => `card ${Number(p) + 1}`;
const suitName = (s) => SUITS[s]?.name ?? s;
const plural = (n, word) => `${n} ${word}${n === 1 ? '' : 's'}`;

/** Per game and event type: the line after "<seat>: ". */
const PHRASES = {
  golf: {
    CardsRevealed: (d) => `turned up ${d.positions.map(place).join(' and ')}: ${cards(d.cards)}`,
    CardDrawn: () => 'drew from the stock',
    DrawnCardSwapped: (d) => `put the drawn ${one(d.card)} at ${place(d.position)}, discarding ${one(d.replaced)}`,
    DrawnCardDiscarded: (d) => `discarded the drawn ${one(d.card)}${d.flipped === null || d.flipped === undefined ? '' : `, turned up ${place(d.flipped)}: ${one(d.revealed)}`}`,
    DiscardTaken: (d) => `took ${one(d.card)} from the discard for ${place(d.position)}, discarding ${one(d.replaced)}`,
    CardFlipped: (d) => `turned up ${place(d.position)}: ${one(d.card)}`,
    ColumnDiscarded: (d, name) => `${name(d.seat)}'s column ${Number(d.column) + 1} of equal cards is discarded: ${cards(d.cards)}`,
  },
  switch: {
    CardsPlayed: (d) => `played ${cards(d.cards)}${d.suit ? `, calling ${suitName(d.suit)}` : ''}`,
    SuitChosen: (d) => `chose ${suitName(d.suit)}`,
    CardDrawn: (d) => `drew ${plural(d.count ?? 1, 'card')}`,
    PendingDrawTaken: (d) => `took the penalty: drew ${plural(d.count ?? d.pending, 'card')}`,
    Passed: () => 'passed',
  },
  romme: {
    DeckCut: (d) => `cut the deck at card ${d.position}`,
    LuckyGrab: (d, name) => `${name(d.seat)} keeps the lucky grab: ${cards(d.cards)}`,
    HandsDealt: (d) => `hands dealt; ${plural(d.stock_size, 'card')} in the stock`,
    CardDrawn: () => 'drew from the stock',
    DiscardTaken: (d) => `took ${one(d.card)} from the discard into meld ${d.meld}, a ${d.kind}: ${cards(d.cards)}`,
    MeldLaid: (d) => `laid meld ${d.meld}, a ${d.kind}: ${cards(d.cards)}`,
    CardLaidOff: (d) => `laid ${one(d.card)} off on meld ${d.meld}${d.end ? ` at the ${d.end} end` : ''}`,
    JokerSwapped: (d) => `swapped ${one(d.card)} for the joker in meld ${d.meld}`,
    CardDiscarded: (d) => `discarded ${one(d.card)}`,
    WentOut: () => 'went out',
  },
  go5: {
    CardsDrawn: (d) => (d.source === 'discard' ? `took ${one(d.taken)} from the discard and the top of the stock` : 'drew from the stock'),
    StopCardLaid: (d, name) => `${name(d.seat)} got a stop card and laid it down`,
    StockCardReceived: (d, name) => `${name(d.seat)} received the next card of the stock`,
    SetMelded: (d) => `laid set ${d.set} by ${d.by}: ${cards(d.cards)}`,
    CardLaidOff: (d) => `added ${one(d.card)} to set ${d.set}`,
    CardSwapped: (d, name) => `took ${one(d.take)} from set ${d.set} of ${name(d.from_seat)} for ${one(d.give)}, then ${
      d.new_set !== null && d.new_set !== undefined ? `laid set ${d.new_set} by ${d.by}: ${cards(d.cards)}` : `added it to set ${d.onto}`}`,
    StopPlayed: () => 'played a stop card',
    CardDiscarded: (d) => `discarded ${one(d.card)}`,
    Go5Called: (d) => `called Go5: ${one(d.card)} completes set ${d.set}`,
  },
};

/** A value of an event's data as short text (cards written as cards), for events without a phrase. */
function show(value) {
  if (value === null || value === undefined) return '—';
  if (isCard(value)) return cardShort(value);
  if (Array.isArray(value)) return value.map(show).join(' ');
  if (typeof value === 'object') return Object.entries(value).map(([k, v]) => `${words(k).toLowerCase()} ${show(v)}`).join(', ');
  return String(value);
}

function seatList(seats, name) {
  return (seats ?? []).map(name).join(' and ') || 'nobody';
}

/** The text of one event of a game; `name(seat)` names a seat. */
export function eventText(event, name, game) {
  const d = event.data ?? {};
  switch (event.type) {
    case 'GameCreated': return `Game created: ${d.game}, ${d.players} players${d.stacked ? ', stacked decks' : ''}`;
    case 'SeedRevealed': return 'Seed revealed: anyone can now re-deal and check every round';
    case 'RoundStarted': return `Round ${d.round} starts; ${name(d.dealer)} deals${d.start_card ? `; the first card is ${cardShort(d.start_card)}` : ''}`;
    case 'RoundScored': return `Round ${d.round} scored: ${(d.scores ?? []).map((s, seat) => `${name(seat)} ${s}`).join(', ')}`;
    case 'GameEnded': return `Game over: ${seatList(d.winners, name)} won (totals ${(d.totals ?? []).join(', ')})`;
    case 'StockReshuffled': return 'The discard pile is shuffled into a new stock';
    default: break;
  }
  const who = event.actor === 'system' ? '' : `${name(event.actor)}: `;
  const phrase = PHRASES[game]?.[event.type];
  if (phrase) {
    try { return who + phrase(d, name); } catch { /* an unexpected shape: the generic line below */ }
  }
  const details = Object.entries(d).filter(([, v]) => !(Array.isArray(v) && v.length === 0)).map(([k, v]) => `${words(k).toLowerCase()} ${show(v)}`);
  return `${who}${words(event.type)}${details.length ? ` — ${details.join('; ')}` : ''}`;
}

/** One event as a list item's content. */
export function eventEl(event, name, game) {
  return [h('span', { class: 'seq' }, String(event.seq)), ' ', h('span', { class: 'what' }, eventText(event, name, game))];
}

/** The cards an event names (its card, cards, take, give …): the cards to mark as moved. */
export function movedCards(event) {
  const found = [];
  const walk = (value) => {
    if (isCard(value)) found.push(value);
    else if (Array.isArray(value)) value.forEach(walk);
    else if (value && typeof value === 'object') Object.values(value).forEach(walk);
  };
  walk(event.data ?? {});
  return found;
}
