/* Unit tests of lib/ncmp_jwt.c and of bearer authentication in
 * lib/ncmp_http.c: keys made with OpenSSL in the test, tokens signed with
 * libjwt, checked directly and through a server on a loopback port. */
#include <criterion/criterion.h>
#include <curl/curl.h>
#include <jwt.h>
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ncmp_buf.h"
#include "ncmp_http.h"
#include "ncmp_jwt.h"
#include "ncmp_log.h"
#include "unit_leak.h"

TestSuite(ncmp_jwt, .fini = unit_leak_check);

#define SECRET   "a-shared-secret-of-32-bytes-or-more!"
#define ISSUER   "https://idp.example/realms/cps-realm"
#define AUDIENCE "ncmp"

/* --- keys and tokens ------------------------------------------------------ */

typedef struct keys {
    EVP_PKEY *rsa, *ec, *other_rsa;
    char *rsa_pem, *ec_pem, *other_rsa_pem; /* private keys */
    char jwks_path[64];
    char *jwks; /* the JWK set of rsa (kid "r1") and ec (kid "e1") */
} keys;

static char *private_pem(EVP_PKEY *k)
{
    BIO *b = BIO_new(BIO_s_mem());
    char *data, *out;
    long len;

    cr_assert(PEM_write_bio_PrivateKey(b, k, NULL, NULL, 0, NULL, NULL));
    len = BIO_get_mem_data(b, &data);
    out = ncmp_xmalloc((size_t)len + 1);
    memcpy(out, data, (size_t)len);
    out[len] = '\0';
    BIO_free(b);
    return out;
}

/* A big number of the key as a base64url JSON member. */
static void b64url_member(ncmp_buf *b, const char *name, EVP_PKEY *k, const char *param, int len)
{
    BIGNUM *bn = NULL;
    unsigned char raw[600], enc[820];
    int n;

    cr_assert(EVP_PKEY_get_bn_param(k, param, &bn), "no %s", param);
    n = len ? BN_bn2binpad(bn, raw, len) : BN_bn2bin(bn, raw);
    BN_free(bn);
    n = EVP_EncodeBlock(enc, raw, n);
    while (n > 0 && enc[n - 1] == '=')
        n--;
    for (int i = 0; i < n; i++)
        enc[i] = enc[i] == '+' ? '-' : enc[i] == '/' ? '_' : enc[i];
    ncmp_buf_appendf(b, ",\"%s\":\"%.*s\"", name, n, enc);
}

static void keys_make(keys *k)
{
    ncmp_buf j = NCMP_BUF_INIT;
    FILE *f;
    int fd;

    k->rsa = EVP_PKEY_Q_keygen(NULL, NULL, "RSA", (size_t)2048);
    k->other_rsa = EVP_PKEY_Q_keygen(NULL, NULL, "RSA", (size_t)2048);
    k->ec = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");
    cr_assert(k->rsa && k->other_rsa && k->ec);
    k->rsa_pem = private_pem(k->rsa);
    k->other_rsa_pem = private_pem(k->other_rsa);
    k->ec_pem = private_pem(k->ec);
    ncmp_buf_append_str(&j, "{\"keys\":[{\"kty\":\"RSA\",\"kid\":\"r1\",\"use\":\"sig\"");
    b64url_member(&j, "n", k->rsa, OSSL_PKEY_PARAM_RSA_N, 0);
    b64url_member(&j, "e", k->rsa, OSSL_PKEY_PARAM_RSA_E, 0);
    ncmp_buf_append_str(&j, "},{\"kty\":\"EC\",\"kid\":\"e1\",\"crv\":\"P-256\",\"alg\":\"ES256\"");
    b64url_member(&j, "x", k->ec, OSSL_PKEY_PARAM_EC_PUB_X, 32);
    b64url_member(&j, "y", k->ec, OSSL_PKEY_PARAM_EC_PUB_Y, 32);
    /* an encryption key and a key of an unknown type are skipped */
    ncmp_buf_append_str(&j, "},{\"kty\":\"RSA\",\"kid\":\"enc\",\"use\":\"enc\",\"n\":\"AQAB\","
                            "\"e\":\"AQAB\"},{\"kty\":\"OKP\",\"kid\":\"o1\"}]}");
    k->jwks = j.data;
    snprintf(k->jwks_path, sizeof(k->jwks_path), "/tmp/ncmp-jwks-XXXXXX");
    fd = mkstemp(k->jwks_path);
    cr_assert_geq(fd, 0);
    f = fdopen(fd, "w");
    fputs(k->jwks, f);
    fclose(f);
}

