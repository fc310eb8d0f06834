#include "ncmp_jwt.h"

#include <curl/curl.h>
#include <errno.h>
#include <json-c/json.h>
#include <jwt.h>
#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/param_build.h>
#include <openssl/pem.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "ncmp_buf.h"
#include "ncmp_log.h"
#include "ncmp_time.h"

#define REFETCH_MIN_S 10
#define MAX_TOKEN     16384

/* One public key of a JWK set, as the PEM text libjwt reads. */
typedef struct jwt_key {
    char *kid;     /* NULL: none */
    int ec;        /* 0 RSA, 1 EC */
    jwt_alg_t alg; /* the one alg this key serves: the JWK's, or its curve's
                      for EC; JWT_ALG_INVAL: any RS* (an RSA key without alg) */
    char *pem;
} jwt_key;

typedef struct key_set {
    jwt_key *keys;
    size_t n;
} key_set;

struct ncmp_jwt {
    char *url, *issuer, *audience;
    unsigned char *secret;
    int secret_len;
    int refresh_s, skew_s;
    key_set file_keys;
    pthread_rwlock_t lock; /* url_keys */
    key_set url_keys;
    /* the refresh thread */
    pthread_t thread;
    int has_thread;
    pthread_mutex_t mu;
    pthread_cond_t cond;
    int stop, refetch;
};

static void keys_free(key_set *s)
{
    for (size_t i = 0; i < s->n; i++) {
        free(s->keys[i].kid);
        free(s->keys[i].pem);
    }
    free(s->keys);
    s->keys = NULL;
    s->n = 0;
}

/* Base64url (RFC 4648 §5, padding optional) into new bytes; NULL when it
 * is not that. */
static unsigned char *b64url_decode(const char *s, size_t n, size_t *outlen)
{
    size_t padded = (n + 3) / 4 * 4;
    char *t = ncmp_xmalloc(padded + 1);
    unsigned char *out;
    int len, pad = 0;

    if (n % 4 == 1) {
        free(t);
        return NULL;
    }
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (c == '-')
            c = '+';
        else if (c == '_')
            c = '/';
        else if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'))) {
            free(t);
            return NULL;
        }
        t[i] = c;
    }
    for (size_t i = n; i < padded; i++, pad++)
        t[i] = '=';
    t[padded] = '\0';
    out = ncmp_xmalloc(padded / 4 * 3 + 1);
    len = padded ? EVP_DecodeBlock(out, (const unsigned char *)t, (int)padded) : 0;
    free(t);
    if (len < pad) {
        free(out);
        return NULL;
    }
    *outlen = (size_t)(len - pad);
    out[*outlen] = '\0';
    return out;
}

/* A base64url member of a JWK as a big number; NULL when absent or bad. */
static BIGNUM *jwk_bn(json_object *jwk, const char *name, size_t want_len)
{
    json_object *v;
    unsigned char *raw;
    size_t len;
    BIGNUM *bn;

    if (!json_object_object_get_ex(jwk, name, &v) || !json_object_is_type(v, json_type_string))
        return NULL;
    raw = b64url_decode(json_object_get_string(v), (size_t)json_object_get_string_len(v), &len);
    if (!raw || len == 0 || (want_len && len != want_len)) {
        free(raw);
        return NULL;
    }
    bn = BN_bin2bn(raw, (int)len, NULL);
    free(raw);
    return bn;
}

static const char *jwk_str(json_object *jwk, const char *name)
{
    json_object *v;
    if (!json_object_object_get_ex(jwk, name, &v) || !json_object_is_type(v, json_type_string))
        return NULL;
    return json_object_get_string(v);
}

