/* breachctl backup --to FILE: a consistent copy of the store, taken while it serves.
 *
 * The copy is a private file the command creates itself (O_CREAT|O_EXCL|O_NOFOLLOW, 0600): an
 * existing file or a link at FILE, dangling or not, is refused, so a planted link cannot send
 * the copy (every record of the store) somewhere else or overwrite what it points at. */
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/args.h"
#include "cli/cli.h"
#include "core/private_file.h"

/* true when the copy went into the file behind fd and that file is still the one at path. */
static bool landed_in(int fd, const char *path)
{
    struct stat ours, there;
    return fstat(fd, &ours) == 0 && lstat(path, &there) == 0 && S_ISREG(there.st_mode) &&
           ours.st_dev == there.st_dev && ours.st_ino == there.st_ino && ours.st_size > 0;
}

/* Removes path when it is still the file behind fd (never what replaced it). */
static void discard(int fd, const char *path)
{
    struct stat ours, there;
    if (fstat(fd, &ours) == 0 && lstat(path, &there) == 0 && ours.st_dev == there.st_dev &&
        ours.st_ino == there.st_ino)
        unlink(path);
}

int bd_cmd_backup(int argc, char **argv)
{
    const char *db = NULL, *secret = NULL, *to = NULL;
    const bd_option opts[] = {
        {"--db", &db, NULL}, {"--secret", &secret, NULL}, {"--to", &to, NULL}, {NULL, NULL, NULL}};
    if (!bd_parse_options("breachctl backup", argc, argv, opts, NULL, 0, NULL))
        return BD_EXIT_FAIL;
    if (!db || !to) {
        fputs("usage: breachctl backup --db PATH --to FILE\n", stderr);
        return BD_EXIT_FAIL;
    }
    bd_store *s;
    uint8_t key[BD_SECRET_LEN];
    if (bd_cli_open(db, secret, &s, key) != BD_EXIT_OK)
        return BD_EXIT_FAIL;
    char why[1200];
    bool exists;
    int fd = bd_private_file_create(to, &exists, why, sizeof why);
    if (fd < 0) {
        bd_store_close(s);
        fprintf(stderr, "breachctl backup: %s\n", why);
        return BD_EXIT_FAIL;
    }
    bd_store_caps caps;
    bd_store_capabilities(s, &caps);
    bd_result r = caps.online_backup ? bd_store_backup(s, to, fd) : BD_ERR_INVALID;
    bd_store_close(s);
    int rc = BD_EXIT_OK;
    if (r != BD_OK || !landed_in(fd, to) || fsync(fd) != 0) {
        if (!caps.online_backup)
            fputs("breachctl backup: this store is not copied by breachctl; back up a "
                  "PostgreSQL store with pg_dump (pg_dump --format=custom URI > FILE) and copy "
                  "its secret file with it\n",
                  stderr);
        else
            fprintf(stderr, "breachctl backup: writing %s failed: %s\n", to,
                    r == BD_ERR_IO || r == BD_OK ? "the file was replaced while it was written"
                                                 : bd_result_str(r));
        discard(fd, to);
        rc = BD_EXIT_FAIL;
    } else {
        char secret_file[4200]; /* a store with an online copy has its secret beside it */
        if (!bd_store_default_secret_path(db, secret_file, sizeof secret_file))
            snprintf(secret_file, sizeof secret_file, "%s", secret ? secret : "");
        fprintf(stderr,
                "breachctl: backed up %s to %s (mode 0600); copy the secret file (%s) with it\n",
                db, to, secret_file);
    }
    close(fd);
    return rc;
}