static void keys_free(keys *k)
{
    unlink(k->jwks_path);
    EVP_PKEY_free(k->rsa);
    EVP_PKEY_free(k->other_rsa);
    EVP_PKEY_free(k->ec);
    free(k->rsa_pem);
    free(k->other_rsa_pem);
    free(k->ec_pem);
    free(k->jwks);
}

/* A token: claims (JSON) signed with alg and key; kid NULL for none. */
static char *sign(jwt_alg_t alg, const char *key, const char *kid, const char *claims)
{
    jwt_t *j = NULL;
    char *t, *out;

    cr_assert_eq(jwt_new(&j), 0);
    cr_assert_eq(jwt_add_grants_json(j, claims), 0, "%s", claims);
    if (kid)
        cr_assert_eq(jwt_add_header(j, "kid", kid), 0);
    cr_assert_eq(jwt_set_alg(j, alg, (const unsigned char *)key, key ? (int)strlen(key) : 0), 0);
    t = jwt_encode_str(j);
    cr_assert_not_null(t);
    out = ncmp_xstrdup(t);
    free(t);
    jwt_free(j);
    return out;
}

/* Claims valid now, with exp and nbf moved by the given seconds. */
static char *claims(long exp_in, long nbf_in, const char *iss, const char *aud_json)
{
    ncmp_buf b = NCMP_BUF_INIT;
    time_t now = time(NULL);

    ncmp_buf_appendf(&b, "{\"sub\":\"cps-user\",\"exp\":%ld,\"nbf\":%ld,\"iss\":\"%s\",\"aud\":%s}",
                     (long)now + exp_in, (long)now + nbf_in, iss, aud_json);
    return b.data;
}

static char *good_claims(void)
{
    return claims(300, -10, ISSUER, "[\"account\",\"" AUDIENCE "\"]");
}

static ncmp_jwt *verifier(const keys *k)
{
    ncmp_jwt_options o = {.jwks_file = k->jwks_path,
                          .hs256_secret = SECRET,
                          .issuer = ISSUER,
                          .audience = AUDIENCE,
                          .clock_skew_s = 60};
    ncmp_jwt *v = NULL;
    ncmp_err err = {0};

    ncmp_log_setup(NCMP_LOG_ERROR, NCMP_LOG_TEXT, NULL);
    cr_assert_eq(ncmp_jwt_new(&v, &o, &err), 0, "%s", err.msg);
    return v;
}

/* ncmp_jwt_check of a token; why[] gets the reason. */
static int check(ncmp_jwt *v, const char *token, char *why, size_t len)
{
    why[0] = '\0';
    return ncmp_jwt_check(v, token, time(NULL), why, len);
}

/* --- the verifier --------------------------------------------------------- */

Test(ncmp_jwt, valid_rs256_es256_hs256_tokens_are_accepted)
{
    keys k;
    keys_make(&k);
    ncmp_jwt *v = verifier(&k);
    char *c = good_claims(), why[160];
    char *rs = sign(JWT_ALG_RS256, k.rsa_pem, "r1", c);
    char *es = sign(JWT_ALG_ES256, k.ec_pem, "e1", c);
    char *hs = sign(JWT_ALG_HS256, SECRET, NULL, c);
    char *rs_nokid = sign(JWT_ALG_RS256, k.rsa_pem, NULL, c);
    char *aud_str = claims(300, -10, ISSUER, "\"" AUDIENCE "\"");
    char *es_aud_str = sign(JWT_ALG_ES256, k.ec_pem, "e1", aud_str);

    cr_expect_eq(check(v, rs, why, sizeof(why)), 0, "RS256: %s", why);
    cr_expect_eq(check(v, es, why, sizeof(why)), 0, "ES256: %s", why);
    cr_expect_eq(check(v, hs, why, sizeof(why)), 0, "HS256: %s", why);
    cr_expect_eq(check(v, rs_nokid, why, sizeof(why)), 0, "RS256 without kid: %s", why);
    cr_expect_eq(check(v, es_aud_str, why, sizeof(why)), 0, "aud as a string: %s", why);
    free(rs);
    free(es);
    free(hs);
    free(rs_nokid);
    free(es_aud_str);
    free(aud_str);
    free(c);
    ncmp_jwt_free(v);
    keys_free(&k);
}