/* The public key of one JWK as PEM; NULL (with why) when unusable. */
static char *jwk_pem(json_object *jwk, int *ec, jwt_alg_t *alg, const char **why)
{
    const char *kty = jwk_str(jwk, "kty"), *crv, *a = jwk_str(jwk, "alg");
    OSSL_PARAM_BLD *bld = OSSL_PARAM_BLD_new();
    OSSL_PARAM *params = NULL;
    EVP_PKEY_CTX *ctx = NULL;
    EVP_PKEY *pkey = NULL;
    BIGNUM *n = NULL, *e = NULL, *x = NULL, *y = NULL;
    BIO *bio = NULL;
    unsigned char pt[1 + 2 * 66]; /* an EC point: the builder keeps a pointer to it */
    char *pem = NULL, *data;
    long len;

    *why = NULL;
    *alg = a ? jwt_str_alg(a) : JWT_ALG_INVAL;
    if (kty && strcmp(kty, "RSA") == 0) {
        *ec = 0;
        if (a && *alg != JWT_ALG_RS256 && *alg != JWT_ALG_RS384 && *alg != JWT_ALG_RS512) {
            *why = "an RSA key for another alg";
            goto done;
        }
        n = jwk_bn(jwk, "n", 0);
        e = jwk_bn(jwk, "e", 0);
        if (!n || !e) {
            *why = "an RSA key without n and e";
            goto done;
        }
        OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_N, n);
        OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_E, e);
        ctx = EVP_PKEY_CTX_new_from_name(NULL, "RSA", NULL);
    } else if (kty && strcmp(kty, "EC") == 0) {
        static const struct {
            const char *crv, *group;
            size_t len;
            jwt_alg_t alg;
        } curves[] = {{"P-256", "prime256v1", 32, JWT_ALG_ES256},
                      {"P-384", "secp384r1", 48, JWT_ALG_ES384},
                      {"P-521", "secp521r1", 66, JWT_ALG_ES512}};
        size_t i;

        *ec = 1;
        crv = jwk_str(jwk, "crv");
        for (i = 0; i < sizeof(curves) / sizeof(curves[0]); i++)
            if (crv && strcmp(crv, curves[i].crv) == 0)
                break;
        if (i == sizeof(curves) / sizeof(curves[0])) {
            *why = "an EC key on a curve other than P-256, P-384, P-521";
            goto done;
        }
        if (a && *alg != curves[i].alg) {
            *why = "an EC key for another alg";
            goto done;
        }
        *alg = curves[i].alg;
        x = jwk_bn(jwk, "x", curves[i].len);
        y = jwk_bn(jwk, "y", curves[i].len);
        if (!x || !y) {
            *why = "an EC key without x and y of its curve's size";
            goto done;
        }
        pt[0] = 4; /* uncompressed point */
        BN_bn2binpad(x, pt + 1, (int)curves[i].len);
        BN_bn2binpad(y, pt + 1 + curves[i].len, (int)curves[i].len);
        OSSL_PARAM_BLD_push_utf8_string(bld, OSSL_PKEY_PARAM_GROUP_NAME, curves[i].group, 0);
        OSSL_PARAM_BLD_push_octet_string(bld, OSSL_PKEY_PARAM_PUB_KEY, pt, 1 + 2 * curves[i].len);
        ctx = EVP_PKEY_CTX_new_from_name(NULL, "EC", NULL);
    } else {
        *why = "not an RSA or EC key";
        goto done;
    }
    params = OSSL_PARAM_BLD_to_param(bld);
    if (!ctx || !params || EVP_PKEY_fromdata_init(ctx) <= 0 ||
        EVP_PKEY_fromdata(ctx, &pkey, EVP_PKEY_PUBLIC_KEY, params) <= 0) {
        *why = "a key OpenSSL does not accept";
        goto done;
    }
    bio = BIO_new(BIO_s_mem());
    if (!bio || !PEM_write_bio_PUBKEY(bio, pkey)) {
        *why = "a key that cannot be written as PEM";
        goto done;
    }
    len = BIO_get_mem_data(bio, &data);
    pem = ncmp_xmalloc((size_t)len + 1);
    memcpy(pem, data, (size_t)len);
    pem[len] = '\0';
