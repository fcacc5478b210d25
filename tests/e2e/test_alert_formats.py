"""Alert destinations (issue 35): a watch's format (json, slack, teams, splunk-hec) delivered by
the real breachd to a real HTTP receiver on loopback (started here), each body checked against
the shape its service documents (Slack incoming webhooks with Block Kit, a Teams workflow
message carrying an Adaptive Card, a Splunk HTTP Event Collector event with the
"Authorization: Splunk TOKEN" header), a mail through a real SMTP server (npm smtp-server,
tests/smtp) with AUTH, multipart/alternative; a receiver that fails then recovers gets the alert
once; the secret of each (Slack and Teams URL tokens, the HEC token) absent from watch list,
the API's answers and the server's log."""
import email
import email.policy
import json
import os
import shutil
import subprocess
import threading
import time
import unittest
import http.server

from harness import Ctl, Server, binary, fixture
from test_watches import ALLOW, BREACH, SIGNING, call, records

CONSOLE = "https://breachd.example.com/console/"
HEC_TOKEN = "12345678-9abc-4def-8123-456789abcdef"
SLACK_TOKEN = "T0000SECRET/B0000SECRET/XXXXXXXXslacktoken"
TEAMS_TOKEN = "sig=TEAMSSECRETsignature0123"
SMTP_USER = "breachd-mailer"
SMTP_PASSWORD = "smtp-PASSWORD-s3cret-987"
SMTP_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "smtp")
HAVE_SMTP = shutil.which("node") and os.path.isdir(os.path.join(SMTP_DIR, "node_modules",
                                                                 "smtp-server"))