Test(ncmp_jwt, claims_out_of_time_or_for_others_are_refused)
{
    keys k;
    keys_make(&k);
    ncmp_jwt *v = verifier(&k);
    struct {
        char *claims;
        const char *reason;
    } cases[] = {
        {claims(-61, -600, ISSUER, "\"" AUDIENCE "\""), "expired"},
        /* nbf a minute past the 60 s skew: still refused when the cases
         * are checked seconds after they were made */
        {claims(600, 120, ISSUER, "\"" AUDIENCE "\""), "nbf"},
        {claims(300, -10, "https://other.example", "\"" AUDIENCE "\""), "iss"},
        {claims(300, -10, ISSUER, "[\"account\",\"other\"]"), "aud"},
        {claims(300, -10, ISSUER, "\"other\""), "aud"},
        {ncmp_xstrdup("{\"sub\":\"x\",\"iss\":\"" ISSUER "\",\"aud\":\"" AUDIENCE "\"}"), "exp"},
    };
    char why[160];

    /* within the clock skew: still valid */
    char *skew = claims(-30, 30, ISSUER, "\"" AUDIENCE "\"");
    char *t = sign(JWT_ALG_RS256, k.rsa_pem, "r1", skew);
    cr_expect_eq(check(v, t, why, sizeof(why)), 0, "within the skew: %s", why);
    free(t);
    free(skew);
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        t = sign(JWT_ALG_RS256, k.rsa_pem, "r1", cases[i].claims);
        cr_expect_eq(check(v, t, why, sizeof(why)), -1, "case %zu (%s) accepted", i,
                     cases[i].reason);
        cr_expect(strstr(why, cases[i].reason) != NULL, "case %zu: %s", i, why);
        free(t);
        free(cases[i].claims);
    }
    ncmp_jwt_free(v);
    keys_free(&k);
}

Test(ncmp_jwt, wrong_signatures_alg_none_and_malformed_tokens_are_refused)
{
    keys k;
    keys_make(&k);
    ncmp_jwt *v = verifier(&k);
    char *c = good_claims(), why[160];
    char *other = sign(JWT_ALG_RS256, k.other_rsa_pem, "r1", c);
    char *other_nokid = sign(JWT_ALG_RS256, k.other_rsa_pem, NULL, c);
    char *hs_wrong = sign(JWT_ALG_HS256, "another-secret-another-secret-xx", NULL, c);
    char *none = sign(JWT_ALG_NONE, NULL, "r1", c);
    char *unknown_kid = sign(JWT_ALG_RS256, k.rsa_pem, "r9", c);
    char *es_as_rs = sign(JWT_ALG_ES256, k.ec_pem, "r1", c);
    /* the RSA public key of the set as an HMAC secret (alg confusion) */
    BIO *b = BIO_new(BIO_s_mem());
    char *pub, *pubcopy, *confused, *tampered;
    long len;

    PEM_write_bio_PUBKEY(b, k.rsa);
    len = BIO_get_mem_data(b, &pub);
    pubcopy = ncmp_xmalloc((size_t)len + 1);
    memcpy(pubcopy, pub, (size_t)len);
    pubcopy[len] = '\0';
    BIO_free(b);
    confused = sign(JWT_ALG_HS256, pubcopy, "r1", c);
    /* a valid token whose payload is swapped for another one */
    {
        char *good = sign(JWT_ALG_RS256, k.rsa_pem, "r1", c);
        char *evil_claims = claims(99999, -10, ISSUER, "\"" AUDIENCE "\"");
        char *evil = sign(JWT_ALG_RS256, k.other_rsa_pem, "r1", evil_claims);
        ncmp_buf t = NCMP_BUF_INIT;
        const char *g1 = strchr(good, '.'), *g2 = strrchr(good, '.');
        const char *e1 = strchr(evil, '.'), *e2 = strrchr(evil, '.');
        ncmp_buf_append(&t, good, (size_t)(g1 - good));
        ncmp_buf_append(&t, e1, (size_t)(e2 - e1));
        ncmp_buf_append_str(&t, g2);
        tampered = t.data;
        free(good);
        free(evil);
        free(evil_claims);
    }

    const char *bad[] = {other,
                         other_nokid,
                         hs_wrong,
                         none,
                         unknown_kid,
                         es_as_rs,
                         confused,
                         tampered,
                         "",
                         "not-a-token",
                         "a.b",
                         "a.b.c.d",
                         "!!!.e30.sig",
                         "e30.e30.sig",                           /* header without alg */
                         "eyJhbGciOiJIUzI1NiJ9.bm90IGpzb24.c2ln", /* payload not JSON */
                         "eyJhbGciOiJSUzI1NiJ9..",
                         "bm90IGpzb24.e30."};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        cr_expect_eq(check(v, bad[i], why, sizeof(why)), -1, "token %zu accepted", i);
        cr_expect(why[0] != '\0', "token %zu: no reason", i);
    }
    cr_expect(strstr(hs_wrong, "..") == NULL);
    check(v, none, why, sizeof(why));
    cr_expect_str_eq(why, "Unsupported algorithm");
    check(v, other, why, sizeof(why));
    cr_expect(strstr(why, "signature") != NULL, "%s", why);
    free(c);
    free(other);
    free(other_nokid);
    free(hs_wrong);
    free(none);
    free(unknown_kid);
    free(es_as_rs);
    free(confused);
    free(pubcopy);
    free(tampered);
    ncmp_jwt_free(v);
    keys_free(&k);
}

