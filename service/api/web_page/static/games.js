// Per-game parts: how each game's `table` and `you` are drawn, and how its actions read.
// Shapes: public_view / seat_view / full_view of domain/golf.py, switch.py, romme.py, go5.py.
import { backEl, cardEl, cardName, cardRow, cardShort, emptyEl, pileEl, SUITS } from './cards.js';
import { h, words } from './dom.js';
import { t, tn } from './i18n.js';

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
    if (i > 0) parts.push(i === codes.length - 1 ? ` ${t('word.and')} ` : ', ');
    parts.push(card(code));
  });
  return parts;
}

const suitWords = (suit) => (SUITS[suit] ? t(`suit.${suit}`) : String(suit));

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
  const head = h('tr', {}, h('th', { scope: 'col' }, t('g.round')), ctx.seats.map((s) => h('th', { scope: 'col' }, ctx.name(s.seat))));
  const rows = rounds.map((scores, i) => h('tr', {}, h('th', { scope: 'row' }, String(i + 1)), scores.map((x) => h('td', {}, String(x)))));
  return h('details', { class: 'block rounds' }, h('summary', {}, t('g.scores', { n: rounds.length })),
    h('div', { class: 'scroll' }, h('table', {}, h('thead', {}, head), h('tbody', {}, rows))));
}

/** Every hand of a finished game's full view. */
function allHands(hands, ctx) {
  if (!Array.isArray(hands)) return null;
  return section(t('g.everyHand'), h('div', { class: 'hands' },
    hands.map((hand, seat) => h('div', { class: 'hand-of' }, h('h4', {}, ctx.name(seat)), cardRow(hand, t('g.handOf', { name: ctx.name(seat) }))))));
}

function stockList(stock) {
  if (!Array.isArray(stock)) return null;
  return h('details', { class: 'block' }, h('summary', {}, t('g.stockOrder', { n: stock.length })),
    cardRow(stock, t('g.stockTop')));
}

function piles(...figures) {
  return h('div', { class: 'piles' }, ...figures);
}

// ------------------------------------------------------------ Golf

