"""--help on every program, command and subcommand exits 0 and names exactly the options the
command's parser accepts (read from its source: the option names it compares arguments
with); --version; the generated man pages render without a warning."""
import os
import re
import subprocess
import unittest

from harness import BUILD, ROOT, binary

# The source file of each breachctl command, whose option names its parser compares with.
SOURCES = {"init": "init.c", "import": "import.c", "keys": "keys.c", "demo": "demo.c",
           "stats": "stats.c", "erase": "erase.c", "backup": "backup.c", "watch": "watch.c",
           "tenants": "tenants.c", "citus": "citus.c"}
# Accepted by every command: breachctl's main takes them before the command sees its
# arguments (--config) or instead of running it (--help, --version).
GLOBAL = {"--config", "--help", "--version"}
# The file forms of store options (cli/args.c: BD_OPT_DB, BD_OPT_SHARED_LIMITS), taken
# wherever the store option is.
FILE_FORMS = {"--db": "--db-file", "--shared-limits": "--shared-limits-file"}


def literals(path):
    """The option names a source file holds as whole string literals ("--name")."""
    with open(path) as f:
        text = f.read()
    names = set(re.findall(r'"(--[a-z][a-z0-9-]*)"', text))
    if "BD_OPT_DB" in text:  # a parser of its own taking the store through cli/args.h
        names.add("--db")
    for opt, file_form in FILE_FORMS.items():
        if opt in names:
            names.add(file_form)
    return names


def run(*args):
    p = subprocess.run(args, capture_output=True, timeout=30)
    return p.returncode, p.stdout.decode(), p.stderr.decode()


def help_flags(text):
    """The options an --help lists: its lines "  --name ..."."""
    return set(re.findall(r"^  (--[a-z][a-z0-9-]*)", text, re.M))


