// Per-game parts: how each game's `table` and `you` are drawn, and how its actions read.
// Shapes: public_view / seat_view / full_view of domain/golf.py, switch.py, romme.py, go5.py.
import { backEl, cardEl, cardName, cardRow, cardShort, emptyEl, pileEl, SUITS } from './cards.js';
import { h, words } from './dom.js';

// ------------------------------------------------------------ labels

/** A label from parts: strings, and {card} for a card (short when written, its name when spoken). */
export function phrase(...parts) {
  const flat = parts.flat(Infinity).filter((p) => p !== null && p !== undefined && p !== '');
  const text = flat.map((p) => (typeof p === 'object' ? cardShort(p.card) : String(p))).join('');
  const spoken = flat.map((p) => (typeof p === 'object' ? cardName(p.card) : String(p))).join('');
  return { text, spoken };
}

const card = (code) => ({ card: code });

/** "7♥, 8♥ and 9♥" as phrase parts. */
function cardList(codes) {
  const parts = [];
  codes.forEach((code, i) => {
    if (i > 0) parts.push(i === codes.length - 1 ? ' and ' : ', ');
    parts.push(card(code));
  });
  return parts;
}

const suitWords = (suit) => (SUITS[suit] ? `${SUITS[suit].symbol} ${SUITS[suit].name}` : String(suit));

// ------------------------------------------------------------ shared pieces

/** Is this the full view of a finished game (every hand, the stock in order)? */
export function isFullView(view) {
  return !view.you && Array.isArray(view.table?.stock);
}

function section(title, ...children) {
  return h('section', { class: 'block' }, h('h3', {}, title), ...children);
}

/** The scores of every round so far, one row per round. */
function roundScores(rounds, ctx) {
  if (!rounds || rounds.length === 0) return null;
  const head = h('tr', {}, h('th', { scope: 'col' }, 'Round'), ctx.seats.map((s) => h('th', { scope: 'col' }, ctx.name(s.seat))));
  const rows = rounds.map((scores, i) => h('tr', {}, h('th', { scope: 'row' }, String(i + 1)), scores.map((x) => h('td', {}, String(x)))));
  return h('details', { class: 'block rounds' }, h('summary', {}, `Scores of ${rounds.length} round${rounds.length === 1 ? '' : 's'}`),
    h('div', { class: 'scroll' }, h('table', {}, h('thead', {}, head), h('tbody', {}, rows))));
}

/** Every hand of a finished game's full view. */
function allHands(hands, ctx) {
  if (!Array.isArray(hands)) return null;
  return section('Every hand', h('div', { class: 'hands' },
    hands.map((hand, seat) => h('div', { class: 'hand-of' }, h('h4', {}, ctx.name(seat)), cardRow(hand, `hand of ${ctx.name(seat)}`)))));
}

function stockList(stock) {
  if (!Array.isArray(stock)) return null;
  return h('details', { class: 'block' }, h('summary', {}, `The stock in order, top first (${stock.length} cards)`),
    cardRow(stock, 'stock, top first'));
}

function piles(...figures) {
  return h('div', { class: 'piles' }, ...figures);
}

// ------------------------------------------------------------ Golf

