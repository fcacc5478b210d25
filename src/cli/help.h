/* The one description of both programs' commands and options. It prints every --help, is
 * the list of breachd.conf keys and BREACHD_<NAME> variables (cli/settings.h), and generates
 * the man pages breachd(8), breachctl(1) and breachd.conf(5), the commented configuration
 * file the package installs and the bash completion (src/docgen.c): so none of them can
 * drift from the others. tests/e2e/test_help.py holds it against the options each command's
 * parser accepts. */
#ifndef BD_CLI_HELP_H
#define BD_CLI_HELP_H

#include <stdbool.h>
#include <stdio.h>

enum {
    BD_HELP_REPEAT = 1,  /* may be given several times */
    BD_HELP_SETTING = 2, /* breachd: also a breachd.conf key and a BREACHD_<NAME> variable */
};

typedef struct {
    const char *name; /* "--listen" */
    const char *arg;  /* "HOST:PORT"; NULL for an option without a value */
    unsigned flags;
    const char *def;  /* the default as shown, or NULL */
    const char *text; /* what it does, one or a few sentences */
} bd_help_opt;

typedef struct {
    const char *words;    /* "keys create"; "" for the program alone */
    const char *operands; /* "ID N/month|none", or NULL */
    const char *summary;
    const bd_help_opt *const *opts; /* NULL-terminated */
} bd_help_cmd;

typedef struct {
    const char *name;    /* "breachctl" */
    const char *section; /* "1" */
    const char *purpose; /* the man page's NAME line */
    const char *description;
    const bd_help_cmd *cmds;
    size_t ncmds;
    const char *exit_status;
} bd_help_prog;

extern const bd_help_prog BD_HELP_BREACHD;
extern const bd_help_prog BD_HELP_BREACHCTL;

/* The configuration file's default path (breachd.conf(5)). */
#define BD_CONFIG_DEFAULT_PATH "/etc/breachd/breachd.conf"

/* The command that the words of argv name (the longest match: "keys create" over "keys"),
 * or NULL; *group is set when argv names a command group ("keys") rather than one
 * command. */
const bd_help_cmd *bd_help_find(const bd_help_prog *p, int argc, char **argv, const char **group);

/* Whether argv (after the program name) asks for help: "--help" or "-h" anywhere. */
bool bd_help_asked(int argc, char **argv);

/* Whether argv asks for the version: "--version" anywhere (after --help is checked). */
bool bd_version_asked(int argc, char **argv);

/* Prints the help of one command, of a group's commands (group set), or of the program
 * (c and group NULL). */
void bd_help_print(FILE *f, const bd_help_prog *p, const bd_help_cmd *c, const char *group);

/* Prints "<program> VERSION (commit C)" and the versions of the linked libraries. */
void bd_help_version(FILE *f, const char *program);

/* The option of breachd named name ("listen" or "--listen"), or NULL. */
const bd_help_opt *bd_help_breachd_option(const char *name);

#endif