def settle(case, srv, key, timeout=30):
    """Waits until no alert of the key is pending: delivered (or given up), an alert gets no
    further attempt, so a second delivery could come only from a bug in flight at once,
    which a short wait still sees. In place of sleeping past the retry schedule."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        st, body = call(srv, "GET", "/alerts", key)
        case.assertEqual(st, 200)
        if body["alerts"] and all(a["delivery"] != "pending" for a in body["alerts"]):
            break
        time.sleep(0.05)
    time.sleep(0.2)

class Receiver:
    """Records every POST; answers the statuses in turn (the last one for ever)."""

    def __init__(self, statuses=(200,)):
        self.got = []
        self.answered = []
        self.lock = threading.Lock()
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("content-length", "0")))
                with outer.lock:
                    status = statuses[min(len(outer.got), len(statuses) - 1)]
                    outer.got.append(({k.lower(): v for k, v in self.headers.items()},
                                      self.path, body))
                    outer.answered.append(status)
                self.send_response(status)
                self.send_header("content-length", "0")
                self.end_headers()

            def log_message(self, *args):
                pass

        self.httpd = http.server.HTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.httpd.server_address[1]
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def deliveries(self):
        with self.lock:
            return list(self.got)

    def wait(self, n, timeout=20):
        deadline = time.time() + timeout
        while time.time() < deadline and len(self.deliveries()) < n:
            time.sleep(0.05)
        return self.deliveries()

    def stop(self):
        self.httpd.shutdown()
        self.httpd.server_close()


class AlertFormats(unittest.TestCase):
    def setUp(self):
        self.ctl = Ctl().init()
        self.ctl.import_("breaches", fixture("breaches.jsonl"))
        self.key = self.ctl.key("owner")
        self.receiver = Receiver()
        self.srv = Server(self.ctl, *ALLOW, "--console-url", CONSOLE)

    def tearDown(self):
        rc = self.srv.stop()
        self.receiver.stop()
        self.ctl.cleanup()
        self.assertEqual(rc, 0, "breachd exited %d on SIGTERM" % rc)

    def url(self, path):
        return "http://127.0.0.1:%d%s" % (self.receiver.port, path)

    def add(self, fmt, path, secret=None, expect=201):
        body = {"type": "email", "account": "Alice@Example.com", "url": self.url(path)}
        if fmt is not None:
            body["format"] = fmt
        if secret is not None:
            body["secret"] = secret
        st, reply = call(self.srv, "POST", "/watches", self.key, body)
        self.assertEqual(st, expect, reply)
        return reply

    def deliver_one(self):
        self.ctl.import_("records", self.ctl.write("r.jsonl", records(
            "alice@example.com", "bob@example.com", "ALICE@example.com ")))
        self.receiver.wait(1)
        settle(self, self.srv, self.key)
        got = self.receiver.deliveries()
        self.assertEqual(len(got), 1, got)
        return got[0]

    def assertSecretNowhere(self, secret):
        """The secret is in no answer of the API, in no line of watch list, in no log."""
        st, listed = call(self.srv, "GET", "/watches", self.key)
        self.assertEqual(st, 200)
        self.assertNotIn(secret, json.dumps(listed))
        p = self.ctl.run("watch", "list", check=0)
        self.assertNotIn(secret, (p.stdout + p.stderr).decode())
        self.assertNotIn(secret, self.srv.log())
        return listed["watches"]

    def test_slack_gets_text_and_blocks_with_the_account_masked(self):
        reply = self.add("slack", "/services/" + SLACK_TOKEN)
        self.assertEqual(reply["format"], "slack")
        self.assertEqual(reply["url"], self.url("/..."))
        self.assertNotIn("secret", reply)
        headers, path, body = self.deliver_one()
        self.assertEqual(path, "/services/" + SLACK_TOKEN)
        self.assertEqual(headers["content-type"], "application/json")
        self.assertNotIn("x-breachd-signature", headers)
        msg = json.loads(body)
        self.assertEqual(set(msg), {"text", "blocks"})
        self.assertEqual(msg["text"],
                         "breachd: email a***@example.com found in BetaShop (2 records)")
        self.assertEqual([b["type"] for b in msg["blocks"]],
                         ["header", "section", "actions", "context"])
        self.assertEqual(msg["blocks"][0]["text"],
                         {"type": "plain_text", "text": "Breach exposure found"})
        fields = [f["text"] for f in msg["blocks"][1]["fields"]]
        self.assertEqual(fields[:3], ["*Identity type*\nemail", "*Account*\na***@example.com",
                                      "*Breach*\nBetaShop"])
        self.assertRegex(fields[3], r"^\*Date\*\n\d{4}-\d\d-\d\d \d\d:\d\d UTC$")
        self.assertEqual(fields[4], "*Records*\n2")
        for f in msg["blocks"][1]["fields"]:
            self.assertEqual(f["type"], "mrkdwn")
        self.assertLessEqual(len(msg["blocks"][1]["fields"]), 10)  # Block Kit's limit
        button = msg["blocks"][2]["elements"][0]
        self.assertEqual((button["type"], button["url"]), ("button", CONSOLE))
        self.assertEqual(button["text"]["type"], "plain_text")
        self.assertNotIn(b"alice@example.com", body)  # the chat channel sees it masked
        self.assertIn(headers["x-breachd-event-id"], msg["blocks"][3]["elements"][0]["text"])
        watches = self.assertSecretNowhere(SLACK_TOKEN)
        self.assertEqual([(w["format"], w["url"]) for w in watches],
                         [("slack", self.url("/..."))])

    def test_teams_gets_an_adaptive_card(self):
        self.add("teams", "/workflows/abc/triggers/manual/paths/invoke?" + TEAMS_TOKEN)
        headers, path, body = self.deliver_one()
        self.assertEqual(path, "/workflows/abc/triggers/manual/paths/invoke?" + TEAMS_TOKEN)
        msg = json.loads(body)
        self.assertEqual(msg["type"], "message")
        self.assertEqual(len(msg["attachments"]), 1)
        att = msg["attachments"][0]
        self.assertEqual(att["contentType"], "application/vnd.microsoft.card.adaptive")
        self.assertIsNone(att["contentUrl"])
        card = att["content"]
        self.assertEqual((card["type"], card["version"], card["$schema"]),
                         ("AdaptiveCard", "1.4",
                          "http://adaptivecards.io/schemas/adaptive-card.json"))
        self.assertEqual([b["type"] for b in card["body"]], ["TextBlock", "TextBlock", "FactSet"])
        facts = {f["title"]: f["value"] for f in card["body"][2]["facts"]}
        self.assertEqual((facts["Identity type"], facts["Account"], facts["Breach"],
                          facts["Records"]), ("email", "a***@example.com", "BetaShop", "2"))
        self.assertEqual(card["actions"], [{"type": "Action.OpenUrl",
                                            "title": "Open the breachd console",
                                            "url": CONSOLE}])
        self.assertNotIn(b"alice@example.com", body)
        self.assertSecretNowhere(TEAMS_TOKEN)

    def test_splunk_hec_gets_an_event_with_its_token(self):
        reply = self.add("splunk-hec", "/services/collector/event", secret=HEC_TOKEN)
        self.assertEqual((reply["format"], reply["url"]),
                         ("splunk-hec", self.url("/services/collector/event")))
        headers, path, body = self.deliver_one()
        self.assertEqual(path, "/services/collector/event")
        self.assertEqual(headers["authorization"], "Splunk " + HEC_TOKEN)
        self.assertEqual(headers["content-type"], "application/json")
        ev = json.loads(body)
        self.assertEqual(set(ev), {"time", "source", "sourcetype", "event"})
        self.assertEqual((ev["source"], ev["sourcetype"]), ("breachd", "breachd:alert"))
        self.assertIsInstance(ev["time"], int)
        self.assertLess(abs(ev["time"] - time.time()), 120)
        alert = ev["event"]
        self.assertEqual(alert["event_id"], headers["x-breachd-event-id"])
        self.assertEqual((alert["event"], alert["breach"]["id"], alert["counts"]),
                         ("watch.match", BREACH, {"records": 2}))
        self.assertEqual(alert["identities"], ["alice@example.com"])
        self.assertSecretNowhere(HEC_TOKEN)

    def test_json_stays_the_default_signed_alert(self):
        reply = self.add(None, "/hook", secret=SIGNING)
        self.assertEqual((reply["format"], reply["url"]), ("json", self.url("/hook")))
        headers, _, body = self.deliver_one()
        self.assertTrue(headers["x-breachd-signature"].startswith("v1="))
        self.assertEqual(json.loads(body)["event"], "watch.match")
        self.assertNotIn("authorization", headers)
        self.assertSecretNowhere(SIGNING)

    def test_a_receiver_that_fails_then_recovers_gets_the_alert_once(self):
        self.receiver.stop()
        self.receiver = Receiver(statuses=(503, 500, 200))
        self.add("slack", "/services/" + SLACK_TOKEN)
        self.ctl.import_("records", self.ctl.write("r.jsonl", records("alice@example.com")))
        self.receiver.wait(3, timeout=30)
        settle(self, self.srv, self.key)
        got = self.receiver.deliveries()
        self.assertEqual(self.receiver.answered, [503, 500, 200])
        self.assertEqual(len({h["x-breachd-event-id"] for h, _, _ in got}), 1)
        self.assertEqual(len({b for _, _, b in got}), 1)  # the same message each time
        st, alerts = call(self.srv, "GET", "/alerts", self.key)
        self.assertEqual([(a["delivery"], a["attempts"]) for a in alerts["alerts"]],
                         [("delivered", 3)])
        self.assertNotIn(SLACK_TOKEN, self.srv.log())

    def test_bad_formats_and_secrets_are_clear_422s(self):
        for fmt, secret, words in (
                ("sms", SIGNING, "the format must be json, slack, teams, email or splunk-hec"),
                ("slack", SIGNING, "a slack watch takes no secret"),
                ("teams", SIGNING, "a teams watch takes no secret"),
                ("splunk-hec", None, "the body must give 'secret'"),
                ("splunk-hec", "short", "the secret must be 16 to 256 bytes"),
                (None, None, "the body must give 'secret'")):
            reply = self.add(fmt, "/x", secret=secret, expect=422)
            self.assertEqual(set(reply), {"error", "message"})
            self.assertIn(words, reply["message"])
        self.assertEqual(call(self.srv, "GET", "/watches", self.key)[1], {"watches": []})


class SmtpServer:
    """tests/smtp/server.mjs: smtp-server on loopback without STARTTLS, AUTH required; the
    first `fail` messages refused with a 451."""

    def __init__(self, fail=0):
        self.proc = subprocess.Popen(["node", os.path.join(SMTP_DIR, "server.mjs"), SMTP_USER,
                                      SMTP_PASSWORD, str(fail)], stdout=subprocess.PIPE,
                                     cwd=SMTP_DIR)
        self.port = json.loads(self.proc.stdout.readline())["port"]
        self.lines = []
        self.lock = threading.Lock()
        threading.Thread(target=self.read, daemon=True).start()

    def read(self):
        for line in self.proc.stdout:
            with self.lock:
                self.lines.append(json.loads(line))

    def messages(self):
        with self.lock:
            return [m for m in self.lines if not m.get("refused")]

    def refused(self):
        with self.lock:
            return len([m for m in self.lines if m.get("refused")])

    def wait(self, n, timeout=20):
        deadline = time.time() + timeout
        while time.time() < deadline and len(self.messages()) < n:
            time.sleep(0.05)
        return self.messages()

    def stop(self):
        self.proc.terminate()
        self.proc.wait(timeout=10)


@unittest.skipUnless(HAVE_SMTP or os.environ.get("BREACHD_REQUIRE_CLIENTS"),
                     "node or tests/smtp/node_modules/smtp-server missing (make npm-deps)")
class Email(unittest.TestCase):
    def setUp(self):
        self.ctl = Ctl().init()
        self.ctl.import_("breaches", fixture("breaches.jsonl"))
        self.key = self.ctl.key("owner")
        self.srv = None
        self.smtp = None
        self.cred = os.path.join(self.ctl.dir, "smtp.cred")
        with open(self.cred, "w") as f:
            f.write("%s:%s\n" % (SMTP_USER, SMTP_PASSWORD))
        os.chmod(self.cred, 0o600)

    def tearDown(self):
        rc = self.srv.stop() if self.srv else 0
        if self.smtp:
            self.smtp.stop()
        self.ctl.cleanup()
        self.assertEqual(rc, 0, "breachd exited %d on SIGTERM" % rc)

    def start(self, fail=0, insecure=True, allow=True):
        self.smtp = SmtpServer(fail)
        self.srv = Server(self.ctl, *(ALLOW if allow else ()), "--console-url", CONSOLE,
                          "--smtp-url", "smtp://127.0.0.1:%d" % self.smtp.port,
                          "--smtp-from", "alerts@example.org", "--smtp-credentials", self.cred,
                          *(("--smtp-insecure", "on") if insecure else ()))

    def add(self, url="mailto:soc@example.net", expect=201, **extra):
        st, reply = call(self.srv, "POST", "/watches", self.key,
                         dict({"type": "email", "account": "Alice@Example.com", "url": url,
                               "format": "email"}, **extra))
        self.assertEqual(st, expect, reply)
        return reply

    def import_alice(self):
        self.ctl.import_("records", self.ctl.write("r.jsonl", records(
            "alice@example.com", "bob@example.com", "ALICE@example.com ")))

    def alerts(self):
        st, body = call(self.srv, "GET", "/alerts", self.key)
        self.assertEqual(st, 200)
        return [(a["delivery"], a["attempts"]) for a in body["alerts"]]

    def assertPasswordNowhere(self):
        st, listed = call(self.srv, "GET", "/watches", self.key)
        self.assertNotIn(SMTP_PASSWORD, json.dumps(listed))
        p = self.ctl.run("watch", "list", check=0)
        self.assertNotIn(SMTP_PASSWORD, (p.stdout + p.stderr).decode())
        self.assertNotIn(SMTP_PASSWORD, self.srv.log())

    def test_an_email_alert_is_a_text_and_html_mail_through_smtp_with_auth(self):
        self.start()
        reply = self.add()
        self.assertEqual((reply["format"], reply["url"]), ("email", "mailto:soc@example.net"))
        self.import_alice()
        self.smtp.wait(1)
        settle(self, self.srv, self.key)
        got = self.smtp.messages()
        self.assertEqual(len(got), 1, got)
        m = got[0]
        self.assertEqual((m["from"], m["to"], m["user"]),
                         ("alerts@example.org", ["soc@example.net"], SMTP_USER))
        msg = email.message_from_string(m["data"], policy=email.policy.default)
        self.assertEqual(msg["From"], "breachd <alerts@example.org>")
        self.assertEqual(msg["To"], "soc@example.net")
        self.assertEqual(msg["Subject"],
                         "breachd: email a***@example.com found in BetaShop (2 records)")
        self.assertEqual(msg.get_content_type(), "multipart/alternative")
        event_id = msg["X-Breachd-Event-Id"]
        self.assertEqual(msg["Message-ID"], "<%s@breachd>" % event_id)
        parts = [p.get_content_type() for p in msg.iter_parts()]
        self.assertEqual(parts, ["text/plain", "text/html"])
        text = msg.get_body(("plain",)).get_content()
        html = msg.get_body(("html",)).get_content()
        for want in ("Identity type: email", "Account: a***@example.com", "Breach: BetaShop",
                     "Records: 2", "Open the breachd console: " + CONSOLE, "Event: " + event_id):
            self.assertIn(want, text)
        self.assertIn('<a href="%s">Open the breachd console</a>' % CONSOLE, html)
        self.assertIn("<td>a***@example.com</td>", html)
        self.assertNotIn("alice@example.com", m["data"])
        st, listed = call(self.srv, "GET", "/alerts", self.key)
        self.assertEqual(listed["alerts"][0]["event_id"], event_id)
        self.assertEqual(self.alerts(), [("delivered", 1)])
        self.assertPasswordNowhere()

    def test_a_server_that_refuses_then_takes_gets_the_mail_once(self):
        self.start(fail=2)
        self.add()
        self.import_alice()
        self.smtp.wait(1, timeout=30)
        settle(self, self.srv, self.key)
        self.assertEqual(self.smtp.refused(), 2)
        self.assertEqual(len(self.smtp.messages()), 1)
        self.assertEqual(self.alerts(), [("delivered", 3)])
        self.assertPasswordNowhere()

    def test_smtp_without_starttls_is_refused_unless_insecure(self):
        self.start(insecure=False)  # the server offers no STARTTLS: nothing is sent in clear
        self.add()
        self.import_alice()
        deadline = time.time() + 10
        while time.time() < deadline and not (self.alerts() and self.alerts()[0][1] >= 1):
            time.sleep(0.2)
        state = self.alerts()
        self.assertEqual(state[0][0], "pending")
        self.assertGreaterEqual(state[0][1], 1)
        self.assertEqual(self.smtp.messages(), [])
        self.assertRegex(self.srv.log(), r"alert 1 of watch \d+, attempt 1 failed \(HTTP \d+: "
                                         r"Requested SSL level failed\)")
        self.assertPasswordNowhere()

    def test_the_smtp_host_is_checked_like_a_webhooks(self):
        self.start(allow=False)  # 127.0.0.1 not allowed
        self.add()
        self.import_alice()
        deadline = time.time() + 10
        while time.time() < deadline and not (self.alerts() and self.alerts()[0][1] >= 1):
            time.sleep(0.2)
        self.assertEqual(self.alerts()[0][0], "pending")
        self.assertIn("SMTP server's address is private, loopback", self.srv.log())
        self.assertEqual(self.smtp.messages(), [])

    def test_bad_email_watches_and_settings(self):
        self.start()
        for url, extra, words in (("https://example.net/", {}, "mailto:ADDRESS"),
                                  ("mailto:a@b?cc=c@d", {}, "mailto:ADDRESS"),
                                  ("mailto:soc@example.net", {"secret": SIGNING},
                                   "an email watch takes no secret")):
            reply = self.add(url=url, expect=422, **extra)
            self.assertIn(words, reply["message"])
        base = [binary("breachd"), "--db", self.ctl.db, "--listen", "127.0.0.1:0"] + (
            ["--secret", self.ctl.secret] if self.ctl.secret else [])
        os.chmod(self.cred, 0o644)
        for args, words in (
                (("--smtp-url", "smtp://127.0.0.1:25", "--smtp-from", "a@example.org",
                  "--smtp-credentials", self.cred), b"open to other users"),
                (("--smtp-url", "smtp://mail.example.org", "--smtp-from", "a@example.org",
                  "--smtp-insecure", "on"), b"--smtp-insecure (no STARTTLS) is only for"),
                (("--smtp-url", "smtp://127.0.0.1:25"), b"need both --smtp-url and --smtp-from"),
                (("--smtp-url", "imap://x", "--smtp-from", "a@example.org"), b"--smtp-url:")):
            p = subprocess.run(base + list(args), capture_output=True, timeout=30)
            self.assertEqual(p.returncode, 2, p.stderr)
            self.assertIn(words, p.stderr)
            self.assertNotIn(SMTP_PASSWORD.encode(), p.stderr)


class Cli(unittest.TestCase):
    def setUp(self):
        self.ctl = Ctl().init()
        self.ctl.key("owner")

    def tearDown(self):
        self.ctl.cleanup()

    def watch_add(self, *args):
        server_secret = ["--server-secret", self.ctl.secret] if self.ctl.secret else []
        return subprocess.run([binary("breachctl"), "watch", "add", "--db", self.ctl.db,
                               "--key", "1", "--type", "email", *args, *ALLOW, *server_secret],
                              capture_output=True, timeout=60)

    def test_watch_add_takes_a_format_and_list_hides_the_token(self):
        p = self.watch_add("--account", "a@example.com", "--format", "slack", "--url",
                           "http://127.0.0.1:9/services/" + SLACK_TOKEN)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertRegex(p.stdout, rb"^[1-9][0-9]*\n$")
        p = self.watch_add("--account", "a@example.com", "--format", "splunk-hec", "--url",
                           "http://127.0.0.1:9/services/collector/event", "--secret", HEC_TOKEN)
        self.assertEqual(p.returncode, 0, p.stderr)
        p = self.ctl.run("watch", "list", check=0)
        out = p.stdout.decode()
        self.assertIn(" slack ", out)
        self.assertIn(" splunk-hec ", out)
        self.assertIn("http://127.0.0.1:9/...", out)
        self.assertNotIn(SLACK_TOKEN, out)
        self.assertNotIn(HEC_TOKEN, out)
        self.assertEqual(sorted(r[0] for r in self.ctl.sql("SELECT format FROM watches")),
                         ["1", "3"])
        for args, words in (
                (("--format", "sms", "--secret", SIGNING), b"--format is json, slack, teams"),
                (("--format", "email"), b"--url: an email watch's url is mailto:ADDRESS"),
                (("--format", "teams", "--secret", SIGNING), b"a teams watch takes no --secret"),
                (("--format", "splunk-hec"), b"usage: breachctl watch add")):
            p = self.watch_add("--account", "b@example.com", "--url", "http://127.0.0.1:9/x",
                               *args)
            self.assertEqual(p.returncode, 2, p.stderr)
            self.assertIn(words, p.stderr)
            self.assertEqual(p.stdout, b"")


if __name__ == "__main__":
    unittest.main()