const golf = {
  titles: {
    reveal: 'Turn up your first cards', draw: 'Draw', swap: 'Keep the drawn card',
    discard: 'Discard the drawn card', take_discard: 'Take the discard', flip: 'Turn up a card',
  },

  label(action, view) {
    const drawn = view.you?.drawn;
    const at = (p) => `card ${p + 1}`;
    switch (action.type) {
      case 'reveal': {
        const places = action.positions.map((p) => p + 1);
        if (places.length === 0) return phrase('Turn up no card');
        const last = places.pop();
        return phrase(places.length ? `Turn up cards ${places.join(', ')} and ${last}` : `Turn up card ${last}`);
      }
      case 'draw': return phrase('Draw from the stock');
      case 'swap': return phrase('Put ', drawn ? card(drawn) : 'the drawn card', ` in place of ${at(action.position)}`);
      case 'discard':
        return action.flip === null || action.flip === undefined
          ? phrase('Discard ', drawn ? card(drawn) : 'the drawn card')
          : phrase('Discard ', drawn ? card(drawn) : 'the drawn card', `, turn up ${at(action.flip)}`);
      case 'take_discard':
        return phrase('Take ', view.table.discard_top ? card(view.table.discard_top) : 'the discard', ` for ${at(action.position)}`);
      case 'flip': return phrase(`Turn up ${at(action.position)}`);
      default: return phrase(words(action.type));
    }
  },

  grid(grid, ctx, view) {
    const mine = ctx.you === grid.seat;
    const slots = grid.slots.map((slot, p) => {
      const where = `card ${p + 1}`;
      let face;
      const pick = mine ? `grid:${p}` : null;
      if (slot.state === 'empty') face = emptyEl(`${where}: empty place`, pick);
      else if (slot.card) face = cardEl(slot.card, { note: slot.state === 'down' ? `${where}, face down` : where, extraClass: slot.state === 'down' ? 'was-down' : '', pick });
      else face = backEl(`${where}: face down`, pick);
      return h('li', { class: 'slot' }, face, h('span', { class: 'pos', 'aria-hidden': 'true' }, String(p + 1)));
    });
    const title = `${ctx.name(grid.seat)}${mine ? ' (you)' : ''}`;
    return h('div', { class: `grid-of${mine ? ' mine' : ''}${view.table.turn === grid.seat ? ' turn' : ''}` },
      h('h4', {}, title),
      h('ul', { class: 'golf-grid', 'aria-label': `grid of ${ctx.name(grid.seat)}` }, slots));
  },

  table(view, ctx) {
    const t = view.table;
    const drawn = t.drawn ?? null; // the full view's; a seat sees its own drawn card in its hand
    let drawnFigure = null;
    if (drawn) drawnFigure = h('figure', { class: 'pile drawn' }, cardEl(drawn, { note: 'the drawn card' }), h('figcaption', {}, `${ctx.name(t.drawn_by)} drew`));
    else if (t.drawn_by !== null && t.drawn_by !== undefined && t.drawn_by !== ctx.you) drawnFigure = h('figure', { class: 'pile drawn' }, backEl('a drawn card'), h('figcaption', {}, `${ctx.name(t.drawn_by)} drew a card`));
    const discardTop = t.discard_top;
    return [
      piles(pileEl('stock', t.stock_size, null, 'stock'), pileEl('discard pile', t.discard.length, discardTop, 'discard'), drawnFigure),
      h('p', { class: 'facts' }, `Round ${view.round} of ${t.rounds} · layout ${t.layout}`,
        view.phase === 'play' && t.ended_by !== null && t.ended_by !== undefined ? ` · ${ctx.name(t.ended_by)} turned up their last card: everyone else has one more turn` : ''),
      h('div', { class: 'grids' }, t.grids.filter((grid) => !view.you || grid.seat !== ctx.you).map((grid) => golf.grid(grid, ctx, view))),
      stockList(t.stock),
      roundScores(t.round_scores, ctx),
    ];
  },

  hand(view, ctx) {
    const mine = view.table.grids.find((grid) => grid.seat === ctx.you);
    if (!mine) return null;
    const drawn = view.you.drawn;
    return h('div', { class: 'grids' }, golf.grid(mine, ctx, view),
      drawn ? h('figure', { class: 'pile drawn' }, cardEl(drawn, { note: 'your drawn card' }), h('figcaption', {}, 'Your drawn card: keep it or discard it')) : null);
  },
};

// ------------------------------------------------------------ Switch

