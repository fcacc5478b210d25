// The web console in a real browser (issue 34): Debian's chromium driven by playwright-core,
// against breachd and stores built by the real breachctl. Each page's main task is done as
// an analyst would and checked against the API's own answer; axe (@axe-core/playwright)
// must find no serious or critical violation on any page; the security headers, the cookie's
// attributes, CSRF, sign-out, another store's cookie, the sign-in throttle and a tenant key's
// view are asserted. Screenshots of every page at 1280 and 375 px go to docs/console/ when
// CONSOLE_SCREENSHOTS=1 (make test-console on SQLite sets it).
//
//   node tests/console/run.mjs BUILD_DIR        (BREACHD_STORE=pg with BREACHD_PG_URI: PostgreSQL)
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { AxeBuilder } from '@axe-core/playwright';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const BUILD = path.resolve(process.argv[2] || process.env.BREACHD_BUILD || path.join(ROOT, 'build'));
const STORE = process.env.BREACHD_STORE || 'sqlite';
const PG_URI = process.env.BREACHD_PG_URI || '';
const SHOTS = process.env.CONSOLE_SCREENSHOTS === '1' ? path.join(ROOT, 'docs/console') : null;
const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';
const FIXTURES = path.join(ROOT, 'tests/e2e/fixtures');
const BETA = '22222222-2222-4222-8222-222222222222';
const EPSILON = '55555555-5555-4555-8555-555555555555'; // a breach whose logo is the operator's
const PNG_1PX = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGNYKCsLAAI+ANzO2lQjAAAAAElFTkSuQmCC', 'base64');

let failures = 0, checks = 0;
function check(ok, what) {
  checks++;
  if (!ok) { failures++; console.log('FAIL ' + what); } else if (process.env.VERBOSE) console.log('ok   ' + what);
}
function eq(got, want, what) { check(JSON.stringify(got) === JSON.stringify(want), `${what}: got ${JSON.stringify(got)}, want ${JSON.stringify(want)}`); }

