/* docgen: writes what is generated from the programs' one description of their options
 * (cli/help.h), so none of it can drift from --help:
 *   docgen man breachd|breachctl|breachd.conf   the man page, man(7) source
 *   docgen conf                                 the commented breachd.conf the package installs
 *   docgen completion                           bash completion for breachctl
 * The Makefile runs it (make man, make install, make deb). */
#include <stdio.h>
#include <string.h>

#include "cli/help.h"
#include "core/version.h"

/* Text for a man page: '-' and '\' escaped, a line never starting with '.' or '''. */
static void roff(FILE *f, const char *s)
{
    if (*s == '.' || *s == '\'')
        fputs("\\&", f);
    for (; *s; s++) {
        if (*s == '-' || *s == '\\')
            fputc('\\', f);
        fputc(*s == '\\' ? 'e' : *s, f);
    }
}

static void man_head(FILE *f, const char *name, const char *section, const char *purpose)
{
    fprintf(f, ".TH %s %s \"\" \"breachd %s\" \"breachd\"\n.SH NAME\n%s \\- ", name, section,
            bd_version(), name);
    roff(f, purpose);
    fputc('\n', f);
}

static void man_opts(FILE *f, const bd_help_opt *const *opts, bool settings)
{
    for (size_t i = 0; opts[i]; i++) {
        const bd_help_opt *o = opts[i];
        fputs(".TP\n\\fB", f);
        roff(f, settings ? o->name + 2 : o->name);
        fputs("\\fR", f);
        if (o->arg) {
            fputs(settings ? " = \\fI" : " \\fI", f);
            roff(f, o->arg);
            fputs("\\fR", f);
        }
        if (o->flags & BD_HELP_REPEAT)
            fputs(settings ? " (may be repeated)" : " ...", f);
        fputc('\n', f);
        roff(f, o->text);
        if (o->def) {
            fputs(" Default: ", f);
            roff(f, o->def);
            fputc('.', f);
        }
        if (settings) {
            char env[96];
            size_t n = (size_t)snprintf(env, sizeof env, "BREACHD_%s", o->name + 2);
            for (size_t k = 8; k < n && k < sizeof env; k++)
                env[k] = env[k] == '-'
                             ? '_'
                             : (char)(env[k] >= 'a' && env[k] <= 'z' ? env[k] - 32 : env[k]);
            fputs(" Environment: \\fB", f);
            roff(f, env);
            fputs("\\fR.", f);
        }
        fputc('\n', f);
    }
}

static void man_program(FILE *f, const bd_help_prog *p)
{
    man_head(f, p->name, p->section, p->purpose);
    fputs(".SH SYNOPSIS\n", f);
    for (size_t i = 0; i < p->ncmds; i++) {
        const bd_help_cmd *c = &p->cmds[i];
        fprintf(f, ".B %s%s", p->name, c->words[0] ? " " : "");
        roff(f, c->words);
        fputc('\n', f);
        if (c->operands) {
            fputs(".I ", f);
            roff(f, c->operands);
            fputc('\n', f);
        }
        fputs("[\\fIoptions\\fR]\n.br\n", f);
    }
    fputs(".SH DESCRIPTION\n", f);
    roff(f, p->description);
    fputc('\n', f);
    if (p->ncmds == 1) {
        fputs(".SH OPTIONS\n", f);
        man_opts(f, p->cmds[0].opts, false);
    } else {
        fputs(".SH COMMANDS\n", f);
        for (size_t i = 0; i < p->ncmds; i++) {
            const bd_help_cmd *c = &p->cmds[i];
            fputs(".SS ", f);
            roff(f, c->words);
            if (c->operands) {
                fputc(' ', f);
                roff(f, c->operands);
            }
            fputc('\n', f);
            roff(f, c->summary);
            fputc('\n', f);
            man_opts(f, c->opts, false);
        }
        fputs(".SS Every command\n", f);
        fputs(".TP\n\\fB\\-\\-config\\fR \\fIFILE\\fR\nRead the store and its secret from FILE "
              "(breachd.conf(5)) instead of /etc/breachd/breachd.conf.\n",
              f);
        fputs(".TP\n\\fB\\-\\-help\\fR\nPrint the command's help and exit 0.\n", f);
        fputs(".TP\n\\fB\\-\\-version\\fR\nPrint the version and the linked libraries' and "
              "exit 0.\n",
              f);
    }
    fputs(".SH EXIT STATUS\n", f);
    roff(f, p->exit_status);
    fputs("\n.SH ENVIRONMENT\n", f);
    if (p->ncmds == 1)
        fputs("Each option of breachd.conf(5) as \\fBBREACHD_\\fR\\fINAME\\fR (upper case, "
              "\\(aq_\\(aq for \\(aq\\-\\(aq), below the command line and above the file. "
              "\\fBBREACHD_CONFIG\\fR names the configuration file. "
              "\\fBNOTIFY_SOCKET\\fR (set by systemd) receives READY=1 once it serves.\n",
              f);
    else
        fputs("\\fBBREACHD_DB\\fR and \\fBBREACHD_SECRET\\fR stand for \\-\\-db and "
              "\\-\\-secret; \\fBBREACHD_CONFIG\\fR names the configuration file.\n",
              f);
    fputs(".SH FILES\n.TP\n/etc/breachd/breachd.conf\nThe configuration file "
          "(breachd.conf(5)).\n.TP\n/var/lib/breachd\nThe package's store and secret.\n",
          f);
    fprintf(f, ".SH SEE ALSO\n%s\n",
            p->ncmds == 1 ? "breachctl(1), breachd.conf(5)" : "breachd(8), breachd.conf(5)");
}