const switchGame = {
  titles: { play: 'Play', choose_suit: 'Choose the suit', draw: 'Draw', pass: 'Pass' },

  label(action, view) {
    switch (action.type) {
      case 'play': return phrase('Play ', cardList(action.cards), action.suit ? `, call ${suitWords(action.suit)}` : '');
      case 'choose_suit': return phrase(`Choose ${suitWords(action.suit)}`);
      case 'draw': {
        const pending = view.table.pending_draw;
        return phrase(pending ? `Draw ${pending} cards` : 'Draw a card');
      }
      case 'pass': return phrase('Pass (keep the drawn card)');
      default: return phrase(words(action.type));
    }
  },

  table(view, ctx) {
    const t = view.table;
    const facts = [`Round ${view.round}`, `play goes ${t.direction}`];
    if (t.suit) facts.push(`suit to follow: ${suitWords(t.suit)}`);
    if (t.pending_draw) facts.push(`next player draws ${t.pending_draw} unless they stack`);
    if (t.out?.length) facts.push(`out: ${t.out.map(ctx.name).join(', ')}`);
    return [
      piles(pileEl('stock', t.stock_size, null, 'stock'), pileEl('discard pile', t.discard.length, t.top_card, 'discard'),
        t.drawn ? h('figure', { class: 'pile drawn' }, cardEl(t.drawn, { note: 'the drawn card' }), h('figcaption', {}, 'drawn card')) : null),
      h('p', { class: 'facts' }, facts.join(' · ')),
      allHands(t.hands, ctx),
      stockList(t.stock),
      roundScores(t.round_scores, ctx),
    ];
  },

  hand(view) {
    const you = view.you;
    const playable = new Set(you.playable ?? []);
    const list = h('ul', { class: 'cards hand', 'aria-label': 'your hand' },
      you.hand.map((code) => h('li', {}, cardEl(code, { pick: `hand:${code}` }))));
    const drawnApart = you.drawn && !you.hand.includes(you.drawn);
    return [
      list,
      you.drawn ? h('p', {}, 'You drew ', cardEl(you.drawn, { note: 'just drawn', pick: drawnApart ? `hand:${you.drawn}` : null }), ': play it or keep it.') : null,
      h('p', { class: 'facts' }, `${you.hand.length} cards, worth ${you.hand_value} points`),
    ];
  },
};

// ------------------------------------------------------------ Rommé

function meldEl(meld) {
  const jokers = new Map((meld.jokers ?? []).map((j) => [j.index, j.stands_for]));
  const what = meld.kind === 'set' ? `set of ${meld.rank}` : `run in ${suitWords(meld.suit)}`;
  const list = h('ul', { class: 'cards', 'aria-label': `meld ${meld.id}: ${what}` },
    meld.cards.map((code, i) => h('li', {}, cardEl(code, {
      note: jokers.has(i) ? `stands for ${cardName(jokers.get(i))}` : '', pick: code === 'JK' ? `joker:${meld.id}` : null,
    }))));
  return h('div', { class: 'meld', 'data-zone': `meld:${meld.id}` },
    h('h5', {}, h('span', { 'data-pick': `meld:${meld.id}`, 'aria-label': `meld ${meld.id}, ${what}` }, `Meld ${meld.id}`), ` · ${what} · ${meld.points} points`), list);
}

/** The place on the table for a new meld or set. */
function newZone(pick, text) {
  return h('div', { class: 'meld new-zone', 'data-zone': pick }, h('span', { class: 'zone-label', 'data-pick': pick }, text));
}

/** The Rommé deck to cut (R-5): a slider for where, the deck to click. */
function cutEl(legal) {
  const positions = legal.filter((a) => a.type === 'cut').map((a) => a.position);
  if (!positions.length) return null;
  const low = Math.min(...positions);
  const high = Math.max(...positions);
  const middle = Math.round((low + high) / 2);
  const deck = backEl(`the deck: cut it at card ${middle}`, `cut:${middle}`);
  const input = h('input', { type: 'range', id: 'cut-at', min: low, max: high, value: middle, 'aria-label': 'where to cut the deck' });
  const out = h('output', { for: 'cut-at' }, String(middle));
  input.addEventListener('input', () => {
    deck.dataset.pick = `cut:${input.value}`;
    deck.setAttribute('aria-label', `the deck: cut it at card ${input.value}`);
    out.textContent = input.value;
  });
  return h('div', { class: 'cut' }, h('figure', { class: 'pile' }, deck, h('figcaption', {}, 'the deck: choose where, then click it')),
    h('label', { for: 'cut-at' }, 'cut at card '), input, ' ', out);
}