done:
    BIO_free(bio);
    EVP_PKEY_free(pkey);
    EVP_PKEY_CTX_free(ctx);
    OSSL_PARAM_free(params);
    OSSL_PARAM_BLD_free(bld);
    BN_free(n);
    BN_free(e);
    BN_free(x);
    BN_free(y);
    return pem;
}

/* The signing keys of a JWK set; keys for encryption (`use` other than
 * "sig") and unusable ones are skipped, with a warning for the latter. */
static int keys_from_json(key_set *out, json_object *doc, const char *source, ncmp_err *err)
{
    json_object *arr;
    size_t n;

    memset(out, 0, sizeof(*out));
    if (!json_object_is_type(doc, json_type_object) ||
        !json_object_object_get_ex(doc, "keys", &arr) || !json_object_is_type(arr, json_type_array))
        return ncmp_err_set(err, NCMP_ERR_REJECT, "%s: not a JWK set (no \"keys\" array)", source);
    n = json_object_array_length(arr);
    out->keys = ncmp_xcalloc(n ? n : 1, sizeof(jwt_key));
    for (size_t i = 0; i < n; i++) {
        json_object *jwk = json_object_array_get_idx(arr, i);
        const char *use = jwk_str(jwk, "use"), *kid = jwk_str(jwk, "kid"), *why;
        jwt_key *k = &out->keys[out->n];

        if (use && strcmp(use, "sig") != 0)
            continue;
        k->pem = jwk_pem(jwk, &k->ec, &k->alg, &why);
        if (!k->pem) {
            log_warn("jwt", "jwks source=%s key=%zu kid=%s skipped: %s", source, i, kid ? kid : "-",
                     why);
            continue;
        }
        k->kid = kid ? ncmp_xstrdup(kid) : NULL;
        out->n++;
    }
    if (out->n == 0) {
        keys_free(out);
        return ncmp_err_set(err, NCMP_ERR_REJECT, "%s: no usable signing key in the JWK set",
                            source);
    }
    return 0;
}

static size_t on_body(char *data, size_t size, size_t nmemb, void *arg)
{
    ncmp_buf *b = arg;
    if (b->len + size * nmemb > 1024 * 1024)
        return 0; /* no key set is that large */
    ncmp_buf_append(b, data, size * nmemb);
    return size * nmemb;
}

/* GET the URL's key set into *out. */
static int keys_fetch(const char *url, key_set *out, ncmp_err *err)
{
    CURL *c = curl_easy_init();
    ncmp_buf body = NCMP_BUF_INIT;
    json_object *doc = NULL;
    long status = 0;
    CURLcode rc;
    int ret = -1;

    if (!c)
        return ncmp_err_set(err, NCMP_ERR_RETRY, "curl_easy_init failed");
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_TIMEOUT, 10L);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &body);
    rc = curl_easy_perform(c);
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
    if (rc != CURLE_OK) {
        ncmp_err_set(err, NCMP_ERR_RETRY, "jwks-url: %s", curl_easy_strerror(rc));
    } else if (status != 200) {
        ncmp_err_set(err, NCMP_ERR_RETRY, "jwks-url: HTTP status %ld", status);
    } else {
        ncmp_buf_append_char(&body, '\0');
        doc = json_tokener_parse(body.data);
        if (!doc)
            ncmp_err_set(err, NCMP_ERR_RETRY, "jwks-url: the answer is not JSON");
        else
            ret = keys_from_json(out, doc, "jwks-url", err);
    }
    json_object_put(doc);
    ncmp_buf_free(&body);
    curl_easy_cleanup(c);
    return ret;
}

/* Fetch the URL's keys and take them; on failure keep the old ones. */
static void url_refresh(ncmp_jwt *v)
{
    key_set fresh, old;
    ncmp_err err = {0};

    if (keys_fetch(v->url, &fresh, &err) != 0) {
        log_warn("jwt", "jwks fetch failed, the keys stay as they were: %s", err.msg);
        return;
    }
    pthread_rwlock_wrlock(&v->lock);
    old = v->url_keys;
    v->url_keys = fresh;
    pthread_rwlock_unlock(&v->lock);
    log_info("jwt", "jwks fetched keys=%zu", fresh.n);
    keys_free(&old);
}

