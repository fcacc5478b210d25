"""breachctl tenants and scoped keys (issue 33): tenants add|list|remove, tenants domains
add|remove, keys create --tenant --types --allow-ip --role and keys list's columns, each
change's audit row; exact outputs on either store."""
import json
import unittest

from harness import Ctl, Server

KEYS_HEADER = ["ID", "NAME", "PLAN", "RATE/H", "EXACT/DAY", "QUOTA/MONTH", "CREATED", "EXPIRES",
               "STATUS", "TENANT", "TYPES", "ALLOW_IP", "ROLE"]
OVERLAP = ("is another tenant's domain, or under or above one of another tenant's (see "
           "'tenants list'): tenants never share records\n")


class TenantsCli(unittest.TestCase):
    def setUp(self):
        self.ctl = Ctl().init()

    def tearDown(self):
        self.ctl.cleanup()

    def run_ctl(self, *args, rc=0):
        p = self.ctl.run(*args, check=rc)
        return p.stdout.decode(), p.stderr.decode()

    def tenants(self):
        return self.run_ctl("tenants", "list")[0]

    def audit(self):
        rows = self.ctl.sql("SELECT id, key_id, address, action, target, before, after "
                            "FROM audit ORDER BY id")
        return [(r[3], r[4], json.loads(r[5]) if r[5] not in ("None", "") else None,
                 json.loads(r[6]) if r[6] not in ("None", "") else None, r[1], r[2])
                for r in rows]

    def test_add_prints_the_id_alone_and_list_shows_the_domains_normalised(self):
        out, err = self.run_ctl("tenants", "add", "Acme", "--domain", "ACME.Example.",
                                "--domain=mail.acme.example", "--domain", "acme.test")
        self.assertEqual(out, "1\n")
        self.assertEqual(err, "breachctl: tenant 1 'Acme' created with 3 domains; make its keys "
                              "with 'keys create --tenant 1'\n")
        out, _ = self.run_ctl("tenants", "add", "Beta Corp", "--domain", "@beta.example")
        self.assertEqual(out, "2\n")
        self.assertEqual(self.tenants(),
                         "ID     NAME                     DOMAINS\n"
                         "1      Acme                     acme.example,acme.test,mail.acme.example\n"
                         "2      Beta Corp                beta.example\n")
        self.assertEqual(self.audit()[0], ("tenant.create", "1", None, {
            "id": 1, "name": "Acme", "domains": ["acme.example", "acme.test", "mail.acme.example"]},
            "0", "breachctl"))

    def test_bad_names_domains_and_overlaps_are_refused_and_change_nothing(self):
        self.run_ctl("tenants", "add", "Acme", "--domain", "acme.example")
        cases = [
            (("tenants", "add", "Beta", "--domain", "bad domain"),
             "breachctl tenants add: 'bad domain' is not a domain name: an email domain must be "
             "a host name like example.com\n"),
            (("tenants", "add", "Beta", "--domain", "localhost"),
             "breachctl tenants add: 'localhost' is not a domain name: an email domain must be "
             "a host name like example.com\n"),
            (("tenants", "add", "Beta", "--domain", "beta.example", "--domain", "acme.example"),
             "breachctl tenants add: acme.example " + OVERLAP),
            (("tenants", "add", "Beta", "--domain", "x.acme.example"),
             "breachctl tenants add: x.acme.example " + OVERLAP),
            (("tenants", "add", "Beta", "--domain", "example"),
             "breachctl tenants add: 'example' is not a domain name: an email domain must be a "
             "host name like example.com\n"),
            (("tenants", "add", "Acme", "--domain", "other.example"),
             "breachctl tenants add: a tenant named 'Acme' exists already (see 'tenants "
             "list')\n"),
            (("tenants", "add", "Beta"),
             "breachctl tenants add: give the tenant's name (1 to 64 bytes) and its domains, "
             "like: tenants add Acme --domain acme.example --db PATH\n"),
            (("tenants", "add", "x" * 65, "--domain", "x.example"),
             "breachctl tenants add: give the tenant's name (1 to 64 bytes) and its domains, "
             "like: tenants add Acme --domain acme.example --db PATH\n"),
            (("tenants", "add", "Be\x1bta", "--domain", "x.example"),
             "breachctl tenants add: a tenant's name holds no control characters\n"),
            (("tenants", "add", "Beta", "--domain"),
             "breachctl tenants: --domain needs a value\n"),
            (("tenants", "domains", "add", "1", "acme.example.com..."),
             "breachctl tenants domains add: 'acme.example.com...' is not a domain name: an "
             "email domain must be a host name like example.com\n"),
            (("tenants", "domains", "add", "9", "nine.example"),
             "breachctl tenants domains add: there is no tenant 9 (see 'tenants list')\n"),
            (("tenants", "domains", "remove", "1", "other.example"),
             "breachctl tenants domains remove: tenant 1 has no domain other.example\n"),
            (("tenants", "remove", "9"),
             "breachctl tenants remove: there is no tenant 9 (see 'tenants list')\n"),
            (("tenants", "remove", "x"),
             "breachctl tenants remove: give the tenant's ID (see 'tenants list')\n"),
        ]
        for args, err in cases:
            with self.subTest(args=args):
                out, got = self.run_ctl(*args, rc=2)
                self.assertEqual((out, got), ("", err))
        self.assertEqual(self.tenants(), "ID     NAME                     DOMAINS\n"
                                         "1      Acme                     acme.example\n")
        self.assertEqual([a[0] for a in self.audit()], ["tenant.create"])

    def test_domains_add_and_remove_and_each_leaves_its_audit_row(self):
        self.run_ctl("tenants", "add", "Acme", "--domain", "acme.example")
        self.assertEqual(self.run_ctl("tenants", "domains", "add", "1", "Acme.Test"),
                         ("", "breachctl: acme.test added to tenant 1; servers apply it within a "
                              "few seconds\n"))
        self.assertEqual(self.run_ctl("tenants", "domains", "add", "1", "acme.test"),
                         ("", "breachctl: tenant 1 has acme.test already\n"))
        self.assertEqual(self.run_ctl("tenants", "domains", "remove", "1", "acme.example"),
                         ("", "breachctl: acme.example removed from tenant 1; servers apply it "
                              "within a few seconds\n"))
        self.assertEqual(self.tenants(), "ID     NAME                     DOMAINS\n"
                                         "1      Acme                     acme.test\n")
        a = self.audit()
        self.assertEqual(len(a), 3)  # the domain it had already changed nothing
        self.assertEqual(a[1], ("tenant.update", "1",
                                {"id": 1, "name": "Acme", "domains": ["acme.example"]},
                                {"id": 1, "name": "Acme",
                                 "domains": ["acme.example", "acme.test"]}, "0", "breachctl"))
        self.assertEqual(a[2][2:4], ({"id": 1, "name": "Acme",
                                      "domains": ["acme.example", "acme.test"]},
                                     {"id": 1, "name": "Acme", "domains": ["acme.test"]}))

    def test_a_tenant_with_active_keys_stays_until_they_are_revoked(self):
        self.run_ctl("tenants", "add", "Acme", "--domain", "acme.example")
        self.ctl.key("acme", "--tenant", "1")
        self.assertEqual(self.run_ctl("tenants", "remove", "1", rc=2),
                         ("", "breachctl tenants remove: tenant 1 still has active keys; revoke "
                              "them first (see 'keys list')\n"))
        self.run_ctl("keys", "revoke", "1")
        self.assertEqual(self.run_ctl("tenants", "remove", "1"),
                         ("", "breachctl: tenant 1 removed with its domains\n"))
        self.assertEqual(self.tenants(), "ID     NAME                     DOMAINS\n")
        # its domain is free again
        self.assertEqual(self.run_ctl("tenants", "add", "Acme2", "--domain", "acme.example")[0],
                         "2\n")
        self.assertEqual([a[:2] for a in self.audit()],
                         [("tenant.create", "1"), ("key.create", "1"), ("key.revoke", "1"),
                          ("tenant.delete", "1"), ("tenant.create", "2")])
        self.assertEqual(self.audit()[3][2:4], ({"id": 1, "name": "Acme",
                                                 "domains": ["acme.example"]}, None))

    def keys(self):
        lines = self.run_ctl("keys", "list")[0].splitlines()
        self.assertEqual(lines[0].split(), KEYS_HEADER)
        return {l.split()[1]: l.split()[8:] for l in lines[1:]}

    def test_keys_create_takes_tenant_types_addresses_and_role_and_list_shows_them(self):
        self.run_ctl("tenants", "add", "Acme", "--domain", "acme.example")
        plain = self.ctl.key("plain")
        scoped = self.ctl.key("scoped", "--tenant", "1")
        p = self.ctl.run("keys", "create", "--name", "typed", "--tenant", "1", "--types",
                         "email,username,cards", "--allow-ip", "192.0.2.7", "--allow-ip=2001:DB8::/32",
                         check=0)
        self.assertRegex(p.stdout.decode(), r"^bd_[A-Za-z0-9_-]{43}\n$")
        self.assertEqual(p.stderr.decode(),
                         "breachctl: key 3 'typed' (standard, 1000 requests/hour, 20 exact card "
                         "lookups/day, tenant 1) created; it is shown only this once\n")
        typed = p.stdout.decode().strip()
        admin = self.ctl.key("root", "--role", "admin")
        self.ctl.key("phones", "--types", "phone,ssn")
        self.assertEqual(self.keys(), {
            "plain": ["active", "-", "all", "-", "user"],
            "scoped": ["active", "1", "email,email_domain", "-", "user"],
            "typed": ["active", "1", "email,username,cards", "192.0.2.7/32,2001:db8::/32",
                      "user"],
            "root": ["active", "-", "all", "-", "admin"],
            "phones": ["active", "-", "phone_number,social_security_number", "-", "user"],
        })
        a = self.audit()
        self.assertEqual([x[:2] for x in a][1:], [("key.create", str(i)) for i in range(1, 6)])
        self.assertEqual(a[3][3], {"id": 3, "name": "typed", "plan": "standard", "rate": 1000,
                                   "quota": 0, "expires_at": 0, "tenant": 1,
                                   "types": "email,username,cards",
                                   "allow_ip": "192.0.2.7/32,2001:db8::/32", "role": "user"})
        # the audit trail never holds a key
        everything = self.ctl.store_bytes()
        for key in (plain, scoped, typed, admin):
            self.assertNotIn(key.encode(), everything)

    def test_keys_create_refuses_a_bad_scope_and_stores_nothing(self):
        self.run_ctl("tenants", "add", "Acme", "--domain", "acme.example")
        cases = [
            (("--role", "admin", "--tenant", "1"),
             "breachctl keys create: an admin key belongs to no tenant: give --role admin or "
             "--tenant, not both\n"),
            (("--tenant", "9"),
             "breachctl keys create: there is no tenant 9 (see 'tenants list')\n"),
            (("--tenant", "one"),
             "breachctl keys create: --tenant is a tenant's ID (see 'tenants list')\n"),
            (("--types", "email,mail"),
             "breachctl keys create: --types is a comma-separated list of email, email_domain, "
             "phone_number, username, ip_address, social_security_number, password, "
             "password_hash, bitcoin_address, website_domain and cards\n"),
            (("--types", ""),
             "breachctl keys create: --types is a comma-separated list of email, email_domain, "
             "phone_number, username, ip_address, social_security_number, password, "
             "password_hash, bitcoin_address, website_domain and cards\n"),
            (("--allow-ip", "10.0.0.1/8"),
             "breachctl keys create: --allow-ip '10.0.0.1/8' is not an address or a block of "
             "them, like 192.0.2.0/24 or 2001:db8::/32 (no bits set past the prefix)\n"),
            (("--allow-ip", "somewhere"),
             "breachctl keys create: --allow-ip 'somewhere' is not an address or a block of "
             "them, like 192.0.2.0/24 or 2001:db8::/32 (no bits set past the prefix)\n"),
            (("--role", "root"), "breachctl keys create: --role is user or admin\n"),
        ]
        for extra, err in cases:
            with self.subTest(extra=extra):
                p = self.ctl.run("keys", "create", "--name", "x", *extra, check=2)
                self.assertEqual((p.stdout.decode(), p.stderr.decode()), ("", err))
        p = self.ctl.run("keys", "list", "--tenant", "1", check=2)
        self.assertEqual(p.stderr.decode(), "breachctl keys list: --tenant, --types, --allow-ip "
                                            "and --role are for keys create\n")
        self.assertEqual(self.keys(), {})
        self.assertEqual([a[0] for a in self.audit()], ["tenant.create"])

    def test_quota_and_job_limit_changes_leave_audit_rows(self):
        self.ctl.key("k")
        self.run_ctl("keys", "set-quota", "1", "100/month")
        self.run_ctl("keys", "set-job-limits", "1", "--max-jobs", "3")
        self.run_ctl("keys", "set-quota", "7", "100/month", rc=2)
        a = self.audit()
        self.assertEqual([x[:2] for x in a], [("key.create", "1"), ("key.update", "1"),
                                              ("key.update", "1")])
        self.assertEqual((a[1][2]["quota"], a[1][3]["quota"]), (0, 100))

    def test_a_server_accepts_a_tenant_key_made_after_it_started(self):
        self.run_ctl("tenants", "add", "Acme", "--domain", "acme.example")
        ops = self.ctl.key("ops")
        srv = Server(self.ctl)
        try:
            self.assertEqual(srv.get("/v7/breaches", key=ops)[0], 200)
            key = self.ctl.key("acme", "--tenant", "1")
            import time
            deadline = time.time() + 5
            while srv.get("/v7/breaches", key=key)[0] != 200:
                self.assertLess(time.time(), deadline, "a tenant key was not accepted in 5 s")
                time.sleep(0.1)
        finally:
            self.assertEqual(srv.stop(), 0)


if __name__ == "__main__":
    unittest.main()
