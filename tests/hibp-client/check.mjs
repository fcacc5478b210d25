// Runs the published `hibp` client library against breachd's HIBP API v3 through the
// library's baseUrl option and prints what each call returned (or threw) as one JSON
// object, for tests/e2e/test_hibp_client.py to compare. Environment: HIBP_BASE (the v3
// base URL), HIBP_KEY (an enterprise key), HIBP_SLOW_KEY (a key with a budget of 1/h),
// HIBP_TENANT_KEY (a key of a tenant whose domain is example.com),
// PW_BASE (the Pwned Passwords base URL: the server's root).
import * as hibp from 'hibp';

const base = { baseUrl: process.env.HIBP_BASE, apiKey: process.env.HIBP_KEY, userAgent: 'breachd-e2e' };

async function outcome(call) {
  try {
    return { value: await call() };
  } catch (e) {
    return { error: e.name, message: e.message, retryAfterSeconds: e.retryAfterSeconds };
  }
}

const out = {
  truncated: await outcome(() => hibp.breachedAccount('jane@example.com', base)),
  full: await outcome(() => hibp.breachedAccount('jane@example.com',
    { ...base, truncate: false, includeUnverified: false, domain: 'alpha.example' })),
  unknown: await outcome(() => hibp.breachedAccount('nobody@example.com', base)),
  bad: await outcome(() => hibp.breachedAccount('not-an-email', base)),
  breach: await outcome(() => hibp.breach('AlphaForum', base)),
  noBreach: await outcome(() => hibp.breach('Nope', base)),
  breaches: await outcome(() => hibp.breaches({ ...base, domain: 'alpha.example' })),
  dataClasses: await outcome(() => hibp.dataClasses(base)),
  domain: await outcome(() => hibp.breachedDomain('example.com', base)),
  subscription: await outcome(() => hibp.subscriptionStatus(base)),
  latest: await outcome(() => hibp.latestBreach(base)),
  noDomains: await outcome(() => hibp.subscribedDomains(base)),
  tenantDomains: await outcome(() => hibp.subscribedDomains({ ...base, apiKey: process.env.HIBP_TENANT_KEY })),
  pastes: await outcome(() => hibp.pasteAccount('Jane@Example.com', base)),
  noPastes: await outcome(() => hibp.pasteAccount('bob@example.com', base)),
  searched: await outcome(() => hibp.search('jane@example.com', base)),
  searchedNothing: await outcome(() => hibp.search('nobody@example.com', base)),
  stealerByEmail: await outcome(() => hibp.stealerLogsByEmail('sam@stealer.example', base)),
  stealerByWebsite: await outcome(() => hibp.stealerLogsByWebsiteDomain('shop.example', base)),
  stealerByEmailDomain: await outcome(() => hibp.stealerLogsByEmailDomain('stealer.example', base)),
  noStealer: await outcome(() => hibp.stealerLogsByEmail('nobody@stealer.example', base)),
  badKey: await outcome(() => hibp.breachedAccount('jane@example.com', { ...base, apiKey: 'bd_wrong' })),
};
// Pwned Passwords ranges: the library's own base URL option for them (the server's root)
const pw = { baseUrl: process.env.PW_BASE, userAgent: 'breachd-e2e' };
out.rangeSha1 = await outcome(() => hibp.pwnedPasswordRange('5BAA6', pw));
out.rangeNtlm = await outcome(() => hibp.pwnedPasswordRange('8846f', { ...pw, mode: 'ntlm' }));
out.rangePadded = await outcome(() => hibp.pwnedPasswordRange('5baa6', { ...pw, addPadding: true }));
out.pwned = await outcome(() => hibp.pwnedPassword('password', pw));
out.notPwned = await outcome(() => hibp.pwnedPassword('not in any breach here', pw));
out.badPrefix = await outcome(() => hibp.pwnedPasswordRange('XYZ12', pw));
const slow = { ...base, apiKey: process.env.HIBP_SLOW_KEY };
await outcome(() => hibp.dataClasses(slow));
out.limited = await outcome(() => hibp.dataClasses(slow));
process.stdout.write(JSON.stringify(out));
