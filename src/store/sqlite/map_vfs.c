/* The readers' whole-file mapping VFS (map_vfs.h). */
#define _GNU_SOURCE /* mremap */
#include "store/sqlite/map_vfs.h"

#include <fcntl.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdbool.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct {
    sqlite3_file base;   /* first: what SQLite holds */
    sqlite3_file *real;  /* the default VFS's file, in the same allocation, after this */
    bool main_db;        /* the main database file: the one mapped */
    sqlite3_int64 limit; /* the pager's mmap_size: > 0 asks for memory-mapped reads */
    int fd;              /* our own read-only descriptor of the file, for the mapping */
    unsigned char *map;  /* the mapping, or NULL */
    sqlite3_int64 map_len;
    int out; /* pages handed out and not yet given back */
} map_file;

static sqlite3_vfs map_vfs;
static sqlite3_vfs *base_vfs;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static bool registered;
/* Counted per thread, for the tests: a shared counter would be a cache line both cores write
 * on every page a search fetches. */
static _Thread_local uint64_t mapped_pages, read_pages, maps_made;

static map_file *M(sqlite3_file *f)
{
    return (map_file *)f;
}

static void unmap(map_file *f)
{
    if (f->map)
        munmap(f->map, (size_t)f->map_len);
    f->map = NULL;
    f->map_len = 0;
}

/* The file as it is now, mapped whole (nothing when it is empty or cannot be mapped: the
 * pages are then read). */
static void map_now(map_file *f)
{
    struct stat st;
    if (f->fd < 0 || fstat(f->fd, &st) != 0 || st.st_size <= 0)
        return;
    void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, f->fd, 0);
    if (p == MAP_FAILED)
        return;
    f->map = p;
    f->map_len = st.st_size;
    maps_made++;
}

static int x_close(sqlite3_file *file)
{
    map_file *f = M(file);
    unmap(f);
    if (f->fd >= 0)
        close(f->fd);
    f->fd = -1;
    return f->real->pMethods->xClose(f->real);
}

static int x_read(sqlite3_file *file, void *buf, int n, sqlite3_int64 off)
{
    map_file *f = M(file);
    if (f->main_db)
        read_pages++;
    return f->real->pMethods->xRead(f->real, buf, n, off);
}

/* A reader does not write; if a connection did, a mapping with no page out is dropped so
 * that the next fetch maps the file as the write left it. */
static int x_write(sqlite3_file *file, const void *buf, int n, sqlite3_int64 off)
{
    map_file *f = M(file);
    if (f->out == 0)
        unmap(f);
    return f->real->pMethods->xWrite(f->real, buf, n, off);
}

static int x_truncate(sqlite3_file *file, sqlite3_int64 size)
{
    map_file *f = M(file);
    if (f->out == 0)
        unmap(f);
    return f->real->pMethods->xTruncate(f->real, size);
}

static int x_sync(sqlite3_file *file, int flags)
{
    return M(file)->real->pMethods->xSync(M(file)->real, flags);
}

static int x_file_size(sqlite3_file *file, sqlite3_int64 *size)
{
    return M(file)->real->pMethods->xFileSize(M(file)->real, size);
}

static int x_lock(sqlite3_file *file, int level)
{
    return M(file)->real->pMethods->xLock(M(file)->real, level);
}

static int x_unlock(sqlite3_file *file, int level)
{
    return M(file)->real->pMethods->xUnlock(M(file)->real, level);
}

static int x_check_reserved_lock(sqlite3_file *file, int *out)
{
    return M(file)->real->pMethods->xCheckReservedLock(M(file)->real, out);
}

/* The mapping's size limit is the pager's to switch on and off, never the default VFS's to
 * act on: it is not passed on, so the default file maps nothing of its own. */
static int x_file_control(sqlite3_file *file, int op, void *arg)
{
    map_file *f = M(file);
    if (op == SQLITE_FCNTL_MMAP_SIZE && f->main_db) {
        sqlite3_int64 limit = *(sqlite3_int64 *)arg;
        *(sqlite3_int64 *)arg = f->limit;
        if (limit >= 0 && f->out == 0) {
            f->limit = limit;
            if (limit == 0)
                unmap(f);
        }
        return SQLITE_OK;
    }
    return f->real->pMethods->xFileControl(f->real, op, arg);
}

static int x_sector_size(sqlite3_file *file)
{
    return M(file)->real->pMethods->xSectorSize(M(file)->real);
}

static int x_device_characteristics(sqlite3_file *file)
{
    return M(file)->real->pMethods->xDeviceCharacteristics(M(file)->real);
}

static int x_shm_map(sqlite3_file *file, int region, int size, int extend, void volatile **p)
{
    return M(file)->real->pMethods->xShmMap(M(file)->real, region, size, extend, p);
}

static int x_shm_lock(sqlite3_file *file, int offset, int n, int flags)
{
    return M(file)->real->pMethods->xShmLock(M(file)->real, offset, n, flags);
}

static void x_shm_barrier(sqlite3_file *file)
{
    M(file)->real->pMethods->xShmBarrier(M(file)->real);
}

static int x_shm_unmap(sqlite3_file *file, int delete_flag)
{
    return M(file)->real->pMethods->xShmUnmap(M(file)->real, delete_flag);
}