const romme = {
  titles: {
    cut: 'Cut the deck', draw: 'Draw', take_discard: 'Take the discard into a meld', meld: 'Lay a meld',
    lay_off: 'Lay off', swap_joker: 'Swap a joker', discard: 'Discard (ends your turn)',
  },

  label(action, view) {
    const top = view.table.discard_top;
    switch (action.type) {
      case 'cut': return phrase(`Cut at card ${action.position}`);
      case 'draw': return phrase('Draw from the stock');
      case 'take_discard':
        return phrase('Take ', top ? card(top) : 'the discard', ` into a ${action.meld.kind}: `, cardList(action.meld.cards));
      case 'meld': return phrase(`Meld a ${action.kind}: `, cardList(action.cards));
      case 'lay_off': return phrase('Lay ', card(action.card), ` off on meld ${action.meld}`, action.end ? ` at the ${action.end} end` : '');
      case 'swap_joker': return phrase('Swap ', card(action.card), ` for the joker in meld ${action.meld}`);
      case 'discard': return phrase('Discard ', card(action.card));
      default: return phrase(words(action.type));
    }
  },

  table(view, ctx) {
    const t = view.table;
    const facts = [`Round ${view.round}`, `target ${t.target} points`];
    if (t.cut) facts.push(`cut by ${ctx.name(t.cut.by)} at card ${t.cut.position}`);
    if (t.cut?.grabbed?.length) facts.push(`lucky grab: ${t.cut.grabbed.map(cardShort).join(' ')}`);
    if (t.out_of_game?.length) facts.push(`out of the game: ${t.out_of_game.map(cardShort).join(' ')}`);
    if (t.went_out !== null && t.went_out !== undefined) facts.push(`${ctx.name(t.went_out)} went out`);
    const bySeat = ctx.seats.map((s) => ({ seat: s.seat, melds: t.melds.filter((m) => m.seat === s.seat) }));
    return [
      view.you ? cutEl(view.you.legal ?? []) : null,
      piles(pileEl('stock', t.stock_size, null, 'stock'), pileEl('discard pile', t.discard_size, t.discard_top, 'discard')),
      h('p', { class: 'facts' }, facts.join(' · ')),
      section('Melds', bySeat.some((s) => s.melds.length)
        ? bySeat.filter((s) => s.melds.length).map((s) => h('div', { class: 'melds-of' },
          h('h4', {}, `${ctx.name(s.seat)} · ${t.meld_points[s.seat]} points laid`), s.melds.map((m) => meldEl(m))))
        : h('p', {}, 'No meld on the table yet.'),
      view.you && view.status !== 'finished' ? newZone('newmeld', '+ new meld') : null),
      allHands(t.hands, ctx),
      Array.isArray(t.face_down) && t.face_down.length ? section('Face down', cardRow(t.face_down, 'the face-down card')) : null,
      stockList(t.stock),
      roundScores(t.round_scores, ctx),
    ];
  },

  hand(view) {
    const you = view.you;
    return [
      h('ul', { class: 'cards hand', 'aria-label': 'your hand' }, you.hand.map((code) => h('li', {}, cardEl(code, { pick: `hand:${code}` })))),
      h('p', { class: 'facts' }, `${you.hand_size} cards, ${you.hand_points} points in hand`),
    ];
  },
};

// ------------------------------------------------------------ Go5

function setEl(set, theirs) {
  const what = `${set.feature} ${set.value}`;
  const list = h('ul', { class: 'cards', 'aria-label': `set ${set.id}: by ${what}` },
    set.cards.map((code) => h('li', {}, cardEl(code, { pick: theirs ? `take:${set.id}:${code}` : null }))));
  return h('div', { class: 'meld', 'data-zone': `set:${set.id}` },
    h('h5', {}, h('span', { 'data-pick': `set:${set.id}`, 'aria-label': `set ${set.id}, by ${what}` }, `Set ${set.id}`), ` · by ${what}${set.cards.length >= 5 ? ' · five!' : ''}`),
    list);
}