Test(ncmp_jwt, hs256_is_refused_without_a_secret_and_bad_key_sources_are_fatal)
{
    keys k;
    keys_make(&k);
    ncmp_jwt_options o = {.jwks_file = k.jwks_path};
    ncmp_jwt *v = NULL;
    ncmp_err err = {0};
    char *c = good_claims(), *hs = sign(JWT_ALG_HS256, SECRET, NULL, c), why[160];

    ncmp_log_setup(NCMP_LOG_ERROR, NCMP_LOG_TEXT, NULL);
    cr_assert_eq(ncmp_jwt_new(&v, &o, &err), 0, "%s", err.msg);
    cr_expect_eq(check(v, hs, why, sizeof(why)), -1);
    ncmp_jwt_free(v);

    memset(&o, 0, sizeof(o));
    cr_expect_eq(ncmp_jwt_new(&v, &o, &err), -1, "no key source");
    cr_expect_eq(err.cls, NCMP_ERR_FATAL);
    o.jwks_file = "/nonexistent/jwks.json";
    cr_expect_eq(ncmp_jwt_new(&v, &o, &err), -1, "missing file");
    cr_expect_eq(err.cls, NCMP_ERR_FATAL);
    o.jwks_file = NULL;
    o.jwks_url = "file:///etc/passwd";
    cr_expect_eq(ncmp_jwt_new(&v, &o, &err), -1, "not http(s)");
    cr_expect_null(v);
    free(c);
    free(hs);
    keys_free(&k);
}

/* --- through the HTTP server ---------------------------------------------- */

typedef struct reply {
    long status;
    ncmp_buf body, headers;
} reply;

static size_t on_data(char *p, size_t size, size_t n, void *arg)
{
    ncmp_buf_append(arg, p, size * n);
    return size * n;
}

/* GET path with an Authorization header (NULL: none). */
static void get(int port, const char *path, const char *authorization, reply *r)
{
    CURL *c = curl_easy_init();
    char url[512];
    struct curl_slist *h = NULL;
    ncmp_buf a = NCMP_BUF_INIT;

    memset(r, 0, sizeof(*r));
    snprintf(url, sizeof(url), "http://127.0.0.1:%d%s", port, path);
    if (authorization) {
        ncmp_buf_appendf(&a, "Authorization: %s", authorization);
        h = curl_slist_append(h, a.data);
    }
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &r->body);
    curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_data);
    curl_easy_setopt(c, CURLOPT_HEADERDATA, &r->headers);
    curl_easy_setopt(c, CURLOPT_TIMEOUT, 20L);
    cr_assert_eq(curl_easy_perform(c), CURLE_OK, "GET %s failed", path);
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r->status);
    ncmp_buf_append_char(&r->headers, '\0');
    curl_slist_free_all(h);
    curl_easy_cleanup(c);
    ncmp_buf_free(&a);
}

static void reply_free(reply *r)
{
    ncmp_buf_free(&r->body);
    ncmp_buf_free(&r->headers);
}

static void h_ok(ncmp_http_request *req, void *arg)
{
    ncmp_http_respond(req, 200, "application/json", "{\"ok\":true}", 11);
}

static void h_jwks(ncmp_http_request *req, void *arg)
{
    const char *jwks = arg;
    ncmp_http_respond(req, 200, "application/json", jwks, strlen(jwks));
}

static ncmp_http_server *server(ncmp_jwt *v)
{
    ncmp_http_options o = {.host = "127.0.0.1",
                           .threads = 2,
                           .max_body_bytes = 1000,
                           .connection_timeout_s = 10,
                           .jwt = v};
    ncmp_http_server *srv = NULL;
    ncmp_err err = {0};

    cr_assert_eq(ncmp_http_server_new(&srv, &o, &err), 0, "%s", err.msg);
    ncmp_http_route(srv, "GET", "/ncmp/v1/ch/{ref}", h_ok, NULL);
    ncmp_http_route_open(srv, "GET", "/actuator/health", h_ok, NULL);
    ncmp_http_route(srv, "GET", "/actuatorx", h_ok, NULL);
    cr_assert_eq(ncmp_http_server_start(srv, &err), 0, "%s", err.msg);
    return srv;
}