const golf = {

  label(action, view) {
    const drawn = view.you?.drawn;
    const at = (p) => t('ev.place', { n: p + 1 });
    const drawnCard = drawn ? card(drawn) : t('g.drawnCard');
    switch (action.type) {
      case 'reveal': {
        if (action.positions.length === 0) return phrase(t('g.golf.revealNone'));
        return phrase(t('g.golf.reveal', { places: action.positions.map(at).join(` ${t('word.and')} `) }));
      }
      case 'draw': return phrase(t('g.drawStock'));
      case 'swap': return phrase(t('g.golf.put'), ' ', drawnCard, ' ', t('g.golf.inPlaceOf', { place: at(action.position) }));
      case 'discard':
        return action.flip === null || action.flip === undefined
          ? phrase(t('g.discard'), ' ', drawnCard)
          : phrase(t('g.discard'), ' ', drawnCard, ', ', t('g.golf.turnUp', { place: at(action.flip) }));
      case 'take_discard':
        return phrase(t('g.take'), ' ', view.table.discard_top ? card(view.table.discard_top) : t('g.theDiscard'), ' ', t('g.golf.for', { place: at(action.position) }));
      case 'flip': return phrase(t('g.golf.turnUp', { place: at(action.position) }));
      default: return phrase(words(action.type));
    }
  },

  grid(grid, ctx, view) {
    const mine = ctx.you === grid.seat;
    const slots = grid.slots.map((slot, p) => {
      const where = t('ev.place', { n: p + 1 });
      let face;
      const pick = mine ? `grid:${p}` : null;
      if (slot.state === 'empty') face = emptyEl(t('g.golf.emptyAt', { where }), pick);
      else if (slot.card) face = cardEl(slot.card, { note: slot.state === 'down' ? t('g.golf.downAt', { where }) : where, extraClass: slot.state === 'down' ? 'was-down' : '', pick });
      else face = backEl(t('g.golf.downAt', { where }), pick);
      return h('li', { class: 'slot' }, face, h('span', { class: 'pos', 'aria-hidden': 'true' }, String(p + 1)));
    });
    const title = mine ? t('g.nameYou', { name: ctx.name(grid.seat) }) : ctx.name(grid.seat);
    return h('div', { class: `grid-of${mine ? ' mine' : ''}${view.table.turn === grid.seat ? ' turn' : ''}` },
      h('h4', {}, title),
      h('ul', { class: 'golf-grid', 'aria-label': t('g.golf.gridOf', { name: ctx.name(grid.seat) }) }, slots));
  },

  table(view, ctx) {
    const tb = view.table;
    const drawn = tb.drawn ?? null; // the full view's; a seat sees its own drawn card in its hand
    let drawnFigure = null;
    if (drawn) drawnFigure = h('figure', { class: 'pile drawn' }, cardEl(drawn, { note: t('g.drawnCard') }), h('figcaption', {}, t('g.drew', { name: ctx.name(tb.drawn_by) })));
    else if (tb.drawn_by !== null && tb.drawn_by !== undefined && tb.drawn_by !== ctx.you) drawnFigure = h('figure', { class: 'pile drawn' }, backEl(t('g.aDrawnCard')), h('figcaption', {}, t('g.drewACard', { name: ctx.name(tb.drawn_by) })));
    const discardTop = tb.discard_top;
    return [
      piles(pileEl(t('g.stock'), tb.stock_size, null, 'stock'), pileEl(t('g.discardPile'), tb.discard.length, discardTop, 'discard'), drawnFigure),
      h('p', { class: 'facts' }, t('g.golf.facts', { n: view.round, of: tb.rounds, layout: tb.layout }),
        view.phase === 'play' && tb.ended_by !== null && tb.ended_by !== undefined ? ` · ${t('g.golf.ended', { name: ctx.name(tb.ended_by) })}` : ''),
      h('div', { class: 'grids' }, tb.grids.filter((grid) => !view.you || grid.seat !== ctx.you).map((grid) => golf.grid(grid, ctx, view))),
      stockList(tb.stock),
      roundScores(tb.round_scores, ctx),
    ];
  },

  hand(view, ctx) {
    const mine = view.table.grids.find((grid) => grid.seat === ctx.you);
    if (!mine) return null;
    const drawn = view.you.drawn;
    return h('div', { class: 'grids' }, golf.grid(mine, ctx, view),
      drawn ? h('figure', { class: 'pile drawn' }, cardEl(drawn, { note: t('g.golf.yourDrawn') }), h('figcaption', {}, t('g.golf.keepOrDiscard'))) : null);
  },
};

// ------------------------------------------------------------ Switch