const go5 = {
  titles: {
    draw: 'Draw', meld: 'Lay a new set', lay_off: 'Add to a set', swap: 'Swap with a set',
    stop: 'Stop card', discard: 'Discard (ends your turn)', go5: 'Call Go5',
  },

  label(action, view, ctx) {
    switch (action.type) {
      case 'draw':
        return action.from === 'discard'
          ? phrase('Take the discard ', view.table.discard_top ? card(view.table.discard_top) : '', ' and the top of the stock')
          : phrase('Draw from the stock');
      case 'meld': return phrase(`Lay a set${action.by ? ` by ${action.by}` : ''}: `, cardList(action.cards));
      case 'lay_off': return phrase('Add ', card(action.card), ` to set ${action.set}`);
      case 'swap': {
        const then = action.then?.meld
          ? [`, then lay a set${action.then.meld.by ? ` by ${action.then.meld.by}` : ''}: `, cardList(action.then.meld.cards)]
          : [`, then add it to set ${action.then?.lay_off?.set}`];
        return phrase('Take ', card(action.take), ` from set ${action.set} of ${ctx.name(action.from_seat)} for `, card(action.give), then);
      }
      case 'stop': return phrase('Play a stop card');
      case 'discard': return phrase('Discard ', card(action.card));
      case 'go5': return phrase(`Go5: complete set ${action.set} with the discard`);
      default: return phrase(words(action.type));
    }
  },

  table(view, ctx) {
    const t = view.table;
    const facts = [`Round ${view.round}`, `target ${t.target} points`];
    if (t.go5_open) facts.push(`the discard of ${ctx.name(t.discarded_by)} may be claimed with Go5`);
    if (t.stops_out) facts.push(`${t.stops_out} stop card${t.stops_out === 1 ? '' : 's'} played`);
    return [
      piles(pileEl('stock', t.stock_size, null, 'stock'), pileEl('discard pile', t.discard_size, t.discard_top, 'discard')),
      h('p', { class: 'facts' }, facts.join(' · ')),
      section('Sets', t.players.map((p) => h('div', { class: 'melds-of' },
        h('h4', {}, `${ctx.name(p.seat)} · ${p.hand_size} in hand · ${p.stops} stop card${p.stops === 1 ? '' : 's'}`),
        p.sets.length ? p.sets.map((set) => setEl(set, view.you && p.seat !== ctx.you)) : h('p', {}, 'no set yet'),
        view.you && p.seat === ctx.you && view.status !== 'finished' ? newZone('newset', '+ new set') : null))),
      allHands(t.hands, ctx),
      Array.isArray(t.discard) ? section('Discard pile, bottom first', cardRow(t.discard, 'discard pile')) : null,
      stockList(t.stock),
      roundScores(t.round_scores, ctx),
    ];
  },

  hand(view) {
    const you = view.you;
    return [
      h('ul', { class: 'cards hand', 'aria-label': 'your hand' }, you.hand.map((code) => h('li', {}, cardEl(code, { pick: `hand:${code}` }))),
        you.stops ? h('li', { class: 'stops' }, cardEl('stop', { pick: 'stop', note: `${you.stops} in front of you` })) : null),
      h('p', { class: 'facts' }, `${you.hand.length} cards · ${you.stops} stop card${you.stops === 1 ? '' : 's'} in front of you`,
        you.go5?.length ? ` · Go5 possible on set ${you.go5.join(', ')}` : ''),
    ];
  },
};

const GAMES = { golf, switch: switchGame, romme, go5 };

/** The parts of a game; an unknown game gets a plain JSON view. */
export function gameParts(id) {
  return GAMES[id] ?? {
    titles: {},
    label: (action) => phrase(words(action.type), ' ', JSON.stringify(action)),
    table: (view) => h('pre', {}, JSON.stringify(view.table, null, 2)),
    hand: (view) => h('pre', {}, JSON.stringify(view.you, null, 2)),
  };
}
