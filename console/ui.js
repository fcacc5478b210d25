// DOM helpers: elements are built, never parsed from strings, so nothing from the API (breach
// fields are attacker-made) can become markup.
export function h(tag, attrs, ...kids) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
    else if (k === 'class') el.className = v;
    else if (k === 'text') el.textContent = v;
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  add(el, kids);
  return el;
}
function add(el, kids) {
  for (const k of kids) {
    if (k === null || k === undefined || k === false) continue;
    if (Array.isArray(k)) add(el, k);
    else el.append(k instanceof Node ? k : document.createTextNode(String(k)));
  }
}

let ids = 0;
export function uid(p) { return `${p}-${++ids}`; }

// A labelled control in a .field: returns {wrap, control, error}.
export function field(label, control, opts = {}) {
  const id = control.id || uid('f');
  control.id = id;
  const err = h('div', { class: 'error', id: id + '-err', role: 'alert' });
  const hint = opts.hint ? h('div', { class: 'muted', id: id + '-hint', text: opts.hint }) : null;
  control.setAttribute('aria-describedby', [hint ? id + '-hint' : '', id + '-err'].join(' ').trim());
  const wrap = h('div', { class: 'field' + (opts.narrow ? ' narrow' : '') },
    h('label', { for: id, text: label }), control, hint, err);
  return { wrap, control, error: err };
}

export function select(options, attrs = {}) {
  return h('select', attrs, options.map(([v, t]) => h('option', { value: v, text: t })));
}

export function table(caption, head, rows) {
  const t = h('table', {},
    h('caption', { class: 'visually-hidden', text: caption }),
    h('thead', {}, h('tr', {}, head.map((c) => (c instanceof Node ? c : h('th', { scope: 'col', text: c }))))),
    h('tbody', {}, rows));
  return h('div', { class: 'table-wrap', tabindex: '0', role: 'region', 'aria-label': caption }, t);
}

export function say(text) {
  const live = document.getElementById('live');
  live.textContent = '';
  setTimeout(() => { live.textContent = text; }, 30);
}

export function badge(sev) {
  const s = sev || 'Low';
  return h('span', { class: 'badge sev-' + s.replace(/[^A-Za-z]/g, ''), text: s });
}

// "1 record", "2 records"
export function count(n, word) { return `${fmtInt(n)} ${word}${Number(n) === 1 ? '' : 's'}`; }

export function fmtInt(n) { return n === null || n === undefined ? '—' : Number(n).toLocaleString('en'); }

export const TYPES = [
  ['email', 'Email'], ['email_domain', 'Email domain'], ['username', 'Username'],
  ['phone_number', 'Phone number'], ['ip_address', 'IP address'],
  ['social_security_number', 'Social security number'], ['password', 'Password'],
  ['password_hash', 'Password hash'], ['bitcoin_address', 'Bitcoin address'],
];

// An http(s) link from breach data, or null.
export function safeHref(u) {
  try {
    const url = new URL(u);
    return url.protocol === 'https:' || url.protocol === 'http:' ? url.href : null;
  } catch (e) { return null; }
}

// A horizontal bar chart drawn as inline SVG, with its numbers in a table for screen readers.
export function barChart(title, rows) {
  const NS = 'http://www.w3.org/2000/svg';
  const bar = 20, gap = 8, labelW = 140, width = 400, max = Math.max(1, ...rows.map((r) => r.value));
  const height = rows.length * (bar + gap) + gap;
  const svg = document.createElementNS(NS, 'svg');
  svg.setAttribute('class', 'chart');
  svg.setAttribute('viewBox', `0 0 ${width} ${Math.max(height, 30)}`);
  svg.setAttribute('aria-hidden', 'true');
  svg.setAttribute('focusable', 'false');
  rows.forEach((r, i) => {
    const y = gap + i * (bar + gap);
    const w = Math.max(2, Math.round(((width - labelW - 56) * r.value) / max));
    const label = document.createElementNS(NS, 'text');
    label.setAttribute('x', 0); label.setAttribute('y', y + bar * 0.72);
    label.setAttribute('font-size', '13'); label.setAttribute('fill', '#1b1f24');
    label.textContent = r.label.length > 19 ? r.label.slice(0, 18) + '…' : r.label;
    const rect = document.createElementNS(NS, 'rect');
    rect.setAttribute('x', labelW); rect.setAttribute('y', y);
    rect.setAttribute('width', w); rect.setAttribute('height', bar);
    rect.setAttribute('fill', r.color || '#1d5fa8');
    const val = document.createElementNS(NS, 'text');
    val.setAttribute('x', labelW + w + 6); val.setAttribute('y', y + bar * 0.72);
    val.setAttribute('font-size', '13'); val.setAttribute('fill', '#1b1f24');
    val.textContent = fmtInt(r.value);
    svg.append(label, rect, val);
  });
  const data = h('table', { class: 'visually-hidden' }, h('caption', { text: title }),
    h('thead', {}, h('tr', {}, h('th', { scope: 'col', text: 'Name' }), h('th', { scope: 'col', text: 'Records' }))),
    h('tbody', {}, rows.map((r) => h('tr', {}, h('td', { text: r.label }), h('td', { class: 'num', text: fmtInt(r.value) })))));
  return h('figure', {}, h('figcaption', { text: title }), svg, data);
}

// A breach's logo, only from this server: the operator's files served at /console/logos/
// (breachd --console-logos DIR). Any other site_logo (another host) is not shown: the CSP
// allows no other origin, and fetching it would tell that host who looks at which breach.
export function logo(url, size) {
  if (typeof url !== 'string' || !/^\/console\/logos\/[A-Za-z0-9][A-Za-z0-9._-]*$/.test(url)) return null;
  return h('img', { class: 'logo', src: url, alt: '', width: String(size), height: String(size) });
}