const switchGame = {

  label(action, view) {
    switch (action.type) {
      case 'play': return phrase(t('g.play'), ' ', cardList(action.cards), action.suit ? `, ${t('g.switch.call', { suit: suitWords(action.suit) })}` : '');
      case 'choose_suit': return phrase(t('g.switch.choose', { suit: suitWords(action.suit) }));
      case 'draw': {
        const pending = view.table.pending_draw;
        return phrase(pending ? t('g.switch.drawN', { n: pending }) : t('g.switch.drawOne'));
      }
      case 'pass': return phrase(t('moves.pass'));
      default: return phrase(words(action.type));
    }
  },

  table(view, ctx) {
    const tb = view.table;
    const facts = [t('facts.round', { n: view.round }), t('g.switch.direction', { way: t(`direction.${tb.direction}`) })];
    if (tb.suit) facts.push(t('g.switch.follow', { suit: suitWords(tb.suit) }));
    if (tb.pending_draw) facts.push(t('g.switch.pending', { n: tb.pending_draw }));
    if (tb.out?.length) facts.push(t('g.switch.out', { names: tb.out.map(ctx.name).join(', ') }));
    return [
      piles(pileEl(t('g.stock'), tb.stock_size, null, 'stock'), pileEl(t('g.discardPile'), tb.discard.length, tb.top_card, 'discard'),
        tb.drawn ? h('figure', { class: 'pile drawn' }, cardEl(tb.drawn, { note: t('g.drawnCard') }), h('figcaption', {}, t('g.drawnCard'))) : null),
      h('p', { class: 'facts' }, facts.join(' · ')),
      allHands(tb.hands, ctx),
      stockList(tb.stock),
      roundScores(tb.round_scores, ctx),
    ];
  },

  hand(view) {
    const you = view.you;
    const list = h('ul', { class: 'cards hand', 'aria-label': t('hand.title') },
      you.hand.map((code) => h('li', {}, cardEl(code, { pick: `hand:${code}` }))));
    const drawnApart = you.drawn && !you.hand.includes(you.drawn);
    return [
      list,
      you.drawn ? h('p', {}, t('g.switch.youDrew'), ' ', cardEl(you.drawn, { note: t('g.switch.justDrawn'), pick: drawnApart ? `hand:${you.drawn}` : null }), ' ', t('g.switch.playOrKeep')) : null,
      h('p', { class: 'facts' }, t('g.switch.handFacts', { n: you.hand.length, points: you.hand_value })),
    ];
  },
};

// ------------------------------------------------------------ Rommé

function meldEl(meld) {
  const jokers = new Map((meld.jokers ?? []).map((j) => [j.index, j.stands_for]));
  const what = meld.kind === 'set' ? t('g.romme.setOf', { rank: t(`rankShort.${meld.rank}`) }) : t('g.romme.runIn', { suit: suitWords(meld.suit) });
  const list = h('ul', { class: 'cards', 'aria-label': t('g.romme.meldWhat', { n: meld.id, what }) },
    meld.cards.map((code, i) => h('li', {}, cardEl(code, {
      note: jokers.has(i) ? t('g.romme.standsFor', { card: cardName(jokers.get(i)) }) : '', pick: code === 'JK' ? `joker:${meld.id}` : null,
    }))));
  return h('div', { class: 'meld', 'data-zone': `meld:${meld.id}` },
    h('h5', {}, h('span', { 'data-pick': `meld:${meld.id}`, 'aria-label': t('g.romme.meldWhat', { n: meld.id, what }) }, t('g.romme.meld', { n: meld.id })), ` · ${what} · ${tn('seats.points', meld.points)}`), list);
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
  const deck = backEl(t('g.romme.cutAt', { n: middle }), `cut:${middle}`);
  const input = h('input', { type: 'range', id: 'cut-at', min: low, max: high, value: middle });
  const out = h('output', { for: 'cut-at' }, String(middle));
  input.addEventListener('input', () => {
    deck.dataset.pick = `cut:${input.value}`;
    deck.setAttribute('aria-label', t('g.romme.cutAt', { n: input.value }));
    out.textContent = input.value;
  });
  return h('div', { class: 'cut' }, h('figure', { class: 'pile' }, deck, h('figcaption', {}, t('g.romme.cutHow'))),
    h('label', { for: 'cut-at' }, t('g.romme.cutWhere')), input, ' ', out);
}