static void man_conf(FILE *f)
{
    man_head(f, "breachd.conf", "5", "configuration file of breachd and breachctl");
    fputs(".SH SYNOPSIS\n/etc/breachd/breachd.conf\n.SH DESCRIPTION\n"
          "breachd(8) reads its settings from this file, or from the file named by "
          "\\fB\\-\\-config\\fR or \\fBBREACHD_CONFIG\\fR (\\fInone\\fR: no file); the "
          "default file is read only when it exists. breachctl(1) reads the same file for the "
          "store and its secret (\\fBdb\\fR, \\fBdb\\-file\\fR, \\fBsecret\\fR), which it uses "
          "when its command line and environment name no store.\n.PP\n"
          "Each line is \\fIkey\\fR = \\fIvalue\\fR, the key named like breachd's long option "
          "without its leading dashes; the value is the rest of the line with the spaces "
          "around it removed (no quoting, so a libpq keyword string is one value). Blank "
          "lines and lines starting with # are ignored. A repeatable option is given on "
          "several lines. A key that is not a setting, a setting given twice, or a value the "
          "option refuses stops breachd at start with the file and line.\n.PP\n"
          "Precedence: a command-line flag wins over the environment (\\fBBREACHD_\\fR"
          "\\fINAME\\fR), which wins over this file; a repeatable option given at one level "
          "replaces all its values from the levels below.\n.PP\n"
          "The file must not be writable by other users. A file holding a password (a "
          "PostgreSQL URI with one, in \\fBdb\\fR or \\fBshared\\-limits\\fR) is refused when "
          "every user can read it: make it mode 0640, owner root and group breachd, or keep "
          "the URI in a private file named by \\fBdb\\-file\\fR.\n.SH SETTINGS\n",
          f);
    const bd_help_opt *const *opts = BD_HELP_BREACHD.cmds[0].opts;
    const bd_help_opt *keep[64];
    size_t n = 0;
    for (size_t i = 0; opts[i] && n < 63; i++)
        if (opts[i]->flags & BD_HELP_SETTING)
            keep[n++] = opts[i];
    keep[n] = NULL;
    man_opts(f, keep, true);
    fputs(".SH EXAMPLE\n.nf\ndb = /var/lib/breachd/breachd.db\nsecret = "
          "/var/lib/breachd/breachd.secret\nlisten = 127.0.0.1:8080\ncors\\-origin = "
          "https://dash.example.com\ncors\\-origin = https://admin.example.com\n.fi\n"
          ".SH SEE ALSO\nbreachd(8), breachctl(1)\n",
          f);
}

/* The commented configuration file: every setting, its text, its default. */
static void conf(FILE *f)
{
    fputs("# breachd configuration (breachd.conf(5)). One \"key = value\" a line, keys named\n"
          "# like breachd's long options; a flag (breachd --listen ...) or an environment\n"
          "# variable (BREACHD_LISTEN=...) wins over this file. breachctl reads db, db-file\n"
          "# and secret from here too. Keep this file mode 0640, root:breachd, if it holds a\n"
          "# password.\n#\n"
          "# The store the package made on first install, and its secret:\n"
          "db = /var/lib/breachd/breachd.db\n"
          "secret = /var/lib/breachd/breachd.secret\n",
          f);
    const bd_help_opt *const *opts = BD_HELP_BREACHD.cmds[0].opts;
    for (size_t i = 0; opts[i]; i++) {
        const bd_help_opt *o = opts[i];
        if (!(o->flags & BD_HELP_SETTING) || !strcmp(o->name, "--db") ||
            !strcmp(o->name, "--secret"))
            continue;
        fputs("\n#", f);
        const char *t = o->text;
        int col = 1;
        while (*t) { /* the text, wrapped at 78 columns */
            size_t w = strcspn(t, " ");
            if (col + 1 + (int)w > 78) {
                fputs("\n#", f);
                col = 1;
            }
            fprintf(f, " %.*s", (int)w, t);
            col += 1 + (int)w;
            t += w;
            while (*t == ' ')
                t++;
        }
        fprintf(f, "%s\n#%s = %s\n", o->flags & BD_HELP_REPEAT ? "\n# (one line per value)" : "",
                o->name + 2, o->def && !strchr(o->def, ' ') ? o->def : o->arg);
    }
}

