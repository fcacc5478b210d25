// An SMTP server for tests/e2e/test_alert_formats.py: smtp-server on 127.0.0.1, port picked by
// the system, without STARTTLS (breachd reaches it with --smtp-insecure), AUTH required with
// the user and password given. It prints {"port": N} once listening, then one JSON line per
// message taken: {"from", "to", "user", "data"}. The first FAIL messages are refused with a
// 451 (a temporary failure), so the test sees breachd retry.
//   node server.mjs USER PASSWORD [FAIL]
import { SMTPServer } from "smtp-server";

const [user, password, failText] = process.argv.slice(2);
let fail = Number(failText || 0);

const server = new SMTPServer({
  disabledCommands: ["STARTTLS"],
  allowInsecureAuth: true,
  authMethods: ["PLAIN", "LOGIN"],
  logger: false,
  onAuth(auth, session, callback) {
    if (auth.username === user && auth.password === password)
      return callback(null, { user: auth.username });
    return callback(new Error("Invalid username or password"));
  },
  onData(stream, session, callback) {
    const chunks = [];
    stream.on("data", (c) => chunks.push(c));
    stream.on("end", () => {
      const data = Buffer.concat(chunks).toString("utf8");
      if (fail > 0) {
        fail--;
        const err = new Error("try again later");
        err.responseCode = 451;
        process.stdout.write(JSON.stringify({ refused: true }) + "\n");
        return callback(err);
      }
      process.stdout.write(JSON.stringify({
        from: session.envelope.mailFrom.address,
        to: session.envelope.rcptTo.map((r) => r.address),
        user: session.user,
        data,
      }) + "\n");
      callback(null, "queued");
    });
  },
});

server.listen(0, "127.0.0.1", () => {
  process.stdout.write(JSON.stringify({ port: server.server.address().port }) + "\n");
});
process.on("SIGTERM", () => server.close(() => process.exit(0)));