static int x_fetch(sqlite3_file *file, sqlite3_int64 off, int n, void **p)
{
    map_file *f = M(file);
    *p = NULL;
    if (!f->main_db || f->limit <= 0)
        return SQLITE_OK;
    if (!f->map)
        map_now(f);
    if (f->map && off >= 0 && n >= 0 && off + n <= f->map_len) {
        *p = f->map + off;
        f->out++;
        mapped_pages++;
    }
    return SQLITE_OK;
}

/* The mapping made to fit the file's size now. The pager says the file changed at any
 * commit of another connection (the server's own usage counts commit every second), and
 * the unix VFS then unmaps the whole file: at 11 GB the munmap alone took 10 ms, and every
 * page a search touched afterwards faulted in again. What can have changed for a mapping is
 * the size: the pages' contents are the page cache's, which the mapping shares. So the
 * mapping is kept as it is, grown in place, or cut at the new end. */
static void fit(map_file *f)
{
    struct stat st;
    if (!f->map)
        return;
    if (fstat(f->fd, &st) != 0 || st.st_size <= 0) {
        unmap(f);
        return;
    }
    if (st.st_size > f->map_len) {
#ifdef MREMAP_MAYMOVE
        void *p = mremap(f->map, (size_t)f->map_len, (size_t)st.st_size, MREMAP_MAYMOVE);
        if (p != MAP_FAILED) {
            f->map = p;
            f->map_len = st.st_size;
            return;
        }
#endif
        unmap(f); /* made again at the next fetch */
    } else if (st.st_size < f->map_len) {
        size_t os_page = (size_t)sysconf(_SC_PAGESIZE);
        size_t keep = ((size_t)st.st_size + os_page - 1) / os_page * os_page;
        if (keep < (size_t)f->map_len)
            munmap(f->map + keep, (size_t)f->map_len - keep);
        f->map_len = st.st_size;
    }
}

/* A page given back, or (no page) the pager's word that the file changed, given with no
 * page out: the mapping then fits itself to the file's new size. */
static int x_unfetch(sqlite3_file *file, sqlite3_int64 off, void *p)
{
    (void)off;
    map_file *f = M(file);
    if (p)
        f->out--;
    else if (f->out == 0)
        fit(f);
    return SQLITE_OK;
}

static const sqlite3_io_methods map_methods = {
    3,
    x_close,
    x_read,
    x_write,
    x_truncate,
    x_sync,
    x_file_size,
    x_lock,
    x_unlock,
    x_check_reserved_lock,
    x_file_control,
    x_sector_size,
    x_device_characteristics,
    x_shm_map,
    x_shm_lock,
    x_shm_barrier,
    x_shm_unmap,
    x_fetch,
    x_unfetch,
};

static int x_open(sqlite3_vfs *vfs, const char *name, sqlite3_file *file, int flags, int *out)
{
    (void)vfs;
    map_file *f = M(file);
    memset(f, 0, sizeof *f);
    f->fd = -1;
    f->real = (sqlite3_file *)(f + 1);
    int rc = base_vfs->xOpen(base_vfs, name, f->real, flags, out);
    if (rc != SQLITE_OK || !f->real->pMethods) {
        f->base.pMethods = NULL; /* SQLite closes nothing */
        return rc;
    }
    if ((flags & SQLITE_OPEN_MAIN_DB) && name) {
        f->main_db = true;
        /* the same file, read-only, for the mapping; without it every page is read */
        f->fd = open(name, O_RDONLY | O_CLOEXEC);
    }
    f->base.pMethods = &map_methods;
    return SQLITE_OK;
}

static int x_delete(sqlite3_vfs *vfs, const char *name, int sync_dir)
{
    (void)vfs;
    return base_vfs->xDelete(base_vfs, name, sync_dir);
}

static int x_access(sqlite3_vfs *vfs, const char *name, int flags, int *out)
{
    (void)vfs;
    return base_vfs->xAccess(base_vfs, name, flags, out);
}

static int x_full_pathname(sqlite3_vfs *vfs, const char *name, int n, char *out)
{
    (void)vfs;
    return base_vfs->xFullPathname(base_vfs, name, n, out);
}

static void register_vfs(void)
{
    base_vfs = sqlite3_vfs_find(NULL);
    if (!base_vfs || base_vfs->iVersion < 1)
        return;
    /* the default VFS's every other entry (randomness, time, dlopen, system calls) as is */
    map_vfs = *base_vfs;
    map_vfs.szOsFile = (int)sizeof(map_file) + base_vfs->szOsFile;
    map_vfs.pNext = NULL;
    map_vfs.zName = "breachd-map";
    map_vfs.pAppData = NULL;
    map_vfs.xOpen = x_open;
    map_vfs.xDelete = x_delete;
    map_vfs.xAccess = x_access;
    map_vfs.xFullPathname = x_full_pathname;
    registered = sqlite3_vfs_register(&map_vfs, 0) == SQLITE_OK;
}

const char *sq_map_vfs(void)
{
    pthread_once(&once, register_vfs);
    return registered ? map_vfs.zName : NULL;
}

void sq_map_vfs_counts(uint64_t *mapped, uint64_t *read, uint64_t *made)
{
    *mapped = mapped_pages;
    *read = read_pages;
    *made = maps_made;
}
