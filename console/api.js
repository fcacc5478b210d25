// The API as the console calls it: the session cookie (HttpOnly, never readable here)
// authenticates, and every write carries the session's CSRF token. Nothing is stored in the
// browser: the token and the base path live in this module's memory for the page's life.
const session = { csrf: '', base: '/v7', key: null };
let onEnded = () => {};

export class ApiError extends Error {
  constructor(status, body) {
    super((body && body.message) || `the server answered ${status}`);
    this.status = status;
    this.body = body || {};
    this.code = this.body.error || '';
  }
}

export function setSession(s) {
  session.csrf = s.csrf_token;
  session.base = s.api_base || '/v7';
  session.key = s.key;
}
export function currentKey() { return session.key; }
export function onSessionEnded(fn) { onEnded = fn; }
export function apiUrl(path) { return session.base + path; }

async function bodyOf(r) {
  const t = await r.text();
  if (!t) return null;
  try { return JSON.parse(t); } catch (e) { return { message: t }; }
}

// path below the v7 base (/console/session as is); opts: method, json, body, headers, accept,
// raw (return the Response of a 2xx).
export async function api(path, opts = {}) {
  const method = opts.method || 'GET';
  const headers = Object.assign({}, opts.headers || {});
  let body = opts.body;
  if (opts.json !== undefined) {
    headers['Content-Type'] = 'application/json';
    body = JSON.stringify(opts.json);
  }
  if (method !== 'GET' && method !== 'HEAD') headers['X-CSRF-Token'] = session.csrf;
  if (opts.accept) headers['Accept'] = opts.accept;
  const url = path.startsWith('/console/session') ? path : session.base + path;
  const r = await fetch(url, { method, headers, body, credentials: 'same-origin', cache: 'no-store' });
  if (r.status === 401 && !path.startsWith('/console/session')) {
    const b = await bodyOf(r);
    onEnded(b && b.message);
    throw new ApiError(401, b);
  }
  if (!r.ok) throw new ApiError(r.status, await bodyOf(r));
  if (opts.raw) return r;
  return r.status === 204 ? null : bodyOf(r);
}

export async function signIn(key) {
  const r = await fetch('/console/session', {
    method: 'POST', headers: { 'x-api-key': key }, credentials: 'same-origin', cache: 'no-store' });
  const b = await bodyOf(r);
  if (!r.ok) throw new ApiError(r.status, b);
  setSession(b);
  return b;
}

export async function whoAmI() {
  const r = await fetch('/console/session', { credentials: 'same-origin', cache: 'no-store' });
  if (!r.ok) return null;
  const b = await bodyOf(r);
  setSession(b);
  return b;
}

export async function signOut() {
  await fetch('/console/session', {
    method: 'DELETE', headers: { 'X-CSRF-Token': session.csrf }, credentials: 'same-origin' });
  session.csrf = '';
  session.key = null;
}

// Saves a Response's body as a file (a blob URL, revoked once used).
export async function download(response, name) {
  const blob = await response.blob();
  const url = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10000);
}
