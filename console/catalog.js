// Catalog: every breach, sorted and filtered here; one breach's page.
import { api } from './api.js';
import { h, field, table, fmtInt, safeHref, logo } from './ui.js';

const MONTHS = { Jan: 1, Feb: 2, Mar: 3, Apr: 4, May: 5, Jun: 6, Jul: 7, Aug: 8, Sep: 9, Oct: 10, Nov: 11, Dec: 12 };
export function dateKey(d) { // DD-Mon-YYYY -> YYYYMMDD
  const m = /^(\d{1,2})-([A-Za-z]{3})-(\d{4})$/.exec(d || '');
  return m ? Number(m[3]) * 10000 + (MONTHS[m[2]] || 0) * 100 + Number(m[1]) : 0;
}

export async function catalogPage(root) {
  root.append(h('h1', { text: 'Catalog' }));
  const breaches = await api('/breaches');
  const filter = field('Filter', h('input', { type: 'search', name: 'filter', autocomplete: 'off' }), { hint: 'Name, domain, type or data classes.' });
  const count = h('p', { 'aria-live': 'polite' });
  const holder = h('div', {});
  let sort = { key: 'date', dir: -1 };
  const keys = {
    name: (b) => (b.source_name || '').toLowerCase(), date: (b) => dateKey(b.date_leaked), size: (b) => b.pwned_count || 0,
  };
  function header(label, key) {
    const active = sort.key === key;
    const b = h('button', { type: 'button', text: label + (active ? (sort.dir > 0 ? ' ▲' : ' ▼') : '') });
    b.addEventListener('click', () => {
      sort = { key, dir: active ? -sort.dir : key === 'name' ? 1 : -1 };
      render();
      holder.querySelector(`th[data-key="${key}"] button`).focus();
    });
    return h('th', { scope: 'col', 'data-key': key, 'aria-sort': active ? (sort.dir > 0 ? 'ascending' : 'descending') : 'none' }, b);
  }
  function render() {
    const text = filter.control.value.trim().toLowerCase();
    const shown = breaches.filter((b) => !text || [b.source_name, b.site_domain, b.breach_type, b.leaked_data_types]
      .some((v) => (v || '').toLowerCase().includes(text)));
    shown.sort((a, b) => { const x = keys[sort.key](a), y = keys[sort.key](b); return (x < y ? -1 : x > y ? 1 : 0) * sort.dir; });
    count.textContent = `${shown.length} of ${breaches.length} breaches`;
    const rows = shown.map((b) => h('tr', {},
      h('td', {}, h('a', { href: '#/breach/' + encodeURIComponent(b.uuid), text: b.source_name || b.uuid })),
      h('td', { text: b.date_leaked || '—' }), h('td', { class: 'num', text: fmtInt(b.pwned_count) }),
      h('td', { text: b.breach_type || '—' }), h('td', { text: (b.leaked_data_types || '').split(',').join(', ') })));
    holder.replaceChildren(table('Breaches', [header('Name', 'name'), header('Date', 'date'), header('Size', 'size'), 'Type', 'Data classes'], rows));
  }
  filter.control.addEventListener('input', render);
  root.append(filter.wrap, count, holder);
  render();
}

export async function breachPage(root, uuid) {
  const b = await api('/breaches/' + encodeURIComponent(uuid));
  const link = safeHref(b.service_article_url);
  root.append(h('p', {}, h('a', { href: '#/catalog', text: '← Catalog' })),
    h('h1', {}, logo(b.site_logo, 48), b.site_name || uuid),
    h('dl', { class: 'facts' },
      h('dt', { text: 'Date' }), h('dd', { text: b.date_leaked || '—' }),
      h('dt', { text: 'Records' }), h('dd', { text: fmtInt(b.pwned_count) }),
      h('dt', { text: 'Domain' }), h('dd', { text: b.site_domain || '—' }),
      h('dt', { text: 'Categories' }), h('dd', { text: b.site_categories || '—' }),
      h('dt', { text: 'Passwords' }), h('dd', { text: b.password_types || '—' }),
      h('dt', { text: 'Data classes' }), h('dd', {}, h('ul', { class: 'fields' },
        (b.leaked_data_types || '').split(',').filter(Boolean).map((c) => h('li', { text: c })))),
      h('dt', { text: 'Article' }), h('dd', {}, link ? h('a', { href: link, rel: 'noreferrer noopener', target: '_blank', text: link }) : '—')),
    h('h2', { text: 'Description' }), h('p', { text: b.description || 'No description.' }));
}
