/* Server secret file and keyed hashing. */
#include "auth/secret.h"

#include <errno.h>
#include <fcntl.h>
#include <sodium.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/sha256.h"

bd_result bd_secret_create(const char *path, char *why, size_t whylen)
{
    if (sodium_init() < 0)
        return BD_ERR_CRYPTO;
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0) {
        snprintf(why, whylen, "cannot create the secret file %s: %s", path, strerror(errno));
        return errno == EEXIST ? BD_ERR_EXISTS : BD_ERR_IO;
    }
    uint8_t key[BD_SECRET_LEN];
    randombytes_buf(key, sizeof key);
    char hex[2 * BD_SECRET_LEN + 2];
    sodium_bin2hex(hex, sizeof hex, key, sizeof key);
    sodium_memzero(key, sizeof key);
    size_t n = strlen(hex);
    hex[n++] = '\n';
    bool ok = write(fd, hex, n) == (ssize_t)n && fsync(fd) == 0;
    sodium_memzero(hex, sizeof hex);
    if (close(fd) != 0)
        ok = false;
    if (!ok) {
        snprintf(why, whylen, "cannot write the secret file %s", path);
        unlink(path);
        return BD_ERR_IO;
    }
    return BD_OK;
}

bd_result bd_secret_load(const char *path, uint8_t out[BD_SECRET_LEN], char *why, size_t whylen)
{
    if (sodium_init() < 0)
        return BD_ERR_CRYPTO;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        snprintf(why, whylen, "cannot open the secret file %s: %s", path, strerror(errno));
        return errno == ENOENT ? BD_ERR_NOT_FOUND : BD_ERR_IO;
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || (st.st_mode & 077) != 0) {
        close(fd);
        snprintf(why, whylen, "the secret file %s may be read by other users; run 'chmod 600 %s'",
                 path, path);
        return BD_ERR_INVALID;
    }
    char hex[2 * BD_SECRET_LEN + 8];
    ssize_t n = read(fd, hex, sizeof hex - 1);
    close(fd);
    size_t bin_len = 0;
    if (n < 2 * BD_SECRET_LEN ||
        sodium_hex2bin(out, BD_SECRET_LEN, hex, (size_t)n, "\n", &bin_len, NULL) != 0 ||
        bin_len != BD_SECRET_LEN) {
        sodium_memzero(hex, sizeof hex);
        snprintf(why, whylen, "the secret file %s is not a breachd secret", path);
        return BD_ERR_INVALID;
    }
    sodium_memzero(hex, sizeof hex);
    return BD_OK;
}

void bd_secret_fingerprint(const uint8_t secret[BD_SECRET_LEN], char out[65])
{
    uint8_t mac[BD_MAC_LEN];
    bd_keyed_hash(secret, "fingerprint", "", 0, mac);
    sodium_bin2hex(out, 65, mac, sizeof mac);
}

void bd_keyed_hash(const uint8_t secret[BD_SECRET_LEN], const char *label, const void *data,
                   size_t len, uint8_t out[BD_MAC_LEN])
{
    /* Keying HMAC hashes two blocks (the padded key, inner and outer) before any data: a
     * third of a short hash. Each thread keeps the keyed state for the secret it last saw
     * (one per process in practice) and starts every hash from a copy of it. */
    static _Thread_local struct {
        bool set;
        uint8_t secret[BD_SECRET_LEN];
        bd_hmac_sha256_state keyed;
    } cache;
    if (!cache.set || sodium_memcmp(cache.secret, secret, BD_SECRET_LEN) != 0) {
        bd_hmac_sha256_init(&cache.keyed, secret, BD_SECRET_LEN);
        memcpy(cache.secret, secret, BD_SECRET_LEN);
        cache.set = true;
    }
    bd_hmac_sha256_state st = cache.keyed;
    bd_hmac_sha256_update(&st, label, strlen(label) + 1);
    bd_hmac_sha256_update(&st, data, len);
    bd_hmac_sha256_final(&st, out);
}

void bd_card_key(const uint8_t secret[BD_SECRET_LEN], const uint8_t sha256[32],
                 uint8_t out[BD_MAC_LEN])
{
    bd_keyed_hash(secret, "card", sha256, 32, out);
}

void bd_cvv_key(const uint8_t secret[BD_SECRET_LEN], bd_slice cvv, uint8_t out[BD_MAC_LEN])
{
    bd_keyed_hash(secret, "cvv", cvv.ptr, cvv.len, out);
}
