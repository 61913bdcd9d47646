// The page's words: one catalog per language (i18n/en.js, i18n/de.js, the same keys), the language
// picked from the browser or the switch, and t(key, {params}) to say something in it.
import de from './i18n/de.js';
import en from './i18n/en.js';

export const CATALOGS = { en, de };
export const LANGUAGES = { en: 'English', de: 'Deutsch' };
const KEY = 'cardtable.lang';

/** The language: the one chosen with the switch, else the browser's first known one, else English. */
function initial() {
  try {
    const chosen = localStorage.getItem(KEY);
    if (chosen && CATALOGS[chosen]) return chosen;
  } catch { /* storage off: the browser's language */ }
  for (const tag of navigator.languages ?? [navigator.language ?? 'en']) {
    const base = String(tag).slice(0, 2).toLowerCase();
    if (CATALOGS[base]) return base;
  }
  return 'en';
}

let current = initial();

export function language() { return current; }

/** Switch the language (kept in the browser). */
export function setLanguage(lang) {
  if (!CATALOGS[lang]) return;
  current = lang;
  try { localStorage.setItem(KEY, lang); } catch { /* kept for this page only */ }
  document.documentElement.lang = lang;
}

/** A string of the catalog with {name} filled in; an unknown key shows as ⟦key⟧ (the tests look for it). */
export function t(key, params = {}) {
  const text = CATALOGS[current][key];
  if (text === undefined) return `⟦${key}⟧`;
  return text.replace(/\{(\w+)\}/g, (all, name) => (params[name] === undefined ? all : String(params[name])));
}

/** `one` or `other` of a key by a count: t(`${key}.one`) for 1. */
export function tn(key, n, params = {}) {
  return t(`${key}.${n === 1 ? 'one' : 'other'}`, { n, ...params });
}