/* Whether name (n bytes) was already printed as one of words' space-separated entries. */
static bool listed(const char *words, const char *name, size_t n)
{
    for (const char *w = words; *w;) {
        size_t len = strcspn(w, " ");
        if (len == n && !strncmp(w, name, n))
            return true;
        w += len;
        w += *w == ' ';
    }
    return false;
}

/* The words that may follow prefix (k bytes of a command's words: "" or "tenants" or
 * "tenants domains"), space-separated, each once. */
static void next_words(const bd_help_prog *p, const char *prefix, size_t k, char *out,
                       size_t cap)
{
    out[0] = '\0';
    for (size_t i = 0; i < p->ncmds; i++) {
        const char *w = p->cmds[i].words;
        if (strncmp(w, prefix, k) != 0 || (k && w[k] != ' ') || strlen(w) == k)
            continue;
        const char *next = k ? w + k + 1 : w;
        size_t n = strcspn(next, " ");
        if (!listed(out, next, n)) {
            size_t used = strlen(out);
            snprintf(out + used, cap - used, "%s%.*s", used ? " " : "", (int)n, next);
        }
    }
}

/* Bash completion of breachctl's commands, subcommands and options: the words typed before
 * the cursor pick a command (its options) or a group (its subcommands). */
static void completion(FILE *f)
{
    const bd_help_prog *p = &BD_HELP_BREACHCTL;
    fputs("# bash completion for breachctl (generated by docgen from its --help tables)\n"
          "_breachctl()\n{\n    local cur=${COMP_WORDS[COMP_CWORD]} words\n"
          "    local line=\" \" i\n"
          "    for ((i = 1; i < COMP_CWORD; i++)); do line+=\"${COMP_WORDS[i]} \"; done\n"
          "    case \"$line\" in\n",
          f);
    /* commands, the longest first, so "tenants domains add" wins over a shorter prefix */
    for (int nwords = 4; nwords >= 1; nwords--)
        for (size_t i = 0; i < p->ncmds; i++) {
            const bd_help_cmd *c = &p->cmds[i];
            int n = 1;
            for (const char *w = c->words; *w; w++)
                n += *w == ' ';
            if (n != nwords)
                continue;
            fprintf(f, "    \" %s \"*)\n        words=\"", c->words);
            for (size_t k = 0; c->opts[k]; k++)
                fprintf(f, "%s ", c->opts[k]->name);
            fputs("--config --help\" ;;\n", f);
        }
    /* groups: every proper prefix of a command of several words */
    char seen[1024] = "", words[1024];
    for (size_t i = 0; i < p->ncmds; i++) {
        const char *w = p->cmds[i].words;
        for (const char *sp = strchr(w, ' '); sp; sp = strchr(sp + 1, ' ')) {
            size_t k = (size_t)(sp - w);
            char group[128];
            snprintf(group, sizeof group, "%.*s", (int)k, w);
            for (char *c = group; *c; c++) /* one entry of seen per group */
                *c = *c == ' ' ? '+' : *c;
            if (listed(seen, group, strlen(group)))
                continue;
            size_t used = strlen(seen);
            snprintf(seen + used, sizeof seen - used, "%s%s", used ? " " : "", group);
            next_words(p, w, k, words, sizeof words);
            fprintf(f, "    \" %.*s \") words=\"%s\" ;;\n", (int)k, w, words);
        }
    }
    next_words(p, "", 0, words, sizeof words);
    fprintf(f, "    \" \") words=\"%s --help --version\" ;;\n", words);
    fputs("    *) words=\"\" ;;\n    esac\n"
          "    if [[ $cur != -* && $line != \" \" && -z $(compgen -W \"$words\" -- \"$cur\") ]]; then\n"
          "        COMPREPLY=($(compgen -f -- \"$cur\"))\n"
          "    else\n"
          "        COMPREPLY=($(compgen -W \"$words\" -- \"$cur\"))\n"
          "    fi\n}\ncomplete -o default -F _breachctl breachctl\n",
          f);
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "man") == 0) {
        if (strcmp(argv[2], "breachd") == 0)
            man_program(stdout, &BD_HELP_BREACHD);
        else if (strcmp(argv[2], "breachctl") == 0)
            man_program(stdout, &BD_HELP_BREACHCTL);
        else if (strcmp(argv[2], "breachd.conf") == 0)
            man_conf(stdout);
        else
            return 2;
        return 0;
    }
    if (argc == 2 && strcmp(argv[1], "conf") == 0) {
        conf(stdout);
        return 0;
    }
    if (argc == 2 && strcmp(argv[1], "completion") == 0) {
        completion(stdout);
        return 0;
    }
    fputs("usage: docgen man breachd|breachctl|breachd.conf | conf | completion\n", stderr);
    return 2;
}
