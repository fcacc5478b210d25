"""GET /openapi.json: the contract of docs/openapi.json, served without a key, with the
server's own base path. (Every other response of this suite is checked against it by the
harness: openapi_check.py.)"""
import json
import os

from harness import ROOT, Ctl, Server, ServerTest

with open(os.path.join(ROOT, "docs", "openapi.json"), encoding="utf-8") as f:
    DOC = json.load(f)


class OpenApi(ServerTest):
    def test_the_document_is_served_without_a_key_as_kept_in_docs(self):
        st, body = self.srv.get("/openapi.json")
        self.assertEqual(st, 200)
        self.assertEqual(body, DOC)
        self.assertEqual(body["openapi"], "3.1.0")
        self.assertEqual(body["servers"][0]["url"], "/v7")
        st, hdrs, raw = self.srv.request("/openapi.json", method="HEAD")
        self.assertEqual((st, raw), (200, b""))
        st, hdrs, _ = self.srv.request("/openapi.json", method="POST")
        self.assertEqual((st, hdrs["allow"]), (405, "GET, HEAD"))

    def test_every_operation_of_the_server_is_in_the_document(self):
        self.assertEqual(sorted(DOC["paths"]), sorted([
            "/breaches", "/breaches/{uuid}", "/breach-search", "/credit-card-search",
            "/healthz", "/metrics", "/openapi.json", "/api/v3/breachedaccount/{account}",
            "/api/v3/breaches", "/api/v3/breach/{name}", "/api/v3/dataclasses",
            "/api/v3/breacheddomain/{domain}", "/api/v3/subscription/status",
            "/api/v3/subscribeddomains", "/api/v3/latestbreach", "/api/v3/pasteaccount/{account}",
            "/api/v3/breachedaccount/range/{prefix}", "/api/v3/stealerlogsbyemail/{email}",
            "/api/v3/stealerlogsbywebsitedomain/{domain}",
            "/api/v3/stealerlogsbyemaildomain/{domain}",
            "/range/{prefix}", "/usage", "/status", "/changes", "/watches", "/watches/{id}",
            "/alerts", "/jobs", "/jobs/{id}", "/jobs/{id}/results", "/admin/tenants",
            "/admin/tenants/{id}", "/admin/tenants/{id}/usage", "/admin/keys",
            "/admin/keys/{id}", "/admin/audit", "/admin/lookups", "/console/session",
            "/console/", "/console/{file}", "/alerts/{id}", "/console/seen",
            "/console/logos/{name}"]))
        # the methods each path answers besides GET (and HEAD), and their success status
        writes = {"/watches": ["post"], "/watches/{id}": ["delete"], "/jobs": ["post"],
                  "/admin/tenants": ["post"], "/admin/tenants/{id}": ["patch", "delete"],
                  "/admin/keys": ["post"], "/admin/keys/{id}": ["patch", "delete"],
                  "/admin/lookups": ["post"], "/console/session": ["post", "delete"],
                  "/alerts/{id}": ["patch"], "/console/seen": ["put"]}
        created = {"/watches": "201", "/jobs": "202", "/admin/tenants": "201",
                   "/admin/keys": "201", "/admin/lookups": "200", "/console/session": "201"}
        no_get = ("/watches/{id}", "/jobs", "/admin/lookups", "/alerts/{id}")
        for path, item in DOC["paths"].items():
            ops = writes.get(path, []) + (["get"] if path not in no_get else [])
            self.assertEqual(sorted(item), sorted(ops + ["options"] + (["servers"] if "servers" in item else [])), path)
            for op in ops:
                ok = created[path] if op == "post" else "204" if op == "delete" else "200"
                self.assertIn(ok, item[op]["responses"], (path, op))
                self.assertIn("default", item[op]["responses"], (path, op))

    def test_the_document_names_the_servers_own_base_path(self):
        ctl = Ctl().init()
        try:
            key = ctl.key("doc")
            srv = Server(ctl, "--base-path", "/api/\"odd\\", "--hibp-base-path", "/hibp")
            try:
                st, body = srv.get("/openapi.json")
                self.assertEqual(st, 200)
                self.assertEqual(body["servers"][0]["url"], "/api/\"odd\\")
                paths = {(p.replace("/api/v3/", "/hibp/", 1) if p.startswith("/api/v3/") else p): v
                         for p, v in DOC["paths"].items()}
                want = dict(DOC, servers=[dict(DOC["servers"][0], url="/api/\"odd\\")],
                            paths=paths)
                self.assertEqual(body, want)
                self.assertEqual(srv.request("/hibp/dataclasses", key=key)[0], 200)
            finally:
                self.assertEqual(srv.stop(), 0)
        finally:
            ctl.cleanup()
