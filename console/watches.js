// Watches and alerts: create, list and delete watches; alerts newest first with their triage.
// The API lists a key's alerts oldest first after a cursor: every page (of 1,000) is read by
// following next_cursor to the end, the newest KEPT are shown newest first, SHOWN at a time.
import { api, ApiError } from './api.js';
import { h, field, select, table, say, fmtInt, TYPES } from './ui.js';

const KEPT = 20000;
const SHOWN = 100;
const TRIAGE = [['new', 'New'], ['acknowledged', 'Acknowledged'], ['resolved', 'Resolved'], ['false_positive', 'False positive']];

export async function watchesPage(root) {
  const type = field('Type', select(TYPES.concat([['bin', 'Card BIN']]), { name: 'type' }));
  const account = field('Account', h('input', { name: 'account', type: 'text', autocomplete: 'off', spellcheck: 'false' }));
  const url = field('Webhook URL', h('input', { name: 'url', type: 'url', autocomplete: 'off', spellcheck: 'false' }));
  const secret = field('Signing secret', h('input', { name: 'secret', type: 'password', autocomplete: 'new-password' }), { hint: '16 to 256 bytes; never shown again.' });
  const formErr = h('div', { class: 'error', role: 'alert' });
  const button = h('button', { type: 'submit', text: 'Create watch' });
  const form = h('form', { class: 'stack', novalidate: true, 'aria-labelledby': 'new-watch-h' },
    h('h2', { id: 'new-watch-h', text: 'New watch' }),
    h('div', { class: 'row' }, type.wrap, account.wrap), url.wrap, secret.wrap, formErr, h('div', {}, button));
  const list = h('section', { 'aria-labelledby': 'watches-h' });
  const alerts = h('section', { 'aria-labelledby': 'alerts-h' });
  const refresh = h('button', { type: 'button', class: 'secondary', text: 'Refresh alerts' });
  refresh.addEventListener('click', () => loadAlerts());
  root.append(h('h1', { text: 'Watches and alerts' }), form, list, alerts);

  async function loadWatches() {
    const r = await api('/watches');
    const rows = r.watches.map((w) => {
      const del = h('button', { type: 'button', class: 'danger', text: 'Delete', 'aria-label': `Delete the watch of ${w.value}` });
      del.addEventListener('click', async () => {
        await api('/watches/' + w.id, { method: 'DELETE' });
        say('Watch deleted');
        await loadWatches();
        list.querySelector('h2').focus();
      });
      return h('tr', {}, h('td', { text: w.type }), h('td', { text: w.value }), h('td', { text: w.url }),
        h('td', { text: w.created_at }), h('td', {}, del));
    });
    list.replaceChildren(h('h2', { id: 'watches-h', tabindex: '-1', text: 'Your watches' }),
      rows.length ? table('Your watches', ['Type', 'Value', 'Webhook', 'Created', 'Action'], rows)
        : h('p', { text: 'You have no watches yet.' }));
  }

  async function loadAlerts() {
    let all = [], since = 0, full = true, dropped = 0;
    while (full) {
      const r = await api('/alerts?limit=1000&since=' + since);
      all.push(...r.alerts);
      if (all.length > KEPT) { dropped += all.length - KEPT; all = all.slice(-KEPT); }
      full = r.alerts.length === 1000 && r.next_cursor !== since;
      since = r.next_cursor;
    }
    const items = all.reverse();
    const row = (a) => {
      const s = select(TRIAGE, { 'aria-label': `Triage of the alert of ${a.watch.value} in ${a.breach ? a.breach.name : 'cards'}` });
      s.value = a.triage || 'new';
      const status = h('span', { class: 'muted' });
      s.addEventListener('change', async () => {
        try {
          await api('/alerts/' + encodeURIComponent(a.event_id), { method: 'PATCH', json: { state: s.value } });
          status.textContent = 'Saved';
          say('Alert marked ' + s.options[s.selectedIndex].text);
        } catch (err) {
          status.textContent = err.message;
        }
      });
      const counts = a.counts.records !== undefined ? `${a.counts.records} records` : `${a.counts.cards} cards`;
      return h('tr', { 'data-event': a.event_id }, h('td', { text: a.created_at }), h('td', { text: `${a.watch.type}: ${a.watch.value}` }),
        h('td', { text: a.breach ? a.breach.name : 'cards' }), h('td', { text: counts }),
        h('td', { text: a.delivery }), h('td', {}, s, ' ', status));
    };
    const heading = h('h2', { id: 'alerts-h', text: 'Alerts, newest first' });
    if (!items.length) {
      alerts.replaceChildren(heading, h('div', { class: 'actions' }, refresh), h('p', { text: 'No alerts yet.' }));
      return;
    }
    const t = table('Alerts', ['When', 'Watch', 'Breach', 'Matched', 'Delivery', 'Triage'], items.slice(0, SHOWN).map(row));
    const body = t.querySelector('tbody');
    const shown = h('p', { class: 'muted', 'aria-live': 'polite' });
    const older = h('button', { type: 'button', class: 'secondary', text: 'Show older alerts' });
    const note = () => {
      const n = body.rows.length;
      shown.textContent = `Showing ${fmtInt(n)} of ${fmtInt(items.length)} alerts` + (dropped ? ` (the newest ${fmtInt(KEPT)}; ${fmtInt(dropped)} older not shown)` : '') + '.';
      older.hidden = n >= items.length;
    };
    older.addEventListener('click', () => {
      body.append(...items.slice(body.rows.length, body.rows.length + SHOWN).map(row));
      note();
    });
    note();
    alerts.replaceChildren(heading, h('div', { class: 'actions' }, refresh), t, shown, h('div', { class: 'actions' }, older));
  }

  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    for (const f of [type, account, url, secret]) f.error.textContent = '';
    formErr.textContent = '';
    button.disabled = true;
    try {
      await api('/watches', { method: 'POST', json: { type: type.control.value, account: account.control.value, url: url.control.value, secret: secret.control.value } });
      secret.control.value = '';
      account.control.value = '';
      say('Watch created');
      await loadWatches();
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
      const m = err.message;
      const target = /secret/.test(m) ? secret : /url|destination|address/.test(m) || err.code === 'destination_not_allowed' ? url
        : /\btype\b/.test(m) ? type : /account|value|email|domain/.test(m) ? account : null;
      (target ? target.error : formErr).textContent = m;
      say(m);
    } finally {
      button.disabled = false;
    }
  });
  await loadWatches();
  await loadAlerts();
}