class Help(unittest.TestCase):
    def commands(self):
        rc, out, _ = run(binary("breachctl"), "--help")
        self.assertEqual(rc, 0)
        section = out.split("commands:\n", 1)[1].split("\noptions:", 1)[0]
        words = []
        for line in section.splitlines():
            m = re.match(r"  ([a-z][a-z-]*(?: [a-z][a-z-]*)*)(?:  | [A-Z]|$)", line)
            if m:
                words.append(m.group(1).split(" "))
        return words

    def test_every_breachctl_command_lists_the_options_its_parser_takes(self):
        commands = self.commands()
        self.assertGreaterEqual(len(commands), 17)
        by_file = {}
        for words in commands:
            rc, out, err = run(binary("breachctl"), *words, "--help")
            self.assertEqual((rc, err), (0, ""), words)
            self.assertTrue(out.startswith("usage: breachctl %s" % " ".join(words)), out)
            flags = help_flags(out)
            self.assertTrue(GLOBAL <= flags, (words, flags))
            by_file.setdefault(SOURCES[words[0]], set()).update(flags - GLOBAL)
            # the command's own source accepts each option it lists
            source = literals(os.path.join(ROOT, "src", "cli", SOURCES[words[0]]))
            self.assertEqual(flags - GLOBAL - source, set(), words)
        for name, listed in by_file.items():
            source = literals(os.path.join(ROOT, "src", "cli", name))
            self.assertEqual(source - listed, set(), "%s accepts options no --help names" % name)
        # a group's help lists its subcommands; no command is left out of the program's
        for group in ("keys", "import", "watch", "tenants"):
            rc, out, _ = run(binary("breachctl"), group, "--help")
            self.assertEqual(rc, 0)
            subs = [" ".join(w[1:]) for w in commands if w[0] == group]
            for sub in subs:
                self.assertIn("  %s %s" % (group, sub), out)
        for name in os.listdir(os.path.join(ROOT, "src", "cli")):
            if name in SOURCES.values():
                self.assertIn(name, by_file, "no command of %s has a --help" % name)

    def test_breachd_lists_the_options_its_parser_takes(self):
        rc, out, err = run(binary("breachd"), "--help")
        self.assertEqual((rc, err), (0, ""))
        flags = help_flags(out)
        source = literals(os.path.join(ROOT, "src", "breachd.c"))
        source |= {"--db", "--db-file", "--shared-limits", "--shared-limits-file"} | GLOBAL
        self.assertEqual(flags, source)
        self.assertIn("exit status: 0 stopped by a signal after serving; 2 a usage error", out)

    def test_help_of_a_three_word_command(self):
        rc, out, _ = run(binary("breachctl"), "tenants", "domains", "add", "--help")
        self.assertEqual(rc, 0)
        self.assertTrue(out.startswith("usage: breachctl tenants domains add ID DOMAIN [options]\n"),
                        out)

    def test_help_after_other_arguments_and_short_form(self):
        rc, out, _ = run(binary("breachctl"), "watch", "add", "--db", "x.db", "-h")
        self.assertEqual(rc, 0)
        self.assertTrue(out.startswith("usage: breachctl watch add [options]\n"))
        rc, out, _ = run(binary("breachctl"), "--help")
        self.assertEqual(rc, 0)
        self.assertIn("exit status: 0 success; 1 some input lines were rejected (import); 2 a "
                      "usage error or a failure.", " ".join(out.split()))
        rc, _, err = run(binary("breachctl"))
        self.assertEqual(rc, 2)
        self.assertTrue(err.startswith("usage: breachctl COMMAND [options]\n"))

    def test_version_names_commit_and_libraries(self):
        for prog in ("breachd", "breachctl"):
            rc, out, _ = run(binary(prog), "--version")
            self.assertEqual(rc, 0)
            first, libs = out.splitlines()
            self.assertRegex(first, r"^%s \d+\.\d+\.\d+ \(commit ([0-9a-f]{12}|unknown)\)$" % prog)
            for lib in ("sqlite 3.", "libpq ", "libmicrohttpd 0.9.", "libcurl/", "jansson ",
                        "libsodium ", "zlib ", "zstd "):
                self.assertIn(lib, libs)

    def test_man_pages_render_without_warnings(self):
        docgen = os.path.join(BUILD, "docgen")
        self.assertTrue(os.access(docgen, os.X_OK), "make docs builds %s" % docgen)
        for page in ("breachd", "breachctl", "breachd.conf"):
            src = subprocess.run([docgen, "man", page], capture_output=True, check=True).stdout
            path = os.path.join(BUILD, "man-test-%s" % page)
            with open(path, "wb") as f:
                f.write(src)
            p = subprocess.run(["man", "--warnings", "-E", "UTF-8", "-l", path],
                               capture_output=True, timeout=60,
                               env={**os.environ, "MANWIDTH": "80", "LC_ALL": "C.UTF-8",
                                    "MAN_KEEP_FORMATTING": "0"})
            os.unlink(path)
            self.assertEqual((p.returncode, p.stderr.decode()), (0, ""), page)
            text = re.sub(r".\x08", "", p.stdout.decode())  # bold and underline overstrikes
            self.assertIn("SETTINGS" if page == "breachd.conf" else "EXIT STATUS", text)
            self.assertIn("SEE ALSO", text)
        # every breachd setting is in breachd.conf(5), every breachctl command in breachctl(1)
        conf = subprocess.run([docgen, "man", "breachd.conf"], capture_output=True).stdout.decode()
        rc, out, _ = run(binary("breachd"), "--help")
        for flag in help_flags(out) - GLOBAL:
            self.assertIn("\\fB%s\\fR" % flag[2:].replace("-", "\\-"), conf)

    def test_bash_completion_offers_commands_subcommands_and_options(self):
        docgen = os.path.join(BUILD, "docgen")
        script = subprocess.run([docgen, "completion"], capture_output=True,
                                check=True).stdout.decode()

        def complete(*words):
            prog = script + "\nCOMP_WORDS=(%s); COMP_CWORD=%d; _breachctl; echo \"${COMPREPLY[*]}\"\n" % (
                " ".join("'%s'" % w for w in words), len(words) - 1)
            p = subprocess.run(["bash", "-c", prog], capture_output=True, timeout=30)
            self.assertEqual(p.stderr, b"")
            return p.stdout.decode().split()

        self.assertEqual(complete("breachctl", "ke"), ["keys"])
        self.assertEqual(complete("breachctl", "keys", "set-"), ["set-quota", "set-job-limits"])
        self.assertEqual(complete("breachctl", "watch", "add", "--ser"), ["--server-secret"])
        self.assertEqual(complete("breachctl", "erase", "--w"), ["--wait"])
        self.assertIn("--max-result-rows", complete("breachctl", "keys", "create", "--max"))
        self.assertEqual(complete("breachctl", "tenants", "domains", ""), ["add", "remove"])
        self.assertEqual(complete("breachctl", "tenants", "domains", "add", "--d"),
                         ["--db", "--db-file"])
        self.assertIn("domains", complete("breachctl", "tenants", ""))

    def test_generated_config_file_is_accepted(self):
        docgen = os.path.join(BUILD, "docgen")
        text = subprocess.run([docgen, "conf"], capture_output=True, check=True).stdout.decode()
        settings = [l for l in text.splitlines() if re.match(r"^#?[a-z][a-z-]* = ", l)]
        rc, out, _ = run(binary("breachd"), "--help")
        self.assertEqual({"--" + l.lstrip("#").split(" ")[0] for l in settings},
                         help_flags(out) - GLOBAL)


if __name__ == "__main__":
    unittest.main()
