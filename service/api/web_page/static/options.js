// What the new-game and the new-match forms share: a game's options as form fields, each with its hint in the
// page's language, the hint's rule ids linking to the rule in "How to play", and the options a form sets; the
// words for a bot level and a registered bot among a seat's choices; the player count a game takes.
import { h } from './dom.js';
import { ruleAnchor } from './help.js';
import { t } from './i18n.js';

/** An option's hint in the page's language, its rule ids "(G-4)" as links to the rule in "How to play". */
function hintEl(game, option, id) {
  const key = `option.${game}.${option.name}`;
  const text = t(key).startsWith('⟦') ? option.description : t(key);
  const rules = [...new Set(option.description.match(/\b[A-Z]-\d+\b/g) ?? [])];
  const plain = text.replace(/\s*\((?:[A-Z]-\d+(?:,\s*)?)+\)/g, '');
  return h('small', { id: `${id}-hint` }, plain, rules.length ? [' (', rules.map((rule, i) => [i ? ', ' : '',
    h('a', { href: `#${ruleAnchor(rule)}`, 'data-rule': rule }, rule)]), ')'] : null);
}

export function optionInput(game, option) {
  const id = `opt-${option.name}`;
  const hint = hintEl(game, option, id);
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
  const label = t(`optionName.${option.name}`).startsWith('⟦') ? option.name.replace(/_/g, ' ') : t(`optionName.${option.name}`);
  return h('div', { class: `field${input.type === 'checkbox' ? ' check' : ''}` }, h('label', { for: id }, label), input, hint);
}

/** The options that differ from their defaults. */
export function readOptions(form, game) {
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

/** A level's word in the page's language ("greedy"; a plug-in's level as it is named). */
export function levelWord(level) {
  const key = `level.${level}`;
  return t(key).startsWith('⟦') ? level : t(key);
}

/** A registered bot as a seat's choice: "acme-golfer (online)"; its option carries the bot's name. */
export function botOption(bot) {
  return h('option', { value: `bot:${bot.name}`, dataset: { bot: bot.name } },
    t(bot.online ? 'form.botOnline' : 'form.botOffline', { name: bot.name }));
}

/** The number of players `asked` for, within what `game` takes (`fallback` when nothing is asked). */
export function playerCount(game, asked, fallback) {
  return Math.max(game.players.min, Math.min(game.players.max, Number(asked) || fallback));
}
