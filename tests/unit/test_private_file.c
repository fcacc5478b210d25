/* Owner-only files: modes are 0600 whatever the umask, links are never written through, and a
 * store opened for writing keeps all its files private. */
#include "core/private_file.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "store/store.h"
#include "test.h"

static char dir[] = "/tmp/bd_test_private_XXXXXX";
static char why[512];

static const char *in_dir(const char *name)
{
    static char paths[4][300];
    static int next;
    char *p = paths[next++ % 4];
    snprintf(p, 300, "%s/%s", dir, name);
    return p;
}

static int mode_of(const char *path)
{
    struct stat st;
    return lstat(path, &st) == 0 ? (int)(st.st_mode & 07777) : -1;
}

static void write_file(const char *path, const char *text, int mode)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text))
        TEST_FAIL("cannot write %s", path);
    if (fd >= 0)
        close(fd);
    chmod(path, (mode_t)mode);
}

TEST(test_create_makes_a_0600_file_whatever_the_umask)
{
    mode_t old = umask(0);
    bool exists;
    int fd = bd_private_file_create(in_dir("loose"), &exists, why, sizeof why);
    CHECK(fd >= 0);
    CHECK_INT(mode_of(in_dir("loose")), 0600);
    umask(0277); /* even a umask that takes the owner's write bit */
    int fd2 = bd_private_file_create(in_dir("tight"), &exists, why, sizeof why);
    CHECK(fd2 >= 0);
    CHECK_INT(mode_of(in_dir("tight")), 0600);
    umask(old);
    close(fd);
    close(fd2);
}

TEST(test_create_refuses_an_existing_file_and_leaves_it_alone)
{
    write_file(in_dir("taken"), "mine", 0644);
    bool exists = false;
    CHECK_INT(bd_private_file_create(in_dir("taken"), &exists, why, sizeof why), -1);
    CHECK(exists);
    char want[400];
    snprintf(want, sizeof want, "%s exists; choose a new file", in_dir("taken"));
    CHECK_STR(why, want);
    CHECK_INT(mode_of(in_dir("taken")), 0644);
}

TEST(test_create_refuses_a_dangling_symlink_and_creates_nothing)
{
    CHECK_INT(symlink(in_dir("target"), in_dir("link")), 0);
    bool exists = false;
    CHECK_INT(bd_private_file_create(in_dir("link"), &exists, why, sizeof why), -1);
    CHECK(exists);
    char want[400];
    snprintf(want, sizeof want, "%s is a symbolic link; refusing to write through it",
             in_dir("link"));
    CHECK_STR(why, want);
    CHECK_INT(access(in_dir("target"), F_OK), -1);
}

TEST(test_restrict_takes_group_and_other_bits_off)
{
    write_file(in_dir("r644"), "x", 0644);
    CHECK_INT(bd_private_file_restrict(in_dir("r644"), false, why, sizeof why), BD_OK);
    CHECK_INT(mode_of(in_dir("r644")), 0600);
    write_file(in_dir("r755"), "x", 0755);
    CHECK_INT(bd_private_file_restrict(in_dir("r755"), false, why, sizeof why), BD_OK);
    CHECK_INT(mode_of(in_dir("r755")), 0700);
    write_file(in_dir("r400"), "x", 0400);
    CHECK_INT(bd_private_file_restrict(in_dir("r400"), false, why, sizeof why), BD_OK);
    CHECK_INT(mode_of(in_dir("r400")), 0400);
}

TEST(test_restrict_of_a_missing_file_creates_it_only_when_asked)
{
    CHECK_INT(bd_private_file_restrict(in_dir("absent"), false, why, sizeof why), BD_OK);
    CHECK_INT(mode_of(in_dir("absent")), -1);
    mode_t old = umask(0222);
    CHECK_INT(bd_private_file_restrict(in_dir("made"), true, why, sizeof why), BD_OK);
    umask(old);
    CHECK_INT(mode_of(in_dir("made")), 0600);
}

TEST(test_store_files_are_0600_under_umask_022)
{
    mode_t old = umask(022);
    bd_store *s = NULL, *reader = NULL;
    const char *db = in_dir("s.db");
    CHECK_INT(bd_store_open(db, BD_STORE_WRITE | BD_STORE_CREATE, &s, why, sizeof why), BD_OK);
    CHECK_INT(bd_store_open(db, BD_STORE_READ, &reader, why, sizeof why), BD_OK);
    if (s && reader) {
        CHECK_INT(bd_store_meta_set(s, "probe", "1"), BD_OK);
        char v[8];
        CHECK_INT(bd_store_meta_get(reader, "probe", v, sizeof v), BD_OK);
        char side[320];
        CHECK_INT(mode_of(db), 0600);
        snprintf(side, sizeof side, "%s-wal", db);
        CHECK_INT(mode_of(side), 0600);
        snprintf(side, sizeof side, "%s-shm", db);
        CHECK_INT(mode_of(side), 0600);
    }
    bd_store_close(reader);
    bd_store_close(s);
    umask(old);
}

int main(void)
{
    if (!mkdtemp(dir))
        return 1;
    RUN(test_create_makes_a_0600_file_whatever_the_umask);
    RUN(test_create_refuses_an_existing_file_and_leaves_it_alone);
    RUN(test_create_refuses_a_dangling_symlink_and_creates_nothing);
    RUN(test_restrict_takes_group_and_other_bits_off);
    RUN(test_restrict_of_a_missing_file_creates_it_only_when_asked);
    RUN(test_store_files_are_0600_under_umask_022);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
    return TEST_EXIT();
}