static void *refresh_main(void *arg)
{
    ncmp_jwt *v = arg;
    double last = ncmp_now_ms();
    int have = v->url_keys.n > 0;

    pthread_mutex_lock(&v->mu);
    while (!v->stop) {
        /* without keys yet, or when asked for, fetch again soon; else after the period */
        double after_ms = have && !v->refetch ? v->refresh_s * 1000.0 : REFETCH_MIN_S * 1000.0;
        double left_ms = last + after_ms - ncmp_now_ms();
        if (left_ms > 0) {
            struct timespec ts = ncmp_deadline_ts(CLOCK_REALTIME, left_ms);
            pthread_cond_timedwait(&v->cond, &v->mu, &ts);
            continue;
        }
        v->refetch = 0;
        pthread_mutex_unlock(&v->mu);
        url_refresh(v);
        last = ncmp_now_ms();
        pthread_rwlock_rdlock(&v->lock);
        have = v->url_keys.n > 0;
        pthread_rwlock_unlock(&v->lock);
        pthread_mutex_lock(&v->mu);
    }
    pthread_mutex_unlock(&v->mu);
    return NULL;
}

int ncmp_jwt_new(ncmp_jwt **out, const ncmp_jwt_options *o, ncmp_err *err)
{
    ncmp_jwt *v;
    int have_file = o->jwks_file && *o->jwks_file, have_url = o->jwks_url && *o->jwks_url;
    int have_secret = o->hs256_secret && *o->hs256_secret;

    *out = NULL;
    if (!have_file && !have_url && !have_secret)
        return ncmp_err_set(err, NCMP_ERR_FATAL,
                            "JWT authentication needs a key: set http.jwt-jwks-file, "
                            "http.jwt-jwks-url or http.jwt-hs256-secret");
    if (have_url && strncmp(o->jwks_url, "http://", 7) != 0 &&
        strncmp(o->jwks_url, "https://", 8) != 0)
        return ncmp_err_set(err, NCMP_ERR_FATAL, "http.jwt-jwks-url must be an http(s) URL");
    v = ncmp_xcalloc(1, sizeof(*v));
    v->url = have_url ? ncmp_xstrdup(o->jwks_url) : NULL;
    v->issuer = ncmp_xstrdup(o->issuer ? o->issuer : "");
    v->audience = ncmp_xstrdup(o->audience ? o->audience : "");
    if (have_secret) {
        v->secret_len = (int)strlen(o->hs256_secret);
        v->secret = (unsigned char *)ncmp_xstrdup(o->hs256_secret);
    }
    v->refresh_s = o->jwks_refresh_s > 0 ? o->jwks_refresh_s : 300;
    v->skew_s = o->clock_skew_s > 0 ? o->clock_skew_s : 0;
    pthread_rwlock_init(&v->lock, NULL);
    pthread_mutex_init(&v->mu, NULL);
    pthread_cond_init(&v->cond, NULL);
    if (have_file) {
        json_object *doc = json_object_from_file(o->jwks_file);
        int rc;
        if (!doc) {
            ncmp_jwt_free(v);
            return ncmp_err_set(err, NCMP_ERR_FATAL, "http.jwt-jwks-file %s: not readable JSON",
                                o->jwks_file);
        }
        rc = keys_from_json(&v->file_keys, doc, "http.jwt-jwks-file", err);
        json_object_put(doc);
        if (rc != 0) {
            err->cls = NCMP_ERR_FATAL;
            ncmp_jwt_free(v);
            return -1;
        }
    }
    if (have_url) {
        url_refresh(v);
        if (pthread_create(&v->thread, NULL, refresh_main, v) != 0) {
            ncmp_jwt_free(v);
            return ncmp_err_set(err, NCMP_ERR_FATAL, "cannot start the jwks refresh thread");
        }
        v->has_thread = 1;
    }
    log_info("jwt", "bearer tokens checked: file-keys=%zu url=%s hs256=%s issuer=%s audience=%s",
             v->file_keys.n, have_url ? "yes" : "no", have_secret ? "yes" : "no",
             *v->issuer ? v->issuer : "-", *v->audience ? v->audience : "-");
    *out = v;
    return 0;
}