const romme = {

  label(action, view) {
    const top = view.table.discard_top;
    switch (action.type) {
      case 'cut': return phrase(t('g.romme.cut', { n: action.position }));
      case 'draw': return phrase(t('g.drawStock'));
      case 'take_discard':
        return phrase(t('g.take'), ' ', top ? card(top) : t('g.theDiscard'), ' ', t('g.romme.into', { kind: t(`kind.${action.meld.kind}`) }), ' ', cardList(action.meld.cards));
      case 'meld': return phrase(t('g.romme.meldA', { kind: t(`kind.${action.kind}`) }), ' ', cardList(action.cards));
      case 'lay_off': return phrase(t('g.romme.lay'), ' ', card(action.card), ' ', t('g.romme.onMeld', { n: action.meld }), action.end ? ` ${t('g.romme.atEnd', { end: t(`end.${action.end}`) })}` : '');
      case 'swap_joker': return phrase(t('g.romme.swap'), ' ', card(action.card), ' ', t('g.romme.forJoker', { n: action.meld }));
      case 'discard': return phrase(t('g.discard'), ' ', card(action.card));
      default: return phrase(words(action.type));
    }
  },

  table(view, ctx) {
    const tb = view.table;
    const facts = [t('facts.round', { n: view.round }), t('g.target', { n: tb.target })];
    if (tb.cut) facts.push(t('g.romme.cutBy', { name: ctx.name(tb.cut.by), n: tb.cut.position }));
    if (tb.cut?.grabbed?.length) facts.push(t('g.romme.grab', { cards: tb.cut.grabbed.map(cardShort).join(' ') }));
    if (tb.out_of_game?.length) facts.push(t('g.romme.outOfGame', { cards: tb.out_of_game.map(cardShort).join(' ') }));
    if (tb.went_out !== null && tb.went_out !== undefined) facts.push(t('g.romme.wentOut', { name: ctx.name(tb.went_out) }));
    const bySeat = ctx.seats.map((s) => ({ seat: s.seat, melds: tb.melds.filter((m) => m.seat === s.seat) }));
    return [
      view.you ? cutEl(view.you.legal ?? []) : null,
      piles(pileEl(t('g.stock'), tb.stock_size, null, 'stock'), pileEl(t('g.discardPile'), tb.discard_size, tb.discard_top, 'discard')),
      h('p', { class: 'facts' }, facts.join(' · ')),
      section(t('g.romme.melds'), bySeat.some((s) => s.melds.length)
        ? bySeat.filter((s) => s.melds.length).map((s) => h('div', { class: 'melds-of' },
          h('h4', {}, t('g.romme.laid', { name: ctx.name(s.seat), n: tb.meld_points[s.seat] })), s.melds.map((m) => meldEl(m))))
        : h('p', {}, t('g.romme.noMeld')),
      view.you && view.status !== 'finished' ? newZone('newmeld', t('moves.newMeld')) : null),
      allHands(tb.hands, ctx),
      Array.isArray(tb.face_down) && tb.face_down.length ? section(t('g.romme.faceDown'), cardRow(tb.face_down, t('g.romme.faceDownCard'))) : null,
      stockList(tb.stock),
      roundScores(tb.round_scores, ctx),
    ];
  },

  hand(view) {
    const you = view.you;
    return [
      h('ul', { class: 'cards hand', 'aria-label': t('hand.title') }, you.hand.map((code) => h('li', {}, cardEl(code, { pick: `hand:${code}` })))),
      h('p', { class: 'facts' }, t('g.romme.handFacts', { n: you.hand_size, points: you.hand_points })),
    ];
  },
};

// ------------------------------------------------------------ Go5

function setEl(set, theirs) {
  const what = `${t(`feature.${set.feature}`)} ${set.feature === 'colour' ? t(`colour.${set.value}`) : set.value}`;
  const list = h('ul', { class: 'cards', 'aria-label': t('g.go5.setWhat', { n: set.id, what }) },
    set.cards.map((code) => h('li', {}, cardEl(code, { pick: theirs ? `take:${set.id}:${code}` : null }))));
  return h('div', { class: 'meld', 'data-zone': `set:${set.id}` },
    h('h5', {}, h('span', { 'data-pick': `set:${set.id}`, 'aria-label': t('g.go5.setWhat', { n: set.id, what }) }, t('g.go5.set', { n: set.id })), ` · ${t('g.go5.by', { what })}${set.cards.length >= 5 ? ` · ${t('g.go5.five')}` : ''}`),
    list);
}

