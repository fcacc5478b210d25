// The console's shell: sign-in, the navigation, and one page at a time (#/name in the URL's
// fragment, which carries no search term or key).
import { ApiError, onSessionEnded, signIn, signOut, whoAmI } from './api.js';
import { h, field, say } from './ui.js';
import { searchPage } from './search.js';
import { cardsPage } from './cards.js';
import { catalogPage, breachPage } from './catalog.js';
import { domainPage } from './domain.js';
import { watchesPage } from './watches.js';
import { jobsPage } from './jobs.js';
import { usagePage, statusPage } from './info.js';

const PAGES = {
  search: ['Search', searchPage], cards: ['Cards', cardsPage], catalog: ['Catalog', catalogPage],
  breach: ['Breach', breachPage], domain: ['Domain dashboard', domainPage],
  watches: ['Watches and alerts', watchesPage], jobs: ['Bulk lookups', jobsPage],
  usage: ['Usage', usagePage], status: ['Status', statusPage],
};
const main = document.getElementById('main');
const nav = document.getElementById('nav');
const who = document.getElementById('who');
let signedIn = false;

function showSignIn(message) {
  signedIn = false;
  nav.hidden = true;
  who.replaceChildren();
  document.title = 'Sign in · breachd console';
  const key = h('input', { type: 'password', name: 'key', autocomplete: 'off', required: true, spellcheck: 'false' });
  const f = field('API key', key);
  const button = h('button', { type: 'submit', text: 'Sign in' });
  const form = h('form', { class: 'stack signin', novalidate: true }, h('h1', { text: 'Sign in' }),
    message ? h('p', { class: 'notice', text: message }) : null,
    h('p', { class: 'muted', text: 'Your API key is exchanged for a session that ends after 30 minutes without use; the key itself is not kept by this page.' }),
    f.wrap, h('div', {}, button));
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    f.error.textContent = '';
    const value = key.value;
    if (!value) { f.error.textContent = 'Enter your API key.'; key.focus(); return; }
    button.disabled = true;
    try {
      const s = await signIn(value);
      key.value = '';
      started();
      showWho(s);
      if (!location.hash || location.hash === '#/' || location.hash === '#') location.hash = '#/search';
      else route();
    } catch (err) {
      f.error.textContent = err instanceof ApiError ? err.message : 'The server could not be reached.';
      key.focus();
    } finally {
      button.disabled = false;
    }
  });
  main.replaceChildren(form);
  key.focus();
}

function started() {
  signedIn = true;
  nav.hidden = false;
}

function showWho(s) {
  const out = h('button', { type: 'button', text: 'Sign out' });
  out.addEventListener('click', async () => {
    await signOut();
    showSignIn('You are signed out.');
  });
  who.replaceChildren(h('span', { text: s.key.name + (s.key.tenant ? ` (tenant ${s.key.tenant})` : '') }), out);
}

async function route() {
  if (!signedIn) return;
  const [name, arg] = (location.hash.replace(/^#\/?/, '') || 'search').split('/');
  const page = PAGES[name] || PAGES.search;
  for (const a of nav.querySelectorAll('a')) {
    if (a.getAttribute('href') === '#/' + (PAGES[name] ? name : 'search')) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  }
  document.title = `${page[0]} · breachd console`;
  const root = h('div', {});
  main.replaceChildren(root);
  try {
    await page[1](root, arg ? decodeURIComponent(arg) : '');
  } catch (err) {
    if (err instanceof ApiError && err.status === 401) return;
    root.append(h('p', { class: 'error', role: 'alert', text: err.message || String(err) }));
  }
  const h1 = main.querySelector('h1');
  if (h1) { h1.tabIndex = -1; h1.focus(); }
  say(page[0]);
}

onSessionEnded((msg) => showSignIn(msg || 'Your session has ended; sign in again.'));
window.addEventListener('hashchange', route);

(async () => {
  const s = await whoAmI();
  if (!s) { showSignIn(); return; }
  started();
  showWho(s);
  route();
})();