void ncmp_jwt_free(ncmp_jwt *v)
{
    if (!v)
        return;
    if (v->has_thread) {
        pthread_mutex_lock(&v->mu);
        v->stop = 1;
        pthread_cond_signal(&v->cond);
        pthread_mutex_unlock(&v->mu);
        pthread_join(v->thread, NULL);
    }
    keys_free(&v->file_keys);
    keys_free(&v->url_keys);
    pthread_rwlock_destroy(&v->lock);
    pthread_mutex_destroy(&v->mu);
    pthread_cond_destroy(&v->cond);
    if (v->secret) {
        memset(v->secret, 0, (size_t)v->secret_len);
        free(v->secret);
    }
    free(v->url);
    free(v->issuer);
    free(v->audience);
    free(v);
}

/* --- checking a token ---------------------------------------------------- */

static int fail(char *why, size_t whylen, const char *msg)
{
    snprintf(why, whylen, "%s", msg);
    return -1;
}

/* Does this key serve alg? */
static int key_fits(const jwt_key *k, jwt_alg_t alg, const char *kid)
{
    int rsa_alg = alg == JWT_ALG_RS256 || alg == JWT_ALG_RS384 || alg == JWT_ALG_RS512;

    if (kid && (!k->kid || strcmp(k->kid, kid) != 0))
        return 0;
    if (k->ec)
        return k->alg == alg;
    return rsa_alg && (k->alg == JWT_ALG_INVAL || k->alg == alg);
}

/* Try the keys of s that fit; *jwt set on the first that verifies. */
static void try_keys(const key_set *s, const char *token, jwt_alg_t alg, const char *kid,
                     int *tried, jwt_t **jwt)
{
    for (size_t i = 0; i < s->n && !*jwt; i++) {
        if (!key_fits(&s->keys[i], alg, kid))
            continue;
        (*tried)++;
        if (jwt_decode(jwt, token, (const unsigned char *)s->keys[i].pem,
                       (int)strlen(s->keys[i].pem)) != 0)
            *jwt = NULL;
    }
}

/* The header's alg and kid (kid may be NULL); -1 when it is no JSON
 * object with a string alg. *hdr owns the strings. */
static int header_read(const char *token, size_t len, json_object **hdr, const char **alg,
                       const char **kid)
{
    size_t n;
    unsigned char *raw = b64url_decode(token, len, &n);
    json_object *a, *k;

    *hdr = raw ? json_tokener_parse((const char *)raw) : NULL;
    free(raw);
    if (!*hdr || !json_object_is_type(*hdr, json_type_object) ||
        !json_object_object_get_ex(*hdr, "alg", &a) || !json_object_is_type(a, json_type_string))
        return -1;
    *alg = json_object_get_string(a);
    *kid = json_object_object_get_ex(*hdr, "kid", &k) && json_object_is_type(k, json_type_string)
               ? json_object_get_string(k)
               : NULL;
    return 0;
}

static int aud_has(json_object *aud, const char *want)
{
    if (json_object_is_type(aud, json_type_string))
        return strcmp(json_object_get_string(aud), want) == 0;
    if (json_object_is_type(aud, json_type_array))
        for (size_t i = 0; i < json_object_array_length(aud); i++) {
            json_object *a = json_object_array_get_idx(aud, i);
            if (json_object_is_type(a, json_type_string) &&
                strcmp(json_object_get_string(a), want) == 0)
                return 1;
        }
    return 0;
}

static int is_number(json_object *o)
{
    return json_object_is_type(o, json_type_int) || json_object_is_type(o, json_type_double);
}