Test(ncmp_jwt, server_answers_401_with_bearer_challenge_and_leaves_actuator_open)
{
    keys k;
    keys_make(&k);
    ncmp_jwt *v = verifier(&k);
    ncmp_http_server *srv = server(v);
    int port = ncmp_http_server_port(srv);
    char *c = good_claims(), *expired_c = claims(-3600, -7200, ISSUER, "\"" AUDIENCE "\"");
    char *good = sign(JWT_ALG_ES256, k.ec_pem, "e1", c);
    char *expired = sign(JWT_ALG_RS256, k.rsa_pem, "r1", expired_c);
    char *wrong = sign(JWT_ALG_RS256, k.other_rsa_pem, "r1", c);
    ncmp_buf a = NCMP_BUF_INIT;
    reply r;

    ncmp_buf_appendf(&a, "Bearer %s", good);
    get(port, "/ncmp/v1/ch/x", a.data, &r);
    cr_expect_eq(r.status, 200, "a valid token: %s", r.headers.data);
    reply_free(&r);

    get(port, "/ncmp/v1/ch/x", NULL, &r);
    cr_expect_eq(r.status, 401);
    cr_expect(strstr(r.headers.data, "WWW-Authenticate: Bearer realm=\"ncmpd\"\r\n") != NULL, "%s",
              r.headers.data);
    cr_expect(strstr(r.body.data, "401") != NULL);
    reply_free(&r);

    const char *bad[] = {expired, wrong, "garbage", "a.b.c"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        ncmp_buf_reset(&a);
        ncmp_buf_appendf(&a, "Bearer %s", bad[i]);
        get(port, "/ncmp/v1/ch/x", a.data, &r);
        cr_expect_eq(r.status, 401, "token %zu: %ld", i, r.status);
        cr_expect(strstr(r.headers.data, "WWW-Authenticate: Bearer realm=\"ncmpd\", "
                                         "error=\"invalid_token\", error_description=\"") != NULL,
                  "token %zu: %s", i, r.headers.data);
        reply_free(&r);
    }
    get(port, "/ncmp/v1/ch/x", "Basic Y3BzdXNlcjpjcHNyMGNrcyE=", &r);
    cr_expect_eq(r.status, 401, "Basic credentials in jwt mode");
    reply_free(&r);

    get(port, "/actuator/health", NULL, &r);
    cr_expect_eq(r.status, 200, "actuator is open");
    reply_free(&r);
    get(port, "/actuatorx", NULL, &r);
    cr_expect_eq(r.status, 401, "only the /actuator path itself and below are open");
    reply_free(&r);

    ncmp_http_server_destroy(srv);
    ncmp_jwt_free(v);
    free(c);
    free(expired_c);
    free(good);
    free(expired);
    free(wrong);
    ncmp_buf_free(&a);
    keys_free(&k);
}

Test(ncmp_jwt, keys_come_from_a_jwks_url)
{
    keys k;
    keys_make(&k);
    ncmp_http_options so = {.host = "127.0.0.1", .threads = 1, .max_body_bytes = 1000};
    ncmp_http_server *idp = NULL;
    ncmp_err err = {0};
    char url[128], why[160];
    ncmp_jwt *v = NULL;

    ncmp_log_setup(NCMP_LOG_ERROR, NCMP_LOG_TEXT, NULL);
    cr_assert_eq(ncmp_http_server_new(&idp, &so, &err), 0, "%s", err.msg);
    ncmp_http_route(idp, "GET", "/realms/cps-realm/protocol/openid-connect/certs", h_jwks, k.jwks);
    cr_assert_eq(ncmp_http_server_start(idp, &err), 0, "%s", err.msg);
    snprintf(url, sizeof(url), "http://127.0.0.1:%d/realms/cps-realm/protocol/openid-connect/certs",
             ncmp_http_server_port(idp));
    ncmp_jwt_options o = {.jwks_url = url, .audience = AUDIENCE};
    cr_assert_eq(ncmp_jwt_new(&v, &o, &err), 0, "%s", err.msg);

    char *c = good_claims(), *rs = sign(JWT_ALG_RS256, k.rsa_pem, "r1", c);
    char *wrong = sign(JWT_ALG_RS256, k.other_rsa_pem, "r1", c);
    cr_expect_eq(check(v, rs, why, sizeof(why)), 0, "%s", why);
    cr_expect_eq(check(v, wrong, why, sizeof(why)), -1);
    ncmp_jwt_free(v);
    ncmp_http_server_destroy(idp);
    free(c);
    free(rs);
    free(wrong);
    keys_free(&k);
}