// ---- stores and servers, made with the real programs ----
const cleanups = [];
function psql(uri, sql) {
  const p = spawnSync('psql', [uri, '-X', '-q', '-A', '-t', '-v', 'ON_ERROR_STOP=1', '-c', sql], { encoding: 'utf8' });
  if (p.status !== 0) throw new Error('psql: ' + p.stderr);
  return p.stdout;
}
class Store {
  constructor() {
    this.dir = fs.mkdtempSync(path.join(os.tmpdir(), 'breachd-console-'));
    if (STORE === 'pg') {
      const name = 'console_' + Math.random().toString(16).slice(2, 10);
      psql(PG_URI, `CREATE DATABASE ${name}`);
      this.db = PG_URI.replace(/\/[^/?]*(\?|$)/, `/${name}$1`);
      this.secret = path.join(this.dir, 'store.secret');
      cleanups.push(() => psql(PG_URI, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
    } else {
      this.db = path.join(this.dir, 'store.db');
    }
    cleanups.push(() => fs.rmSync(this.dir, { recursive: true, force: true }));
  }
  args() { return ['--db', this.db].concat(this.secret ? ['--secret', this.secret] : []); }
  ctl(...args) {
    const p = spawnSync(path.join(BUILD, 'breachctl'), [...args, ...this.args()], { encoding: 'utf8', env: { ...process.env, BREACHD_CONFIG: 'none' } });
    if (p.status !== 0) throw new Error(`breachctl ${args.join(' ')}: ${p.stderr}`);
    return p.stdout.trim();
  }
  write(name, text) { const f = path.join(this.dir, name); fs.writeFileSync(f, text); return f; }
  records(name, rows) { return this.ctl('import', 'records', this.write(name, rows.map((r) => JSON.stringify(r)).join('\n') + '\n')); }
}
function startServer(store, extra = []) {
  return new Promise((resolve, reject) => {
    const proc = spawn(path.join(BUILD, 'breachd'), [...store.args(), '--listen', '127.0.0.1:0', '--threads', '2',
      '--webhook-allow', '127.0.0.0/8', ...extra], { env: { ...process.env, BREACHD_CONFIG: 'none' }, stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    const timer = setTimeout(() => reject(new Error('breachd did not start: ' + err)), 20000);
    proc.stderr.on('data', (d) => {
      err += d;
      const m = /-> port (\d+)/.exec(err);
      if (m && !proc.port) { proc.port = Number(m[1]); clearTimeout(timer); resolve(proc); }
    });
    proc.on('exit', (c) => { if (!proc.port) reject(new Error(`breachd exited ${c}: ${err}`)); });
    cleanups.unshift(() => proc.kill('SIGTERM'));
  });
}

// ---- the API as a script calls it, to compare the pages with ----
async function call(base, p, { key, cookie, method = 'GET', headers = {}, body } = {}) {
  const h = { ...headers };
  if (key) h['x-api-key'] = key;
  if (cookie) h.cookie = cookie;
  const r = await fetch(base + p, { method, headers: h, body, redirect: 'manual' });
  const text = await r.text();
  let json = null;
  try { json = JSON.parse(text); } catch (e) { /* not JSON */ }
  return { status: r.status, headers: r.headers, text, json };
}
function consoleHeaders(r, what) {
  check((r.headers.get('content-security-policy') || '').startsWith("default-src 'self'; frame-ancestors 'none'"), `${what}: CSP ${r.headers.get('content-security-policy')}`);
  eq(r.headers.get('referrer-policy'), 'no-referrer', `${what}: Referrer-Policy`);
}

// ---- the browser ----
const axeFindings = [];
async function axe(page, name) {
  const res = await new AxeBuilder({ page }).analyze();
  const bad = res.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  for (const v of bad) axeFindings.push(`${name}: ${v.id} (${v.impact}) ${v.nodes.map((n) => n.target.join(' ')).slice(0, 3).join(', ')}`);
  check(bad.length === 0, `axe on ${name}: ${bad.map((v) => v.id).join(', ')}`);
}
async function shoot(page, name) {
  if (!SHOTS) return;
  fs.mkdirSync(SHOTS, { recursive: true });
  const size = page.viewportSize();
  await page.screenshot({ path: path.join(SHOTS, `${name}-1280.png`), fullPage: true });
  await page.setViewportSize({ width: 375, height: 740 });
  await page.waitForTimeout(100);
  await page.screenshot({ path: path.join(SHOTS, `${name}-375.png`), fullPage: true });
  await page.setViewportSize(size);
}
async function visit(page, hash, heading) {
  await page.evaluate((h) => { location.hash = h; }, hash);
  await page.getByRole('heading', { level: 1, name: heading }).waitFor();
}

async function main() {
  // a webhook receiver for the watch
  const hooks = [];
  const receiver = http.createServer((q, s) => { let b = ''; q.on('data', (d) => { b += d; }); q.on('end', () => { hooks.push(b); s.end(); }); });
  await new Promise((r) => receiver.listen(0, '127.0.0.1', r));
  cleanups.push(() => receiver.close());

  const store = new Store();
  store.ctl('init');
  store.ctl('import', 'breaches', path.join(FIXTURES, 'breaches.jsonl'));
  store.ctl('import', 'cards', path.join(FIXTURES, 'cards.csv'));
  store.ctl('import', 'breaches', store.write('epsilon.jsonl', JSON.stringify({ uuid: EPSILON, source_name: 'Epsilon Mail',
    site_domain: 'logo.example', date_leaked: '2022-03-04', breach_type: 'Database', leaked_data_types: 'email,password',
    description: 'A breach whose logo the operator placed.', site_logo: '/console/logos/epsilon.png' }) + '\n'));
  const logos = path.join(store.dir, 'logos');
  fs.mkdirSync(logos);
  fs.writeFileSync(path.join(logos, 'epsilon.png'), PNG_1PX);
  store.records('r1.jsonl', [
    { breach_uuid: BETA, email: 'alice@example.com', user_name: 'alice1', password: 'hunter2', ip_address: '192.0.2.7' },
    { breach_uuid: BETA, email: 'carol@example.com', password: 'letmein99' },
    { breach_uuid: '11111111-1111-4111-8111-111111111111', email: 'dave@tenant.example', password_hash: '5f4dcc3b5aa765d61d8327deb882cf99' },
    { breach_uuid: EPSILON, email: 'frank@logo.example', password: 'frankpass3' },
  ]);
  const key = store.ctl('keys', 'create', '--name', 'analyst');
  let tenantKey = null;
  try {
    const tid = store.ctl('tenants', 'add', 'Acme', '--domain', 'tenant.example');
    tenantKey = store.ctl('keys', 'create', '--name', 'acme', '--tenant', tid);
  } catch (e) { console.log('note: no tenant keys here (' + e.message.split('\n')[0] + ')'); }
  const srv = await startServer(store, ['--console-logos', logos]);
  const B = `http://127.0.0.1:${srv.port}`;
  const logoReply = await call(B, '/console/logos/epsilon.png');
  eq([logoReply.status, logoReply.headers.get('content-type')], [200, 'image/png'], 'a logo the operator placed');
  consoleHeaders(logoReply, '/console/logos/epsilon.png');
  eq((await call(B, '/console/logos/nothing.png')).status, 404, 'a logo that is not there');

  // the pages themselves: security headers, no key needed, gzip and ETag
  for (const f of ['', 'app.js', 'console.css', 'api.js']) {
    const r = await call(B, '/console/' + f);
    eq(r.status, 200, `/console/${f}`);
    consoleHeaders(r, `/console/${f}`);
    check(/^W?\/?"/.test(r.headers.get('etag') || ''), `/console/${f} has an ETag`);
  }
  const etag = (await call(B, '/console/app.js')).headers.get('etag');
  eq((await call(B, '/console/app.js', { headers: { 'if-none-match': etag } })).status, 304, 'app.js revalidated');
  consoleHeaders(await call(B, '/console/nothing.js'), '404 under /console/');

  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'] });
  cleanups.unshift(() => browser.close());
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, acceptDownloads: true });
  const page = await context.newPage();
  const cspErrors = [];
  page.on('console', (m) => { if (m.type() === 'error' && /Content Security Policy/i.test(m.text())) cspErrors.push(m.text()); });
  page.setDefaultTimeout(15000);

  // sign in
  await page.goto(B + '/console/');
  await page.getByRole('heading', { name: 'Sign in' }).waitFor();
  await axe(page, 'sign-in');
  await shoot(page, 'signin');
  await page.getByLabel('API key', { exact: true }).fill('bd_not_a_real_key_at_all');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.locator('.error', { hasText: 'not valid' }).waitFor();
  await page.getByLabel('API key', { exact: true }).fill(key);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { level: 1, name: 'Search' }).waitFor();
  const cookies = await context.cookies();
  const sc = cookies.find((c) => c.name === 'breachd_session');
  check(sc && sc.httpOnly && sc.sameSite === 'Strict' && sc.path === '/' && !sc.secure, `session cookie attributes ${JSON.stringify(sc && { h: sc.httpOnly, s: sc.sameSite, p: sc.path })}`);
  check(!sc.value.includes(key) && !sc.value.includes(key.slice(3, 20)), 'the cookie does not show the key');
  const cookie = `breachd_session=${sc.value}`;
  const stored = await page.evaluate(() => JSON.stringify(localStorage) + JSON.stringify(sessionStorage) + location.href);
  check(!stored.includes(key), 'the key is in neither storage nor the URL');
  const raw = await call(B, '/console/session', { key, method: 'POST' });
  const setCookie = raw.headers.get('set-cookie') || '';
  check(/HttpOnly/.test(setCookie) && /SameSite=Strict/.test(setCookie) && /Path=\//.test(setCookie) && /Max-Age=\d+/.test(setCookie), 'Set-Cookie: ' + setCookie.replace(/=[^;]+;/, '=…;'));
  consoleHeaders(raw, 'POST /console/session');
  eq(raw.status, 201, 'sign-in by script');

  // search an email: the breach and the masked password the API gives
  const api = (await call(B, '/v7/breach-search?type=email&account=alice@example.com', { key })).json;
  await page.getByLabel('Type', { exact: true }).selectOption('email');
  await page.getByLabel('Account', { exact: true }).fill('alice@example.com');
  await page.getByRole('button', { name: 'Search' }).click();
  const row = page.locator('table tbody tr').first();
  await row.waitFor();
  const cells = await row.locator('td').allInnerTexts();
  eq(cells[0], api.data[0].breach_details.site_name, 'search: breach');
  eq(cells[2], api.data[0].breached_data.password, 'search: masked password');
  eq(api.data[0].breached_data.password, '*****r2', 'the API masks the password');
  check(cells[4].includes(api.data[0].severity), 'search: severity badge');
  await axe(page, 'search');
  const dl = page.waitForEvent('download');
  await page.getByRole('button', { name: 'Download CSV' }).click();
  const csv = fs.readFileSync(await (await dl).path(), 'utf8');
  check(csv.startsWith('breach_id,breach_name') && csv.includes('alice@example.com') && csv.includes('*****r2'), 'search CSV');
  await shoot(page, 'search');
  // a breach's logo where the operator placed one (served here); none from another host
  await page.getByLabel('Account', { exact: true }).fill('frank@logo.example');
  await page.getByRole('button', { name: 'Search' }).click();
  await page.getByRole('cell', { name: 'Epsilon Mail' }).waitFor();
  const shownLogo = page.locator('table tbody tr td img.logo');
  await shownLogo.waitFor();
  await page.waitForFunction(() => document.querySelector('td img.logo').complete).catch(() => {});
  eq(await shownLogo.evaluate((i) => [i.getAttribute('src'), i.complete && i.naturalWidth]), ['/console/logos/epsilon.png', 1], 'search: the breach\'s logo, loaded');
  await page.getByLabel('Account', { exact: true }).fill('nobody@example.com');
  await page.getByRole('button', { name: 'Search' }).click();
  await page.getByText('No records found for this search.').waitFor();
  await page.getByLabel('Account', { exact: true }).fill('not an email');
  await page.getByRole('button', { name: 'Search' }).click();
  const accountErr = page.locator('#' + (await page.getByLabel('Account', { exact: true }).getAttribute('id')) + '-err');
  await accountErr.filter({ hasText: /./ }).waitFor();
  const apiErr = (await call(B, '/v7/breach-search?type=email&account=not%20an%20email', { key })).json;
  eq(await accountErr.innerText(), apiErr.message, 'search: the API\'s message beside the field');

  // cards: a syntax error at its position, then a query that works
  await visit(page, '#/cards', 'Cards');
  await page.getByLabel('Query', { exact: true }).fill('owner:(john');
  await page.getByRole('button', { name: 'Search' }).click();
  const bad = (await call(B, '/v7/credit-card-search?query=' + encodeURIComponent('owner:(john'), { key })).json;
  await page.locator('pre.caret').waitFor();
  check((await page.locator('.error').first().innerText()).includes(bad.message), `cards: error ${bad.message}`);
  await page.getByLabel('Query', { exact: true }).fill('owner:john');
  await page.getByRole('button', { name: 'Search' }).click();
  await page.locator('table tbody tr').first().waitFor();
  const cardsApi = (await call(B, '/v7/credit-card-search?size=20&query=owner:john', { key })).json;
  eq(await page.locator('table tbody tr').count(), cardsApi.numberOfElements, 'cards: rows as the API');
  await axe(page, 'cards');
  await shoot(page, 'cards');

  // catalog: sort by size, filter, a breach's page
  await visit(page, '#/catalog', 'Catalog');
  const catalog = (await call(B, '/v7/breaches', { key })).json;
  await page.locator('table tbody tr').first().waitFor();
  eq(await page.locator('table tbody tr').count(), catalog.length, 'catalog: every breach');
  await page.getByRole('button', { name: /^Size/ }).click();
  const biggest = catalog.slice().sort((a, b) => b.pwned_count - a.pwned_count)[0];
  eq(await page.locator('table tbody tr').first().locator('td').first().innerText(), biggest.source_name, 'catalog: sorted by size');
  await page.getByLabel('Filter', { exact: true }).fill('beta');
  eq(await page.locator('table tbody tr').count(), 1, 'catalog: filtered');
  await axe(page, 'catalog');
  await shoot(page, 'catalog');
  const delta = catalog.find((b) => b.source_name === 'Delta Leak');
  eq(delta.site_logo, 'https://delta.example/logo.png', 'catalog: a logo on another host');
  await visit(page, '#/breach/' + delta.uuid, 'Delta Leak');
  eq(await page.locator('img').count(), 0, 'breach: no logo from another host');
  await visit(page, '#/catalog', 'Catalog');
  await page.locator('table tbody tr').first().waitFor();
  await page.getByRole('link', { name: 'Epsilon Mail' }).click();
  await page.getByRole('heading', { level: 1, name: 'Epsilon Mail' }).waitFor();
  await page.locator('h1 img.logo').waitFor();
  await page.waitForFunction(() => document.querySelector('h1 img.logo').complete).catch(() => {});
  eq(await page.locator('h1 img.logo').evaluate((i) => i.complete && i.naturalWidth), 1, 'breach: its logo, loaded');
  await visit(page, '#/catalog', 'Catalog');
  await page.locator('table tbody tr').first().waitFor();
  await page.getByLabel('Filter', { exact: true }).fill('beta');
  await page.getByRole('link', { name: 'Beta Shop' }).click();
  await page.getByRole('heading', { level: 1, name: 'Beta Shop' }).waitFor();
  await axe(page, 'breach');
  await shoot(page, 'breach');

  // domain dashboard: the first visit sets the key's change-feed cursor (kept by the server)
  eq((await call(B, '/v7/console/seen', { key })).json.seen, null, 'domain: no cursor before the first visit');
  await visit(page, '#/domain', 'Domain dashboard');
  await page.locator('#since[data-state="first"]').waitFor();
  check((await page.locator('#since').innerText()).includes('This is your first visit'), 'domain: the first visit says so');
  const firstMark = (await call(B, '/v7/console/seen', { key })).json;
  eq(firstMark.seen, firstMark.data_version, 'domain: the first visit moved the cursor to the data version');
  await page.getByLabel('Domain', { exact: true }).fill('example.com');
  await page.getByRole('button', { name: 'Show' }).click();
  await page.locator('svg.chart').nth(1).waitFor();
  const dom = (await call(B, '/v7/breach-search?type=email_domain&account=example.com', { key })).json;
  check((await page.locator('#dash-h + p').innerText()).startsWith(`${dom.records_found} record${dom.records_found === 1 ? '' : 's'} in `), 'domain: count as the API');
  // an import by the real CLI after that visit shows up as new on the next, then not again
  store.records('r3.jsonl', [{ breach_uuid: BETA, email: 'erin@example.com', password: 'erinpass7' }]);
  const arrived = (await call(B, '/v7/changes?since=' + firstMark.seen, { key })).json.changes.reverse();
  check(arrived.length > 0 && arrived.some((c) => c.kind === 'records_added' && c.count === 1), 'domain: the API\'s feed holds the import');
  await visit(page, '#/status', 'Status');
  await visit(page, '#/domain', 'Domain dashboard');
  await page.locator('#since[data-state="new"]').waitFor();
  const newRows = await page.locator('#since tbody tr').evaluateAll((trs) => trs.map((tr) => [...tr.cells].map((td) => td.innerText)));
  eq(newRows, arrived.map((c) => [c.at, c.kind.replace(/_/g, ' '), c.source_name || c.leak_name || '—', c.count.toLocaleString('en')]), 'domain: what arrived since the last visit, as the feed');
  const secondMark = (await call(B, '/v7/console/seen', { key })).json;
  eq(secondMark.seen, secondMark.data_version, 'domain: the visit moved the cursor');
  check(secondMark.seen > firstMark.seen, 'domain: the cursor moved past the import');
  await page.getByLabel('Domain', { exact: true }).fill('example.com');
  await page.getByRole('button', { name: 'Show' }).click();
  await page.locator('svg.chart').nth(1).waitFor();
  await axe(page, 'domain');
  await shoot(page, 'domain');
  await visit(page, '#/status', 'Status');
  await visit(page, '#/domain', 'Domain dashboard');
  await page.locator('#since[data-state="none"]').waitFor();
  check((await page.locator('#since').innerText()).includes('Nothing new since your last visit.'), 'domain: nothing new on the visit after');

  // a watch, a matching import by the real CLI, the alert, its triage
  await visit(page, '#/watches', 'Watches and alerts');
  await page.getByLabel('Type', { exact: true }).selectOption('email');
  await page.getByLabel('Account', { exact: true }).fill('bob@example.com');
  await page.getByLabel('Webhook URL', { exact: true }).fill(`http://127.0.0.1:${receiver.address().port}/hook`);
  await page.getByLabel('Signing secret', { exact: true }).fill('whsec-console-0123456789');
  await page.getByRole('button', { name: 'Create watch' }).click();
  await page.getByRole('cell', { name: 'bob@example.com', exact: true }).waitFor();
  store.records('r2.jsonl', [{ breach_uuid: BETA, email: 'bob@example.com', password: 'bobpass1' }]);
  let alertRow = null;
  for (let i = 0; i < 40 && !alertRow; i++) {
    await page.getByRole('button', { name: 'Refresh alerts' }).click();
    await page.waitForTimeout(250);
    if (await page.locator('tr[data-event]').count()) alertRow = page.locator('tr[data-event]').first();
  }
  check(alertRow !== null, 'the alert appears');
  if (alertRow) {
    const id = await alertRow.getAttribute('data-event');
    await alertRow.getByRole('combobox').selectOption('acknowledged');
    await alertRow.getByText('Saved').waitFor();
    let shown = '';
    for (let i = 0; i < 100 && shown !== 'acknowledged'; i++) {
      shown = (await call(B, '/v7/alerts', { key })).json.alerts.find((a) => a.event_id === id).triage;
      if (shown !== 'acknowledged') await new Promise((r) => setTimeout(r, 10));
    }
    eq(shown, 'acknowledged', 'triage stored and shown by the API');
  }
  await axe(page, 'watches');
  await shoot(page, 'watches');
  // alerts are read by following the API's cursor: a first page of 1,000 (made up here) and
  // the real one after it; the newest (the real alert) first, 100 at a time
  const realAlerts = (await call(B, '/v7/alerts?limit=1000', { key })).json;
  const fake = Array.from({ length: 1000 }, (_, i) => ({ ...realAlerts.alerts[0], event_id: 'fake-' + i, cursor: i + 1, triage: 'new' }));
  const asked = [];
  await page.route(/\/v7\/alerts\?/, async (rt) => {
    const since = new URL(rt.request().url()).searchParams.get('since');
    asked.push(since);
    if (since === '0') await rt.fulfill({ json: { alerts: fake, next_cursor: 1000 } });
    else if (since === '1000') await rt.fulfill({ json: { alerts: realAlerts.alerts, next_cursor: 1000 + realAlerts.alerts.length } });
    else await rt.fulfill({ json: { alerts: [], next_cursor: Number(since) } });
  });
  await page.getByRole('button', { name: 'Refresh alerts' }).click();
  await page.getByText(`Showing 100 of ${(1000 + realAlerts.alerts.length).toLocaleString('en')} alerts.`).waitFor();
  eq(asked, ['0', '1000'], 'alerts: the cursor followed to the end');
  eq(await page.locator('tr[data-event]').first().getAttribute('data-event'), realAlerts.alerts[realAlerts.alerts.length - 1].event_id, 'alerts: the newest first');
  await page.getByRole('button', { name: 'Show older alerts' }).click();
  eq(await page.locator('tr[data-event]').count(), 200, 'alerts: 100 more shown');
  await page.unroute(/\/v7\/alerts\?/);

  // a bulk lookup: upload, progress, the CSV
  await visit(page, '#/jobs', 'Bulk lookups');
  await page.getByLabel('Type', { exact: true }).selectOption('email');
  await page.getByLabel('File of identities', { exact: true }).setInputFiles({ name: 'ids.txt', mimeType: 'text/plain', buffer: Buffer.from('alice@example.com\nnobody@example.org\n') });
  await page.getByRole('button', { name: 'Upload' }).click();
  await page.getByRole('button', { name: 'Download CSV' }).waitFor({ timeout: 30000 });
  const jd = page.waitForEvent('download');
  await page.getByRole('button', { name: 'Download CSV' }).click();
  const jobCsv = fs.readFileSync(await (await jd).path(), 'utf8');
  check(jobCsv.startsWith('index,type,account') && jobCsv.includes('alice@example.com') && jobCsv.includes('nobody@example.org'), 'job CSV');
  await axe(page, 'jobs');
  await shoot(page, 'jobs');

  await visit(page, '#/usage', 'Usage');
  await axe(page, 'usage');
  await shoot(page, 'usage');
  await visit(page, '#/status', 'Status');
  const st = (await call(B, '/v7/status', { key })).json;
  check((await page.locator('dl').innerText()).includes(String(st.data_version)), 'status: data version');
  await axe(page, 'status');
  await shoot(page, 'status');

  // CSRF: the cookie alone does not write
  const noCsrf = await call(B, '/v7/watches', { cookie, method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'type=email&account=x%40example.com' });
  eq([noCsrf.status, noCsrf.json && noCsrf.json.error], [403, 'csrf_failed'], 'a form post without the CSRF token');
  eq((await call(B, '/v7/usage', { cookie })).status, 200, 'the cookie reads');

  // sign out: the old cookie is refused
  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.getByRole('heading', { name: 'Sign in' }).waitFor();
  // a read sees what was committed 2 ms before it began (shared read views): poll briefly
  let after = await call(B, '/v7/usage', { cookie });
  for (let i = 0; i < 100 && after.status !== 401; i++) {
    await new Promise((r) => setTimeout(r, 10));
    after = await call(B, '/v7/usage', { cookie });
  }
  eq([after.status, after.json && after.json.error], [401, 'session_expired'], 'the old cookie after sign-out');
  check(cspErrors.length === 0, 'no CSP violation in the pages: ' + cspErrors.join('; '));

  // a session of one store is refused by another; the sign-in throttle
  const other = new Store();
  other.ctl('init');
  const otherKey = other.ctl('keys', 'create', '--name', 'other');
  const srv2 = await startServer(other);
  const B2 = `http://127.0.0.1:${srv2.port}`;
  const s2 = await call(B, '/console/session', { key, method: 'POST' });
  const c2 = (s2.headers.get('set-cookie') || '').split(';')[0];
  eq((await call(B2, '/v7/usage', { cookie: c2 })).status, 401, 'another store\'s session cookie');
  for (let i = 0; i < 5; i++) await call(B2, '/console/session', { key: 'bd_wrong' + i, method: 'POST' });
  const sixth = await call(B2, '/console/session', { key: otherKey, method: 'POST' });
  eq(sixth.status, 429, 'the sixth sign-in after five failures');

  // a tenant key sees its tenant only
  if (tenantKey) {
    const tctx = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const tp = await tctx.newPage();
    tp.setDefaultTimeout(15000);
    await tp.goto(B + '/console/');
    await tp.getByLabel('API key', { exact: true }).fill(tenantKey);
    await tp.getByRole('button', { name: 'Sign in' }).click();
    await tp.getByRole('heading', { level: 1, name: 'Search' }).waitFor();
    await tp.getByLabel('Type', { exact: true }).selectOption('email');
    await tp.getByLabel('Account', { exact: true }).fill('alice@example.com');
    await tp.getByRole('button', { name: 'Search' }).click();
    const terr = tp.locator('.error', { hasText: /./ }).first();
    await terr.waitFor();
    const tapi = (await call(B, '/v7/breach-search?type=email&account=alice@example.com', { key: tenantKey })).json;
    eq(await terr.innerText(), tapi.message, 'tenant: another domain refused, the API\'s words');
    await tp.getByLabel('Type', { exact: true }).selectOption('email_domain');
    await tp.getByLabel('Account', { exact: true }).fill('tenant.example');
    await tp.getByRole('button', { name: 'Search' }).click();
    await tp.locator('table tbody tr').first().waitFor();
    check((await tp.locator('table').innerText()).includes('dave@tenant.example') && !(await tp.locator('table').innerText()).includes('alice'), 'tenant: its own records only');
    // the domain dashboard: another tenant's domain refused, its own shown
    await visit(tp, '#/domain', 'Domain dashboard');
    await tp.getByLabel('Domain', { exact: true }).fill('example.com');
    await tp.getByRole('button', { name: 'Show' }).click();
    const derr = tp.locator('.error', { hasText: /./ }).first();
    await derr.waitFor();
    const dapi = (await call(B, '/v7/breach-search?type=email_domain&account=example.com', { key: tenantKey })).json;
    eq(await derr.innerText(), dapi.message, 'tenant: another domain\'s dashboard refused');
    await tp.getByLabel('Domain', { exact: true }).fill('tenant.example');
    await tp.getByRole('button', { name: 'Show' }).click();
    await tp.locator('svg.chart').first().waitFor();
    check((await tp.locator('#dash-h + p').innerText()).startsWith('1 record in 1 breach.'), 'tenant: its domain\'s dashboard');
    // cards: refused without the cards type, in the API's words
    await visit(tp, '#/cards', 'Cards');
    await tp.getByLabel('Query', { exact: true }).fill('owner:john');
    await tp.getByRole('button', { name: 'Search' }).click();
    const cerr = tp.locator('.error', { hasText: /./ }).first();
    await cerr.waitFor();
    const capi = await call(B, '/v7/credit-card-search?size=20&query=owner:john', { key: tenantKey });
    eq([capi.status, capi.json.error], [403, 'type_not_allowed'], 'tenant: the API refuses cards');
    eq(await cerr.innerText(), capi.json.message, 'tenant: the cards page shows the API\'s refusal');
    eq(await tp.locator('table').count(), 0, 'tenant: no card shown');
    // catalog: the catalog every key shares, as the API gives it to this key
    await visit(tp, '#/catalog', 'Catalog');
    await tp.locator('table tbody tr').first().waitFor();
    const tcat = (await call(B, '/v7/breaches', { key: tenantKey })).json;
    eq(await tp.locator('table tbody tr').count(), tcat.length, 'tenant: the catalog as the API gives it');
    // bulk lookups: another tenant's identity out of scope, its own found
    await visit(tp, '#/jobs', 'Bulk lookups');
    await tp.getByLabel('Type', { exact: true }).selectOption('email');
    await tp.getByLabel('File of identities', { exact: true }).setInputFiles({ name: 'ids.txt', mimeType: 'text/plain', buffer: Buffer.from('alice@example.com\ndave@tenant.example\n') });
    await tp.getByRole('button', { name: 'Upload' }).click();
    await tp.getByRole('button', { name: 'Download CSV' }).waitFor({ timeout: 30000 });
    const tjd = tp.waitForEvent('download');
    await tp.getByRole('button', { name: 'Download CSV' }).click();
    const tcsv = fs.readFileSync(await (await tjd).path(), 'utf8').trim().split(/\r?\n/);
    const lineOf = (who) => tcsv.find((l) => l.includes(`"${who}"`)) || '';
    eq(lineOf('alice@example.com'), '0,email,"alice@example.com",0' + ','.repeat(16) + 'out_of_scope', 'tenant: another tenant\'s identity out of scope in the job');
    check(lineOf('dave@tenant.example').startsWith('1,email,"dave@tenant.example",1,"11111111-1111-4111-8111-111111111111"') && !tcsv.some((l) => l.includes('hunter2') || l.includes('carol')), 'tenant: its own identity found, nothing of others: ' + lineOf('dave@tenant.example'));
    // watches: only its own domain's identities
    await visit(tp, '#/watches', 'Watches and alerts');
    await tp.getByLabel('Type', { exact: true }).selectOption('email');
    await tp.getByLabel('Account', { exact: true }).fill('bob@example.com');
    await tp.getByLabel('Webhook URL', { exact: true }).fill('http://127.0.0.1:9/hook');
    await tp.getByLabel('Signing secret', { exact: true }).fill('whsec-console-0123456789');
    await tp.getByRole('button', { name: 'Create watch' }).click();
    await tp.locator('.error', { hasText: /./ }).first().waitFor();
    check((await tp.getByText('You have no watches yet.').count()) === 1, 'tenant: no watch outside its domains');
    check((await tp.getByText('No alerts yet.').count()) === 1, 'tenant: another key\'s alerts not shown');
    await visit(tp, '#/status', 'Status');
    check((await tp.locator('dl').innerText()).includes('not shown to a tenant key'), 'tenant: corpus counts hidden');
    await tctx.close();
  }
  await browser.close();
}

const t0 = Date.now();
try {
  await main();
} catch (e) {
  failures++;
  console.log('FAIL ' + (e.stack || e));
} finally {
  for (const c of cleanups) { try { await c(); } catch (e) { /* best effort */ } }
}
for (const f of axeFindings) console.log('axe: ' + f);
console.log(`console (${STORE}): ${checks} checks, ${failures} failed, ${((Date.now() - t0) / 1000).toFixed(1)} s`);
process.exit(failures ? 1 : 0);