/* exp, nbf, iss, aud of a verified token. */
static int claims_check(ncmp_jwt *v, jwt_t *jwt, time_t now, char *why, size_t whylen)
{
    char *text = jwt_get_grants_json(jwt, NULL);
    json_object *c = text ? json_tokener_parse(text) : NULL, *o;
    int rc = -1;

    free(text);
    if (!c || !json_object_is_type(c, json_type_object))
        fail(why, whylen, "The claims are not a JSON object");
    else if (!json_object_object_get_ex(c, "exp", &o) || !is_number(o))
        fail(why, whylen, "The token has no exp claim");
    else if (json_object_get_double(o) + v->skew_s <= (double)now)
        fail(why, whylen, "Jwt expired");
    else if (json_object_object_get_ex(c, "nbf", &o) &&
             (!is_number(o) || json_object_get_double(o) - v->skew_s > (double)now))
        fail(why, whylen, "Jwt used before its nbf time");
    else if (*v->issuer && (!json_object_object_get_ex(c, "iss", &o) ||
                            !json_object_is_type(o, json_type_string) ||
                            strcmp(json_object_get_string(o), v->issuer) != 0))
        fail(why, whylen, "The iss claim is not valid");
    else if (*v->audience && (!json_object_object_get_ex(c, "aud", &o) || !aud_has(o, v->audience)))
        fail(why, whylen, "The aud claim is not valid");
    else
        rc = 0;
    json_object_put(c);
    return rc;
}

int ncmp_jwt_check(ncmp_jwt *v, const char *token, time_t now, char *why, size_t whylen)
{
    size_t len = strlen(token);
    const char *dot = memchr(token, '.', len), *alg_s, *kid;
    json_object *hdr = NULL;
    jwt_alg_t alg;
    jwt_t *jwt = NULL;
    int tried = 0, rc;

    if (len > MAX_TOKEN)
        return fail(why, whylen, "The token is too long");
    if (!dot || !memchr(dot + 1, '.', len - (size_t)(dot + 1 - token)) ||
        strchr(strchr(dot + 1, '.') + 1, '.'))
        return fail(why, whylen, "Malformed token: not three dot-separated parts");
    if (header_read(token, (size_t)(dot - token), &hdr, &alg_s, &kid) != 0) {
        json_object_put(hdr);
        return fail(why, whylen, "Malformed token: the header is not JSON with an alg");
    }
    alg = jwt_str_alg(alg_s);
    if (alg == JWT_ALG_NONE || alg == JWT_ALG_INVAL || alg == JWT_ALG_HS384 ||
        alg == JWT_ALG_HS512 || (alg == JWT_ALG_HS256 && !v->secret)) {
        snprintf(why, whylen, "Unsupported algorithm");
        json_object_put(hdr);
        return -1;
    }
    if (alg == JWT_ALG_HS256) {
        tried = 1;
        if (jwt_decode(&jwt, token, v->secret, v->secret_len) != 0)
            jwt = NULL;
    } else {
        try_keys(&v->file_keys, token, alg, kid, &tried, &jwt);
        if (v->url) {
            pthread_rwlock_rdlock(&v->lock);
            try_keys(&v->url_keys, token, alg, kid, &tried, &jwt);
            pthread_rwlock_unlock(&v->lock);
        }
    }
    json_object_put(hdr);
    if (!tried) {
        if (v->url && kid) { /* perhaps a new key: fetch the set again soon */
            pthread_mutex_lock(&v->mu);
            v->refetch = 1;
            pthread_cond_signal(&v->cond);
            pthread_mutex_unlock(&v->mu);
        }
        return fail(why, whylen, "No key for the token's alg and kid");
    }
    if (!jwt || jwt_get_alg(jwt) != alg) {
        jwt_free(jwt);
        return fail(why, whylen, "Invalid signature or malformed claims");
    }
    rc = claims_check(v, jwt, now, why, whylen);
    jwt_free(jwt);
    return rc;
}