const go5 = {

  label(action, view, ctx) {
    switch (action.type) {
      case 'draw':
        return action.from === 'discard'
          ? phrase(t('g.go5.takeDiscard'), ' ', view.table.discard_top ? card(view.table.discard_top) : '', ' ', t('g.go5.andStock'))
          : phrase(t('g.drawStock'));
      case 'meld': return phrase(action.by ? t('g.go5.layBy', { by: t(`feature.${action.by}`) }) : t('g.go5.lay'), ' ', cardList(action.cards));
      case 'lay_off': return phrase(t('g.go5.add'), ' ', card(action.card), ' ', t('g.go5.toSet', { n: action.set }));
      case 'swap': {
        const then = action.then?.meld
          ? [', ', action.then.meld.by ? t('g.go5.thenLayBy', { by: t(`feature.${action.then.meld.by}`) }) : t('g.go5.thenLay'), ' ', cardList(action.then.meld.cards)]
          : [', ', t('g.go5.thenAdd', { n: action.then?.lay_off?.set })];
        return phrase(t('g.take'), ' ', card(action.take), ' ', t('g.go5.fromSet', { n: action.set, name: ctx.name(action.from_seat) }), ' ', card(action.give), then);
      }
      case 'stop': return phrase(t('moves.stop'));
      case 'discard': return phrase(t('g.discard'), ' ', card(action.card));
      case 'go5': return phrase(t('g.go5.call', { n: action.set }));
      default: return phrase(words(action.type));
    }
  },

  table(view, ctx) {
    const tb = view.table;
    const facts = [t('facts.round', { n: view.round }), t('g.target', { n: tb.target })];
    if (tb.go5_open) facts.push(t('g.go5.open', { name: ctx.name(tb.discarded_by) }));
    if (tb.stops_out) facts.push(t('g.go5.stopsOut', { n: tb.stops_out }));
    return [
      piles(pileEl(t('g.stock'), tb.stock_size, null, 'stock'), pileEl(t('g.discardPile'), tb.discard_size, tb.discard_top, 'discard')),
      h('p', { class: 'facts' }, facts.join(' · ')),
      section(t('g.go5.sets'), tb.players.map((p) => h('div', { class: 'melds-of' },
        h('h4', {}, t('g.go5.player', { name: ctx.name(p.seat), n: p.hand_size, stops: p.stops })),
        p.sets.length ? p.sets.map((set) => setEl(set, view.you && p.seat !== ctx.you)) : h('p', {}, t('g.go5.noSet')),
        view.you && p.seat === ctx.you && view.status !== 'finished' ? newZone('newset', t('moves.newSet')) : null))),
      allHands(tb.hands, ctx),
      Array.isArray(tb.discard) ? section(t('g.go5.discardOrder'), cardRow(tb.discard, t('g.discardPile'))) : null,
      stockList(tb.stock),
      roundScores(tb.round_scores, ctx),
    ];
  },

  hand(view) {
    const you = view.you;
    return [
      h('ul', { class: 'cards hand', 'aria-label': t('hand.title') }, you.hand.map((code) => h('li', {}, cardEl(code, { pick: `hand:${code}` }))),
        you.stops ? h('li', { class: 'stops' }, cardEl('stop', { pick: 'stop', note: t('g.go5.inFront', { n: you.stops }) })) : null),
      h('p', { class: 'facts' }, t('g.go5.handFacts', { n: you.hand.length, stops: you.stops }),
        you.go5?.length ? ` · ${t('g.go5.possible', { sets: you.go5.join(', ') })}` : ''),
    ];
  },
};

const GAMES = { golf, switch: switchGame, romme, go5 };

/** The parts of a game; an unknown game gets a plain JSON view. */
export function gameParts(id) {
  return GAMES[id] ?? {
    label: (action) => phrase(words(action.type), ' ', JSON.stringify(action)),
    table: (view) => h('pre', {}, JSON.stringify(view.table, null, 2)),
    hand: (view) => h('pre', {}, JSON.stringify(view.you, null, 2)),
  };
}
